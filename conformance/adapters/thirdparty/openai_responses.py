"""openai-python's Responses accumulator: ``client.responses.stream(...)`` iterated to the
end, then ``get_final_response()``.

What the caller gets is the final response. Its rules, in the pinned
``lib/streaming/responses/_responses.py``: the ``output`` of ``response.completed`` is the
final one whenever it is a list, even an empty one (only ``null`` is rebuilt from the done
items, 496-498), so an empty terminal snapshot empties the answer; deltas are routed by
``output_index`` alone (``_get_output_item``, 507-513: an unopened index raises); and
``get_final_response()`` raises a plain ``RuntimeError`` when no ``response.completed`` came
(91-93): after ``response.incomplete``, ``response.failed`` or a cut stream. An ``error``
event raises ``APIError`` only in the nested shape (``_streaming.py:96-108`` looks for
``data["error"]``); a flat one passes as an event and the turn then has no completion.
"""

from __future__ import annotations

import openai

from ...events import RunCase
from ...options import RunOptions
from .common import SyncShim, hello, native_policy, native_retry, sdk_retries
from .responses import DIALECTS, ResponseTurn, response_params, response_turn
from .retry_policies import openai_sdk


class OpenAIResponsesShim(SyncShim):
    def __init__(self, options: RunOptions) -> None:
        self.hello = hello(
            "openai-python responses.stream",
            openai.__version__,
            reasoning=True,
            retry_policy=native_policy(options, openai_sdk()),  # the client's default
            dialects=DIALECTS,
        )
        self.native_retry = native_retry(options)

    def assemble(self, case: RunCase) -> ResponseTurn:
        client = openai.OpenAI(
            base_url=case.base_url,
            api_key=case.api_key,
            timeout=case.idle_timeout_s,
            **sdk_retries(self.native_retry),
        )
        with client, client.responses.stream(**response_params(case)) as stream:
            for _ in stream:
                pass
            return response_turn(stream.get_final_response())


def factory(options: RunOptions) -> OpenAIResponsesShim:
    return OpenAIResponsesShim(options)
