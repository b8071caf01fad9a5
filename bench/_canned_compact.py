"""`python -m bench._canned_compact serve ...`: the daemon, except that Compact returns the response
of its first call again without running the pipeline or writing anything.

B5 runs it to measure the floor of the service path for a Compact response — request decoding,
the servicer's wrappers, serialising ~110 KB of attachments and decisions, decoding them in the
client — apart from the pipeline and the write-through that a real Compact adds.
"""

from __future__ import annotations

import sys

from postcompact import cli, server
from postcompact.v1 import postcompact_pb2 as pb

_real = server.Servicer._compact
_first: dict[str, pb.CompactResponse] = {}


async def canned(
    self: server.Servicer, req: pb.CompactRequest, preview: bool
) -> pb.CompactResponse:
    """The first answer again, as the message (serialised per call by the servicer, as every
    answer was when this floor was set; the real Compact now answers bytes it built)."""
    if "response" not in _first:
        _first["response"] = pb.CompactResponse.FromString(await _real(self, req, preview))
    return _first["response"]


if __name__ == "__main__":
    server.Servicer._compact = canned  # type: ignore[method-assign, assignment]
    sys.exit(cli.main(sys.argv[1:]))
