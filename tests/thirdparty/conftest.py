"""Shim tests import third-party libraries that only their tox environments install
(``tox -e shim-openai`` …, which set STREAMCONFORM_THIRDPARTY=1). Everywhere else this
directory is not collected, so the main test suite never imports a shim."""

from __future__ import annotations

import os

if not os.environ.get("STREAMCONFORM_THIRDPARTY"):
    collect_ignore_glob = ["test_*.py", "shim_cases.py"]
