"""Undoing an answer's content coding, read by read and within a bound (sans-IO).

The recording proxy asks for an uncompressed body, but an upstream may compress it anyway;
a fixture holds the text a client reads, so the proxy records the body decoded. gzip and
deflate are decoded with the standard library; any other coding (``br``, ``zstd``, several
stacked) is named as the reason there is no recorded body.
"""

from __future__ import annotations

import zlib
from typing import Protocol

from .errors import FakeProviderError

_GZIP_WBITS = 16 + zlib.MAX_WBITS  # a gzip header and trailer
_RAW_WBITS = -zlib.MAX_WBITS  # "deflate" as some servers send it: no zlib header


class ContentCodingError(FakeProviderError, ValueError):
    """The body does not decode as its coding says."""


class BodyDecoder(Protocol):
    def decode(self, data: bytes, limit: int) -> bytes:
        """The decoded bytes of ``data``, at most ``limit`` (at least 1) of them: what an
        input decodes to past ``limit`` is never produced (a small input may expand a lot)."""
        ...


class _Identity:
    def decode(self, data: bytes, limit: int) -> bytes:
        return data[:limit]


class _Inflate:
    """gzip, or deflate with or without its zlib header (told by the first two bytes)."""

    def __init__(self, gzip: bool) -> None:
        self._gzip = gzip
        self._inflater: zlib._Decompress | None = None

    def decode(self, data: bytes, limit: int) -> bytes:
        if self._inflater is None:
            if not data:
                return b""
            self._inflater = zlib.decompressobj(self._wbits(data))
        try:
            return self._inflater.decompress(data, limit)
        except zlib.error as error:
            coding = "gzip" if self._gzip else "deflate"
            raise ContentCodingError(f"the {coding} body does not decode ({error})") from None

    def _wbits(self, first: bytes) -> int:
        if self._gzip:
            return _GZIP_WBITS
        # RFC 1950: compression method 8, and the first two bytes a multiple of 31.
        header = len(first) >= 2 and first[0] & 0x0F == 8 and (first[0] << 8 | first[1]) % 31 == 0
        return zlib.MAX_WBITS if header else _RAW_WBITS


DECODED_CODINGS = ("gzip", "x-gzip", "deflate")


def body_decoder(content_encoding: str) -> BodyDecoder | str:
    """The decoder of a ``Content-Encoding`` value, or why the body cannot be decoded."""
    coding = content_encoding.strip().lower()
    if coding in ("", "identity"):
        return _Identity()
    if coding in DECODED_CODINGS:
        return _Inflate(gzip=coding != "deflate")
    return (
        f"the body is content-encoding {coding!r}, which record does not decode (only "
        f"{', '.join(DECODED_CODINGS)}): it was relayed as sent, not recorded"
    )
