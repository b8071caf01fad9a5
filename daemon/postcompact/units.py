"""Units and integer bounds the daemon's modules share, each named once: `MIB`, `DAY_MS`, and the
largest values of the protobuf integer types (`INT32_MAX`, `INT64_MAX`)."""

from __future__ import annotations

__all__ = ["DAY_MS", "INT32_MAX", "INT64_MAX", "MIB"]

MIB = 1024 * 1024
DAY_MS = 86_400_000
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
