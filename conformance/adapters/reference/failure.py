"""The failure value shared by the HTTP classifier, the translator's caller and the retry policy."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Failure:
    """Why an attempt failed, as the reference adapter reports it."""

    code: str
    message: str
    status: int | None = None
    # Provider-requested wait, already validated (finite, > 0); None when absent or unusable.
    retry_after_ms: float | None = None
    # The provider's `x-should-retry` where the dialect's SDKs obey it; None when unsaid.
    should_retry: bool | None = None
