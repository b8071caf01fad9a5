"""Restoration knobs: `pb.RestorePolicy` layers resolved into one `Policy`.

Layers are applied in order (daemon config → session → request) over the profile's defaults; a
field set in a later layer overrides. The budgets default to Claude Code's constants
(docs/claude-code.md §3, §5); `oversize`, `malware_reminder` and `carry_read_state` default to
what the session's profile says (`profiles.Rules`). Unset markers (None) mean "the profile's
template" (`render.Templates`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any, Literal

from postcompact import profiles, render
from postcompact.errors import InvalidArgument
from postcompact.v1 import postcompact_pb2 as pb

__all__ = [
    "ENCODINGS",
    "FILE_MARKER_PLACEHOLDERS",
    "MAX_FILE_SIZE_BYTES",
    "Policy",
    "profile_policy",
    "resolve_policy",
    "validate_policy",
]

ENCODINGS = ("o200k_base", "cl100k_base")
FILE_MARKER_PLACEHOLDERS = frozenset({"path", "shown_lines", "total_lines", "next_offset"})

_IntField = Literal[
    "max_read_tokens",
    "max_files",
    "file_token_budget",
    "max_tokens_per_file",
    "max_tokens_per_skill",
    "skills_token_budget",
    "max_file_size_bytes",
]
_StrField = Literal["encoding", "skill_truncation_marker", "file_truncation_marker"]
_INT_FIELDS: tuple[_IntField, ...] = (
    "max_read_tokens",
    "max_files",
    "file_token_budget",
    "max_tokens_per_file",
    "max_tokens_per_skill",
    "skills_token_budget",
    "max_file_size_bytes",
)
_STR_FIELDS: tuple[_StrField, ...] = (
    "encoding",
    "skill_truncation_marker",
    "file_truncation_marker",
)
# Zero is meaningless for these (nothing could ever be restored, or truncation cannot fit).
_POSITIVE_FIELDS = frozenset(
    {"max_tokens_per_file", "max_tokens_per_skill", "max_file_size_bytes", "max_read_tokens"}
)
# The largest file read whole: past it a whole read holds the file (and its numbered copy) in
# memory for nothing a client could be sent (docs/reliability.md).
MAX_FILE_SIZE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Policy:
    max_files: int = 5
    file_token_budget: int = 50_000
    max_tokens_per_file: int = 5_000
    max_tokens_per_skill: int = 5_000
    skills_token_budget: int = 25_000
    oversize: pb.OversizePolicy.ValueType = pb.OVERSIZE_POLICY_TRUNCATE_HEAD
    skill_truncation_marker: str | None = None  # None = Templates.skill_truncation_marker
    file_truncation_marker: str | None = None  # None = Templates.file_truncation_marker
    counter: pb.TokenCounter.ValueType = pb.TOKEN_COUNTER_ROUGH
    encoding: str = "o200k_base"
    max_file_size_bytes: int = 262_144
    max_read_tokens: int = 25_000
    malware_reminder: bool = True
    carry_read_state: bool = False
    restore_seen: bool = False
    ranking: pb.FileRanking.ValueType = pb.FILE_RANKING_RECENCY
    left_out_index: bool = False
    complement: pb.HarnessRule.ValueType = pb.HARNESS_RULE_NONE
    match_budget: pb.HarnessRule.ValueType = pb.HARNESS_RULE_NONE

    @property
    def complement_on(self) -> bool:
        """Complement mode: only what Claude Code's own rule leaves out (restore/harness.py)."""
        return self.complement == pb.HARNESS_RULE_CLAUDE_CODE

    @property
    def exact(self) -> bool:
        return self.counter == pb.TOKEN_COUNTER_EXACT


def _bad(reason: str, field: str, message: str) -> InvalidArgument:
    return InvalidArgument(reason, f"policy.{field} {message}", {"field": f"policy.{field}"})


def validate_policy(layer: pb.RestorePolicy) -> None:
    """Raise InvalidArgument (naming the field) for a value no layer may carry."""
    for name in _INT_FIELDS:
        if not layer.HasField(name):
            continue
        value = getattr(layer, name)
        if value < 0:
            raise _bad("NEGATIVE_BUDGET", name, f"must not be negative, got {value}")
        if value == 0 and name in _POSITIVE_FIELDS:
            raise _bad("INVALID_POLICY", name, "must be positive, got 0")
        if name == "max_file_size_bytes" and value > MAX_FILE_SIZE_BYTES:
            raise _bad(
                "INVALID_POLICY",
                name,
                f"must be at most {MAX_FILE_SIZE_BYTES} (64 MiB), got {value}",
            )
    if layer.oversize not in pb.OversizePolicy.values():
        raise _bad("INVALID_POLICY", "oversize", f"is not a known value: {layer.oversize}")
    if layer.ranking not in pb.FileRanking.values():
        raise _bad("INVALID_POLICY", "ranking", f"is not a known value: {layer.ranking}")
    for rule in ("complement", "match_budget"):
        value = getattr(layer, rule)
        if value not in pb.HarnessRule.values():
            raise _bad("INVALID_POLICY", rule, f"is not a known value: {value}")
    if layer.counter not in pb.TokenCounter.values():
        raise _bad("INVALID_POLICY", "counter", f"is not a known value: {layer.counter}")
    if layer.HasField("encoding") and layer.encoding not in ENCODINGS:
        raise _bad(
            "UNKNOWN_ENCODING",
            "encoding",
            f"must be one of {', '.join(ENCODINGS)}, got {layer.encoding!r}",
        )
    if layer.HasField("file_truncation_marker"):
        _check_marker(layer.file_truncation_marker)
    if layer.HasField("skill_truncation_marker") and "\0" in layer.skill_truncation_marker:
        raise _bad("INVALID_POLICY", "skill_truncation_marker", "contains a NUL byte")


def _check_marker(marker: str) -> None:
    # The same rule as configured templates: known placeholders only, no format specs or
    # conversions (a "{path:>99999999999}" would fail, or exhaust memory, at render time).
    try:
        render.check_template("file_truncation_marker", marker, FILE_MARKER_PLACEHOLDERS)
    except render.TemplateError as exc:
        detail = str(exc).removeprefix("template file_truncation_marker").lstrip(": ")
        raise _bad("INVALID_POLICY", "file_truncation_marker", detail) from None


def profile_policy(profile: pb.Profile.ValueType) -> Policy:
    """The defaults of `profile`: the constants, and the profile's own rules."""
    r = profiles.rules(profile)
    return Policy(
        max_files=r.max_files,
        file_token_budget=r.file_token_budget,
        max_tokens_per_file=r.max_tokens_per_file,
        oversize=r.oversize,
        malware_reminder=r.malware_reminder,
        carry_read_state=r.carry_read_state,
        restore_seen=r.restore_seen,
        match_budget=r.match_budget,
    )


def resolve_policy(profile: pb.Profile.ValueType, *layers: pb.RestorePolicy) -> Policy:
    """Validate each layer and apply them in order over the defaults of `profile`."""
    # Policies are immutable and the layers rarely change: resolve each distinct stack once.
    return _resolve_serialized(int(profile), tuple(layer.SerializeToString() for layer in layers))


@functools.lru_cache(maxsize=256)
def _resolve_serialized(profile: int, layers: tuple[bytes, ...]) -> Policy:
    return _resolve(profile, *(pb.RestorePolicy.FromString(raw) for raw in layers))


def _resolve(profile: int, *layers: pb.RestorePolicy) -> Policy:
    policy = profile_policy(profile)  # type: ignore[arg-type]
    for layer in layers:
        validate_policy(layer)
        changes: dict[str, Any] = {
            name: getattr(layer, name) for name in _INT_FIELDS if layer.HasField(name)
        }
        if layer.oversize != pb.OVERSIZE_POLICY_UNSPECIFIED:
            changes["oversize"] = layer.oversize
        if layer.counter != pb.TOKEN_COUNTER_UNSPECIFIED:
            changes["counter"] = layer.counter
        for str_name in _STR_FIELDS:
            if layer.HasField(str_name):
                changes[str_name] = getattr(layer, str_name)
        if layer.ranking != pb.FILE_RANKING_UNSPECIFIED:
            changes["ranking"] = layer.ranking
        if layer.complement != pb.HARNESS_RULE_UNSPECIFIED:
            changes["complement"] = layer.complement
        if layer.match_budget != pb.HARNESS_RULE_UNSPECIFIED:
            changes["match_budget"] = layer.match_budget
        elif layer.HasField("file_token_budget"):
            # A budget set without match_budget is the one meant: it is not replaced by the
            # harness's spend an earlier layer (or the profile) asked for.
            changes["match_budget"] = pb.HARNESS_RULE_NONE
        for flag in ("malware_reminder", "carry_read_state", "restore_seen", "left_out_index"):
            if layer.HasField(flag):
                changes[flag] = getattr(layer, flag)
        if changes:  # most layers are empty; dataclasses.replace costs ~20 µs
            policy = replace(policy, **changes)
    return policy
