"""Units and integer bounds the daemon's modules share, each named once: `MIB`, and the largest
values of the protobuf integer types (`INT32_MAX`, `INT64_MAX`)."""

from __future__ import annotations

__all__ = ["INT32_MAX", "INT64_MAX", "MIB"]

MIB = 1024 * 1024
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
