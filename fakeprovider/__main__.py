"""``python -m fakeprovider`` is the ``fakeprovider`` command."""

from .cli import main

main()
