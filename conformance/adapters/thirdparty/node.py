"""Shims for JavaScript libraries: programs in ``shims/js/`` that speak protocol v1 (1.1,
``dialects``, for the Anthropic clients).

They need a Node.js of at least :data:`MIN_NODE_MAJOR` and the packages that
``shims/js/package-lock.json`` pins; ``scripts/install-js-shims`` installs both, the Node
from the npm registry into ``.node/`` when the machine's is older (``scripts/install-node``).
Both live in the checkout, not in the wheel: where they are missing a shim is simply not
installed, like a Python shim whose extra is not.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ...options import RunOptions
from ..base import AdapterLoadError
from ..subprocess import SubprocessAdapterSession
from .common import native_retry

CHECKOUT = Path(__file__).resolve().parents[3]
JS_SHIMS = CHECKOUT / "shims" / "js"
PROJECT_NODE = CHECKOUT / ".node" / "bin" / "node"  # where scripts/install-node puts it
NODE_ENV = "STREAMCONFORM_NODE"  # names the node to use instead
MIN_NODE_MAJOR = 22
NATIVE_RETRY_FLAG = "--native-retry"
SETUP = "scripts/install-js-shims (or tox -e shim-js)"
_VERSION = re.compile(r"v(\d+)\.")
_VERSION_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class NodeShim:
    name: str  # the matrix column
    title: str  # what the column drives
    script: str  # its entry point, in shims/js/
    packages: tuple[str, ...]  # npm packages whose versions the matrix records, library first

    @property
    def installed(self) -> bool:
        return node_binary() is not None and all(
            _manifest(package).is_file() for package in self.packages
        )

    @property
    def setup(self) -> str:
        """How to install what the shim needs."""
        return SETUP

    def versions(self) -> dict[str, str]:
        return dict(_versions(self.packages))

    def invocation(self, options: RunOptions) -> str:
        """The ``conformance run`` words that select this shim (for reproducers)."""
        return f"--adapter-cmd {shlex.quote(self.command(options))}"

    def command(self, options: RunOptions) -> str:
        """The shim's command line; the library's own retries on for the retry profile."""
        node = node_binary()
        if node is None:
            raise AdapterLoadError(f"no Node.js >= {MIN_NODE_MAJOR} for {self.name}: run {SETUP}")
        argv = [str(node), str(JS_SHIMS / self.script)]
        return shlex.join([*argv, NATIVE_RETRY_FLAG] if native_retry(options) else argv)

    async def open(self, options: RunOptions) -> SubprocessAdapterSession:
        return await SubprocessAdapterSession.start(self.command(options))


def _manifest(package: str) -> Path:
    return JS_SHIMS / "node_modules" / package / "package.json"


def _versions(packages: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    for package in packages:
        try:
            version = json.loads(_manifest(package).read_text(encoding="utf-8"))["version"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        yield package, str(version)


@functools.cache
def node_binary() -> Path | None:
    """The Node.js the JS shims run with: $STREAMCONFORM_NODE if set, else the project's
    own (.node/bin/node), else the one on PATH; None unless it is at least version 22."""
    named = os.environ.get(NODE_ENV)
    candidates = [named] if named else [str(PROJECT_NODE), shutil.which("node")]
    return next((Path(c) for c in candidates if c and node_major(c) >= MIN_NODE_MAJOR), None)


def node_major(node: str) -> int:
    """The major version of ``node``, 0 when it does not run or says something else."""
    try:
        done = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=_VERSION_TIMEOUT_S
        )
    except (OSError, subprocess.SubprocessError):
        return 0
    match = _VERSION.match(done.stdout.strip())
    return int(match.group(1)) if match and done.returncode == 0 else 0
