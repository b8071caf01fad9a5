"""ImportTranscript's request as the daemon takes it: the transcript a view of the bytes gRPC
received, never copied (docs/reliability.md, "Transcripts").

A transcript is up to `max_message_bytes` (32 MiB), and every copy of it is one C call holding
the GIL: measured here under load, parsing the request (upb copies the field into its arena)
took 20-104 ms and reading `req.transcript` (a new bytes object) 20-54 ms, each a stall of
every other call. `split` reads the request's wire format instead: the transcript field (1,
bytes) is left where it is and only the other fields are parsed as the request message.
"""

from __future__ import annotations

from dataclasses import dataclass

from postcompact.v1 import postcompact_pb2 as pb

__all__ = ["TranscriptRequest", "split"]

_TRANSCRIPT = 1  # ImportTranscriptRequest.transcript, a bytes field


@dataclass(frozen=True, slots=True)
class TranscriptRequest:
    req: pb.ImportTranscriptRequest  # every field but the transcript
    transcript: memoryview  # of the bytes gRPC received


def _varint(raw: bytes, pos: int) -> tuple[int, int] | None:
    value = shift = 0
    while pos < len(raw) and shift < 64:
        b = raw[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7
    return None


def split(raw: bytes) -> tuple[bytes, int, int] | None:
    """The request `raw` without its transcript field, and where the transcript's bytes are in
    `raw` (the last occurrence wins, as parsing it would have it); None when `raw` is not a
    well-formed protobuf wire (then parsed whole, for its error)."""
    rest = bytearray()
    start = end = 0
    pos = 0
    while pos < len(raw):
        key = _varint(raw, pos)
        if key is None:
            return None
        tag, at = key
        field, wire = tag >> 3, tag & 7
        content = at
        if wire == 0:
            skipped = _varint(raw, at)
            if skipped is None:
                return None
            at = skipped[1]
        elif wire == 1:
            at += 8
        elif wire == 2:
            size = _varint(raw, at)
            if size is None:
                return None
            content, at = size[1], size[1] + size[0]
        elif wire == 5:
            at += 4
        else:
            return None  # groups: no field of this message is one
        if at > len(raw):
            return None
        if field == _TRANSCRIPT and wire == 2:
            start, end = content, at
        else:
            rest += raw[pos:at]
        pos = at
    return bytes(rest), start, end
