"""``python -m conformance`` is the ``conformance`` command."""

from .cli import main

main()
