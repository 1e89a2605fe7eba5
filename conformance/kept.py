"""The one account of what a case keeps: every byte the results will hold is charged here.

A case's events, its adapter's stderr, the provider's request log and a gateway's captured
answer all draw on the same per-case allowance (``MAX_CASE_BYTES``), and the run adds up
what its cases kept against ``MAX_RUN_BYTES``. Whatever did not fit is counted by kind in
``cut``, which the case's result states, so a cut result never reads as a whole one.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from fakeprovider.registry import RequestRecord

MAX_CASE_BYTES = 4 * 1024 * 1024
"""Bytes one case keeps, whatever their kind: events as JSON lines first, then the adapter's
stderr, the requests the provider received (heads and bodies) and a gateway's answer as
captured."""

_MIB = 1024 * 1024

Kind = Literal["events", "stderr", "request-heads", "request-bodies", "gateway-capture"]


@dataclass
class Kept:
    """What one case has kept so far, and what of each kind it cut."""

    max_bytes: int = MAX_CASE_BYTES
    bytes: int = 0
    cut: dict[Kind, int] = field(default_factory=dict)

    @property
    def room(self) -> int:
        return max(0, self.max_bytes - self.bytes)

    def charge(self, kind: Kind, size: int) -> int:
        """Keep as much of ``size`` bytes of ``kind`` as there is room for: how many."""
        kept = min(size, self.room)
        self.bytes += kept
        self.refuse(kind, size - kept)
        return kept

    def refuse(self, kind: Kind, size: int) -> None:
        """Count ``size`` bytes of ``kind`` as cut."""
        if size > 0:
            self.cut[kind] = self.cut.get(kind, 0) + size

    def tail(self, kind: Kind, text: str) -> str:
        """The end of ``text`` that fits (stderr: its last lines say most)."""
        data = text.encode("utf-8", errors="replace")
        kept = self.charge(kind, len(data))
        return text if kept == len(data) else data[len(data) - kept :].decode(errors="ignore")

    def leading(self, kind: Kind, items: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """The first of ``items`` that fit, each charged as its JSON line; the rest cut (a
        gateway's answer read as events: its bytes are charged once as captured, and what
        the reading makes of them is kept too)."""
        kept_items: list[dict[str, Any]] = []
        full = False  # a prefix, never a sequence with holes
        for item in items:
            size = len(json.dumps(item, separators=(",", ":"))) + 1
            full = full or size > self.room
            if full:
                self.refuse(kind, size)
            else:
                self.bytes += size
                kept_items.append(item)
        return kept_items

    def requests(self, records: Iterable[RequestRecord]) -> list[dict[str, Any]]:
        """The request log as the results keep it: each record whose method, path and
        headers fit (the rest left out, their heads and bodies counted as cut), its body as
        far as there is room, ``body_cut_bytes`` saying how much of it was left out."""
        kept_records = []
        for record in records:
            body = base64.b64decode(record.body_base64)
            head = len(record.method) + len(record.path)
            head += sum(len(name) + len(value) for name, value in record.headers)
            if head > self.room:
                self.refuse("request-heads", head)
                self.refuse("request-bodies", len(body))
                continue
            self.charge("request-heads", head)
            kept = record.model_dump(mode="json")
            size = self.charge("request-bodies", len(body))
            if size < len(body):
                kept["body"] = body[:size].decode("utf-8", errors="replace")
                kept["body_base64"] = base64.b64encode(body[:size]).decode("ascii")
                kept["body_cut_bytes"] = len(body) - size
            kept_records.append(kept)
        return kept_records


def cut_summary(cut: dict[str, int]) -> str:
    """What a case's result left out, for a reader (``request-bodies: 5 MiB``)."""
    return "; ".join(f"{kind}: {byte_count(size)}" for kind, size in cut.items())


def byte_count(size: int) -> str:
    """``size`` for a reader: whole MiB as such (``4 MiB``), else in bytes."""
    return f"{size // _MIB} MiB" if size and size % _MIB == 0 else f"{size} bytes"
