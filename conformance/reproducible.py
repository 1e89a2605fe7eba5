"""Results without what the clock decides: what two runs of the same cases must share.

A results file records time as well as behaviour. These fields depend on the clock or on
chance, and :func:`reproducible_json` blanks them (sets them to ``null``):

- when things happened: ``started_at``, ``finished_at``, and each request's
  ``received_at`` and ``ended_at``;
- how long they took: each case's ``duration_s``, the waits measured at the provider
  (``retry.waits[].measured_ms``) and every duration quoted in a verdict's reason
  (``"waits 8 ms in [1, 1]"`` becomes ``"waits … ms in [1, 1]"``);
- the waits the adapter chose, which random jitter or an HTTP-date ``Retry-After`` read
  against the clock make vary: ``delay_ms`` of ``retry`` events and
  ``retry.waits[].announced_ms``;
- the port of the run's loopback server: the value of each request's ``Host`` header.

Everything else — verdicts, events, request bodies, the catalogue — is a function of the
fixtures (and the seed) and of the adapter: two runs against a deterministic adapter give
byte-identical output, and any other difference is a bug.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .results import RunResult

_QUOTED_DURATION = re.compile(r"\d+(?:\.\d+)? ms\b")


def reproducible_json(result: RunResult) -> str:
    """The results JSON (as ``--json`` writes it) with the clock's fields blanked."""
    data = json.loads(result.to_json())
    data["started_at"] = data["finished_at"] = None
    for case in data["cases"]:
        _blank_case(case)
    return json.dumps(data, indent=2, ensure_ascii=False)


def _blank_case(case: dict[str, Any]) -> None:
    case["duration_s"] = None
    for request in case["requests"]:
        request["received_at"] = request["ended_at"] = None
        request["headers"] = [
            [name, None if name.lower() == "host" else value] for name, value in request["headers"]
        ]
    for event in case["events"]:
        if event["type"] == "retry":
            event["delay_ms"] = None
    for wait in (case.get("retry") or {}).get("waits", []):
        wait["measured_ms"] = wait["announced_ms"] = None
    for verdict in case["verdicts"].values():
        verdict["reason"] = _QUOTED_DURATION.sub("… ms", verdict["reason"])
