"""A cap on the size of a model's answer, counted after decompression.

A Messages or Chat Completions answer is a few kilobytes; a server that streams
forever, or sends a small gzip body that inflates to gigabytes, would otherwise hold
the whole thing in memory (the SDKs read a body whole before parsing it). The
deadline transport reads the body itself, decoding it as it arrives, and stops as
soon as the decoded bytes pass the cap: memory stays near the cap whatever the
server sends. Only the encodings it asks for (`gzip`, `deflate`) are decoded; a
server that answers in another encoding is refused rather than trusted.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

DEFAULT_MAX_RESPONSE_BYTES = 8 * 2**20  # 8 MB: a thousand times a large model answer
ACCEPTED_ENCODINGS = "gzip, deflate"  # what we can decode with a bound on the output
MAX_RESPONSE_HEADER = "x-memeval-max-response"  # per call, removed before sending


class ResponseTooLarge(Exception):
    """The answer passed the cap (or came in an encoding we cannot bound)."""


def too_large_text(cap: int, why: str = "") -> str:
    return (f"memeval: the server's answer {why or 'passed'} the response size cap "
            f"({cap / 2**20:g} MB once decoded) and was dropped; a model answer is a few KB, "
            "so the server is misbehaving. Raise the cap with --max-response-mb MB "
            "(or $MEMEVAL_MAX_RESPONSE_MB)")


class CappedBody:
    """Collects a body's chunks as they arrive, decoded, refusing past `cap` bytes.

    Args:
        cap: most decoded bytes kept.
        encoding: the answer's `content-encoding` header (empty for none).
    """

    def __init__(self, cap: int, encoding: str) -> None:
        self.cap = cap
        self._parts: list[bytes] = []
        self._size = 0
        self._decode = _decoder(encoding.strip().lower(), cap)

    def feed(self, chunk: bytes) -> None:
        for piece in self._decode(chunk):
            self._keep(piece)

    def finish(self) -> bytes:
        for piece in self._decode(b""):
            self._keep(piece)
        return b"".join(self._parts)

    def _keep(self, piece: bytes) -> None:
        self._size += len(piece)
        if self._size > self.cap:
            raise ResponseTooLarge(too_large_text(self.cap))
        self._parts.append(piece)


Decoder = Callable[[bytes], list[bytes]]  # b"" means the body ended


def _decoder(encoding: str, cap: int) -> Decoder:
    if encoding in ("", "identity"):
        return lambda chunk: [chunk] if chunk else []
    if encoding in ("gzip", "x-gzip"):
        return _ZlibDecoder(zlib.MAX_WBITS | 16, cap)
    if encoding == "deflate":  # zlib-wrapped, as the RFC says; raw deflate as servers send
        return _ZlibDecoder(zlib.MAX_WBITS, cap, fallback_wbits=-zlib.MAX_WBITS)
    raise ResponseTooLarge(too_large_text(
        cap, f"came in content-encoding {encoding!r} (asked for {ACCEPTED_ENCODINGS}), so "
             "its size could not be bounded; it was not read, against"))


class _ZlibDecoder:
    """Inflates a gzip or deflate body, never more than `cap` + 1 bytes per step."""

    def __init__(self, wbits: int, cap: int, fallback_wbits: int | None = None) -> None:
        self._d = zlib.decompressobj(wbits)
        self._cap, self._fallback = cap, fallback_wbits

    def __call__(self, chunk: bytes) -> list[bytes]:
        if not chunk:
            return [self._d.flush()]
        try:
            out = [self._d.decompress(chunk, self._cap + 1)]
        except zlib.error:
            if self._fallback is None:
                raise
            self._d, self._fallback = zlib.decompressobj(self._fallback), None
            out = [self._d.decompress(chunk, self._cap + 1)]
        self._fallback = None  # only the first chunk tells which deflate it is
        size = len(out[0])
        while self._d.unconsumed_tail and size <= self._cap:
            out.append(self._d.decompress(self._d.unconsumed_tail, self._cap + 1))
            size += len(out[-1])
        return out  # past the cap: the caller refuses it; the rest is never inflated
