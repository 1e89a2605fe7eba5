"""OpenAI Responses translator mutants: `ResponsesTranslator` with one rule overridden.

Each class overrides the smallest method of the reference translator that holds the rule it
breaks, and says in its docstring which real-world code it imitates (reference dialects.md
§3.3, §3.7 and §4.G).
"""

from __future__ import annotations

from typing import Any

from typing_extensions import override

from conformance.adapters.reference.payload import InvalidEventError
from conformance.adapters.reference.responses import OutputItem, ResponsesTranslator
from conformance.events import Event, Finish

# --- RS-G: which item an event belongs to, and the end ---------------------------------------


class RoutesByItemId(ResponsesTranslator):
    """An event whose `item_id` is not its item's `id` is refused: openai-node's accumulator
    throws "expected item_id 'X', got 'Y'" on GitHub Copilot's rotating ids (§3.7)."""

    @override
    def _item_event(self, kind: str, document: dict[str, Any]) -> list[Event]:
        index = document.get("output_index")
        opened = self._items.get(index) if isinstance(index, int) else None
        if opened is not None and document.get("item_id", opened.item_id) != opened.item_id:
            raise InvalidEventError(f"expected item_id {opened.item_id!r}")
        return super()._item_event(kind, document)


class ReadsPastTerminal(ResponsesTranslator):
    """The terminal event is noted and the body read to its end: what follows it is applied,
    and the last terminal is the one that counts (relays that send `completed` twice, G20)."""

    _terminal_seen: tuple[str, dict[str, Any]] | None = None

    @override
    def _terminal(self, kind: str, response: dict[str, Any]) -> list[Event]:
        self._terminal_seen = (kind, response)
        return []

    @override
    def eof(self) -> list[Event]:
        if self._terminal_seen is not None and not self.finished:
            return super()._terminal(*self._terminal_seen)
        return super().eof()


class EofAsComplete(ResponsesTranslator):
    """A body that ends before a terminal event is the response so far: openai-node's
    `finalResponse()` resolves the accumulated in-progress snapshot (§3.7)."""

    @override
    def eof(self) -> list[Event]:
        return self._terminal("response.completed", {})


# --- RS-C: what an item holds ----------------------------------------------------------------


class TrustsTerminalSnapshot(ResponsesTranslator):
    """The terminal response is the answer: a `response.completed` with `output: []` after
    good deltas is an empty, successful reply (openai-python's `get_final_response()` and
    openai-node's snapshot, behind seven gateways' empty terminal output, §4.G)."""

    @override
    def _terminal(self, kind: str, response: dict[str, Any]) -> list[Event]:
        if kind == "response.completed" and response.get("output") == []:
            self._read_usage(response.get("usage"))
            self._blocks = []
            return self._succeed(Finish(reason="stop"))
        return super()._terminal(kind, response)


class EncryptedContentDropped(ResponsesTranslator):
    """A reasoning item's `encrypted_content` is not kept: under `store: false` the next turn
    is refused ("Item with id 'rs_…' not found", §3.5)."""

    @override
    def _seal(self, opened: OutputItem, encrypted: object, events: list[Event]) -> None:
        return None


class IncompleteUsageLost(ResponsesTranslator):
    """`response.incomplete` is read for its reason only: the usage it bills is lost (§4.G,
    usage lost on incomplete)."""

    @override
    def _terminal(self, kind: str, response: dict[str, Any]) -> list[Event]:
        if kind == "response.incomplete":
            response = {key: value for key, value in response.items() if key != "usage"}
        return super()._terminal(kind, response)


class IncompleteAsStop(ResponsesTranslator):
    """`response.incomplete` ends the turn like `completed`: a truncated answer is a plain
    stop (a client that reads only the terminal event's arrival)."""

    @override
    def _resolved_finish(self, kind: str, response: dict[str, Any]) -> Finish:
        if kind == "response.incomplete":
            return super()._resolved_finish("response.completed", response)
        return super()._resolved_finish(kind, response)


# --- RS-T, RS-H -----------------------------------------------------------------------------


class ItemIdAsCallId(ResponsesTranslator):
    """The item `id` (`fc_…`) is reported as the tool-call id: the next turn's
    `function_call_output` pairs with nothing (crewAI #6657, CLIProxyAPI #5692, §3.3)."""

    @override
    def _identity_of(self, item: dict[str, Any]) -> tuple[str | None, str | None]:
        _, name = super()._identity_of(item)
        item_id = item.get("id")
        return (item_id if isinstance(item_id, str) and item_id else None), name


class NameFromDeltasOnly(ResponsesTranslator):
    """A call's name is assembled from its deltas, which carry none: the host looks up
    `tool "" not found` (voocel/litellm #4, §3.3)."""

    @override
    def _identity_of(self, item: dict[str, Any]) -> tuple[str | None, str | None]:
        call_id, _ = super()._identity_of(item)
        return call_id, ""


class FlatErrorSwallowed(ResponsesTranslator):
    """An `error` event in the documented flat shape is not raised: openai-python raises only
    on a payload with a top-level `error` key, and yields the flat one as an ordinary event
    (openai-python #2487, §3.7)."""

    @override
    def _error(self, document: dict[str, Any]) -> list[Event]:
        if not isinstance(document.get("error"), dict):
            return []
        return super()._error(document)
