"""anthropic-python's own accumulator: ``client.messages.stream(...)`` iterated to the end,
then ``get_final_message()``.

What the caller gets is the final message: its ``content`` blocks (a tool's ``input`` as the
SDK parsed it, reported as JSON text), ``usage`` and ``stop_reason``. The SDK's own failures
are the outcome: an ``IndexError`` for a delta to a block never started
(``lib/streaming/_messages.py:496``), the ``APIStatusError`` it raises for an ``event:
error`` on the 200 response (``_streaming.py:99-112``), and a stream cut before
``message_stop`` returned as a message with no stop reason (``finish: stop``).
"""

from __future__ import annotations

import anthropic

from ...events import RunCase
from ...options import RunOptions
from .common import SyncShim, hello, native_policy, native_retry, sdk_retries
from .messages import DIALECTS, MessageTurn, content_blocks, message_params, message_usage
from .retry_policies import anthropic_sdk


class AnthropicSDKShim(SyncShim):
    def __init__(self, options: RunOptions) -> None:
        self.hello = hello(
            "anthropic-python messages.stream",
            anthropic.__version__,
            reasoning=True,
            retry_policy=native_policy(options, anthropic_sdk()),  # the client's default
            dialects=DIALECTS,
        )
        self.native_retry = native_retry(options)

    def assemble(self, case: RunCase) -> MessageTurn:
        client = anthropic.Anthropic(
            base_url=case.base_url,
            api_key=case.api_key,
            timeout=case.idle_timeout_s,
            **sdk_retries(self.native_retry),
        )
        with client, client.messages.stream(**message_params(case)) as stream:
            for _ in stream:
                pass
            message = stream.get_final_message()
        return MessageTurn(
            blocks=content_blocks(message.content),
            usage=message_usage(message.usage),
            stop_reason=message.stop_reason,
        )


def factory(options: RunOptions) -> AnthropicSDKShim:
    return AnthropicSDKShim(options)
