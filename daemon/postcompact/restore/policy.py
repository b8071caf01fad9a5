"""Restoration knobs: `pb.RestorePolicy` layers resolved into one `Policy`.

`Policy` is the policy table: one row per field of the proto's `RestorePolicy`, each annotated by
`knob(...)` with its value, its bounds and unit, one line of documentation, its config key when
that is not its name, and its value under the profiles where it differs. Joined at import with the
field's descriptor (from the generated `postcompact_pb2`), the rows (`FIELDS`) give:

- the validation of every layer (`validate_policy`: a request's, a session's, `[policy]`'s);
- the keys of config.toml's `[policy]` and how each value is read (config.py);
- the defaults of each profile (`profile_policy`): a row's value is Claude Code 2.1.88's (the
  reference postcompact was first built from, docs/claude-code.md §3, §5), which every profile
  takes unless the row names its own; `Policy()` is that profile's policy;
- the "Policy fields" table of docs/profiles.md and the `[policy]` example of config.py's
  docstring (`scripts/policy_table.py`, checked by `make lint`).

Adding a field: the proto, one row here, then `make policy-table`. Layers are applied in order
(daemon config → session → request) over the profile's defaults; a field set in a later layer
overrides. Unset markers (None) mean "the profile's template" (`render.Templates`).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeVar

from google.protobuf.descriptor import EnumDescriptor, FieldDescriptor

from postcompact import profiles, render
from postcompact.core import ENCODINGS
from postcompact.errors import InvalidArgument
from postcompact.units import MIB
from postcompact.v1 import postcompact_pb2 as pb

__all__ = [
    "FIELDS",
    "FILE_MARKER_PLACEHOLDERS",
    "MAX_FILE_SIZE_BYTES",
    "Knob",
    "Policy",
    "PolicyField",
    "knob",
    "profile_policy",
    "resolve_policy",
    "validate_policy",
]

FILE_MARKER_PLACEHOLDERS = frozenset({"path", "shown_lines", "total_lines", "next_offset"})
# The largest file read whole: past it a whole read holds the file (and its numbered copy) in
# memory for nothing a client could be sent (docs/reliability.md).
MAX_FILE_SIZE_BYTES = 64 * 1024 * 1024

T = TypeVar("T")


class _Same(enum.Enum):
    SAME = 0  # a profile that takes the row's value


_SAME = _Same.SAME


@dataclass(frozen=True, slots=True)
class Knob:
    """The annotation of one `RestorePolicy` field: a row of the policy table."""

    value: Any  # Claude Code 2.1.88's, and every profile's not in `by_profile`
    doc: str  # what the field does, one line (markdown)
    by_profile: tuple[tuple[pb.Profile.ValueType, Any], ...] = ()  # profiles with their own
    unit: str = ""  # of a number: "tokens", "files", "bytes"
    minimum: int = 0  # numbers: below 0 NEGATIVE_BUDGET, below `minimum` INVALID_POLICY
    maximum: int | None = None  # numbers: above it INVALID_POLICY
    config_key: str = ""  # its key in config.toml's [policy]; "": the field's name
    # Strings: raises InvalidArgument (`_bad`) for a value no layer may carry; its docstring
    # says what is allowed (the docs table's "values").
    check: Callable[[str], None] | None = None

    def value_for(self, profile: pb.Profile.ValueType) -> Any:
        return dict(self.by_profile).get(profile, self.value)


def knob(
    value: T,
    doc: str,
    *,
    unit: str = "",
    minimum: int = 0,
    maximum: int | None = None,
    config_key: str = "",
    check: Callable[[str], None] | None = None,
    default_profile: T | _Same = _SAME,
    claude_code: T | _Same = _SAME,
) -> T:
    """A row of `Policy`: the dataclass field whose default is `value` (Claude Code 2.1.88's),
    annotated. `default_profile` and `claude_code`: the value under those profiles, when it is
    not `value`."""
    own = ((pb.PROFILE_DEFAULT, default_profile), (pb.PROFILE_CLAUDE_CODE, claude_code))
    annotation = Knob(
        value,
        doc,
        tuple((p, v) for p, v in own if v is not _SAME),
        unit,
        minimum,
        maximum,
        config_key,
        check,
    )
    return dataclasses.field(default=value, metadata={"knob": annotation})


def _bad(reason: str, field: str, message: str) -> InvalidArgument:
    return InvalidArgument(reason, f"policy.{field} {message}", {"field": f"policy.{field}"})


def _one_of_encodings(value: str) -> None:
    """`o200k_base` or `cl100k_base`"""
    if value not in ENCODINGS:
        raise _bad(
            "UNKNOWN_ENCODING", "encoding", f"must be one of {', '.join(ENCODINGS)}, got {value!r}"
        )


def _file_marker(marker: str) -> None:
    """text; placeholders `{path}`, `{shown_lines}`, `{total_lines}`, `{next_offset}`"""
    # The same rule as configured templates: known placeholders only, no format specs or
    # conversions (a "{path:>99999999999}" would fail, or exhaust memory, at render time).
    try:
        render.check_template("file_truncation_marker", marker, FILE_MARKER_PLACEHOLDERS)
    except render.TemplateError as exc:
        detail = str(exc).removeprefix("template file_truncation_marker").lstrip(": ")
        raise _bad("INVALID_POLICY", "file_truncation_marker", detail) from None


def _skill_marker(marker: str) -> None:
    """text without a NUL"""
    if "\0" in marker:
        raise _bad("INVALID_POLICY", "skill_truncation_marker", "contains a NUL byte")


@dataclass(frozen=True, slots=True)
class Policy:
    """A resolved policy, and the policy table: a row per `RestorePolicy` field, named as the
    field (a row the proto lacks fails the import; tests/daemon/restore/test_policy_table.py fails
    for a field without its row). Rows are in the order a layer's fields are checked in: numbers,
    enums, strings, flags. A row's default is its value under claude-code-2.1.88."""

    max_read_tokens: int = knob(
        25_000,
        "a whole ReadFile of a file over it (its text's rough tokens) answers the first page, "
        "marked partial, or is refused, as the profile says",
        unit="tokens",
        minimum=1,
    )
    max_files: int = knob(
        5, "files restored at most, after ranking", unit="files", default_profile=20
    )
    file_token_budget: int = knob(
        50_000,
        "all restored files together (unless `match_budget`)",
        unit="tokens",
    )
    max_tokens_per_file: int = knob(
        5_000, "one restored file; a file over it goes by `oversize`", unit="tokens", minimum=1
    )
    max_tokens_per_skill: int = knob(
        5_000, "one restored skill, cut with the skill marker", unit="tokens", minimum=1
    )
    skills_token_budget: int = knob(25_000, "all restored skills together", unit="tokens")
    max_file_size_bytes: int = knob(
        262_144,
        "a larger file is not read whole: ReadFile refuses it, the restoration goes by `oversize`",
        unit="bytes",
        minimum=1,
        maximum=MAX_FILE_SIZE_BYTES,
    )
    oversize: pb.OversizePolicy.ValueType = knob(
        pb.OVERSIZE_POLICY_REFERENCE,
        "a file over the per-file cap: cut to a head with the marker, a path-only note, or left "
        "out (its budget goes to the files that fit)",
        default_profile=pb.OVERSIZE_POLICY_SKIP,
    )
    ranking: pb.FileRanking.ValueType = knob(
        pb.FILE_RANKING_RECENCY,
        "how candidate files are ordered before `max_files` keeps the first (docs/eval.md)",
        default_profile=pb.FILE_RANKING_SCORED,
    )
    complement: pb.HarnessRule.ValueType = knob(
        pb.HARNESS_RULE_NONE,
        "restore only the files the named harness's own rule leaves out (Complement mode, below)",
    )
    match_budget: pb.HarnessRule.ValueType = knob(
        pb.HARNESS_RULE_NONE,
        "the file budget at each compaction is what the named harness's own rule spends there, "
        "in place of `file_token_budget`; `none` in a layer that sets `file_token_budget` and "
        "leaves this unset",
        default_profile=pb.HARNESS_RULE_CLAUDE_CODE,
    )
    counter: pb.TokenCounter.ValueType = knob(
        pb.TOKEN_COUNTER_ROUGH,
        "how tokens are counted: Claude Code's estimate, or exactly with `encoding`",
    )
    encoding: str = knob("o200k_base", "the exact counter's encoding", check=_one_of_encodings)
    file_truncation_marker: str | None = knob(
        None, "the marker after a file cut to its head", check=_file_marker
    )
    skill_truncation_marker: str | None = knob(
        None, "the marker after a cut skill", check=_skill_marker
    )
    malware_reminder: bool = knob(
        True,
        "the malware reminder after a Read result and a restored file",
        default_profile=False,
        claude_code=False,
    )
    carry_read_state: bool = knob(
        False,
        "an Edit/Write check passes for a file fully read before the compaction whose content "
        "still matches disk",
        default_profile=True,
        claude_code=True,
    )
    restore_seen: bool = knob(
        False,
        "restore the lines the agent saw of each file since the last compaction, not the whole "
        "file or the range last read",
        default_profile=True,
    )
    left_out_index: bool = knob(
        False, "one attachment naming the candidate files left out (path, lines seen, edited)"
    )

    @property
    def complement_on(self) -> bool:
        """Complement mode: only what Claude Code's own rule leaves out (restore/harness.py)."""
        return self.complement == pb.HARNESS_RULE_CLAUDE_CODE

    @property
    def exact(self) -> bool:
        return self.counter == pb.TOKEN_COUNTER_EXACT


Kind = Literal["int", "enum", "str", "bool"]
_KINDS: dict[int, Kind] = {
    FieldDescriptor.TYPE_INT32: "int",
    FieldDescriptor.TYPE_INT64: "int",
    FieldDescriptor.TYPE_ENUM: "enum",
    FieldDescriptor.TYPE_STRING: "str",
    FieldDescriptor.TYPE_BOOL: "bool",
}


def enum_choices(enum_type: EnumDescriptor) -> dict[str, int]:
    """An enum's values by their config spelling: the name without the enum's prefix, lower case
    (`OVERSIZE_POLICY_TRUNCATE_HEAD` → `truncate_head`); UNSPECIFIED left out."""
    unspecified = enum_type.values_by_number[0].name
    prefix = unspecified.removesuffix("UNSPECIFIED")
    return {
        v.name.removeprefix(prefix).lower(): v.number for v in enum_type.values if v.number != 0
    }


@dataclass(frozen=True, slots=True)
class PolicyField:
    """A row of the policy table: a `RestorePolicy` field, from its descriptor, and its `Knob`."""

    name: str
    descriptor: FieldDescriptor
    knob: Knob
    kind: Kind = dataclasses.field(init=False)
    # Enums: their values by config spelling (`enum_choices`), and every number they name.
    choices: Mapping[str, int] = dataclasses.field(init=False)
    known: frozenset[int] = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        kind = _KINDS.get(self.descriptor.type)
        if kind is None:
            raise TypeError(f"RestorePolicy.{self.name}: no rule for its type")
        object.__setattr__(self, "kind", kind)
        enum_type = self.descriptor.enum_type
        object.__setattr__(self, "choices", enum_choices(enum_type) if enum_type else {})
        known = frozenset(enum_type.values_by_number) if enum_type else frozenset()
        object.__setattr__(self, "known", known)

    @property
    def config_key(self) -> str:
        return self.knob.config_key or self.name

    @property
    def int32(self) -> bool:
        return self.descriptor.type == FieldDescriptor.TYPE_INT32

    def choice_name(self, value: int) -> str:
        return next(k for k, v in self.choices.items() if v == value)

    def is_set(self, layer: pb.RestorePolicy) -> bool:
        """Set in `layer` (an enum: not UNSPECIFIED)."""
        if self.descriptor.has_presence:
            return bool(layer.HasField(self.name))  # type: ignore[arg-type]
        return bool(getattr(layer, self.name) != 0)

    def validate(self, value: Any) -> None:
        """Raise InvalidArgument naming the field for a value no layer may carry."""
        k, name = self.knob, self.name
        if self.kind == "int":
            if value < 0:
                raise _bad("NEGATIVE_BUDGET", name, f"must not be negative, got {value}")
            if value < k.minimum:
                least = "positive" if k.minimum == 1 else f"at least {k.minimum}"
                raise _bad("INVALID_POLICY", name, f"must be {least}, got {value}")
            if k.maximum is not None and value > k.maximum:
                shown = f"{k.maximum}{_size(k.maximum, k.unit)}"
                raise _bad("INVALID_POLICY", name, f"must be at most {shown}, got {value}")
        elif self.kind == "enum":
            if value not in self.known:
                raise _bad("INVALID_POLICY", name, f"is not a known value: {value}")
        elif self.kind == "str" and k.check is not None:
            k.check(value)


def _size(n: int, unit: str) -> str:
    return f" ({n // MIB} MiB)" if unit == "bytes" and n >= MIB and n % MIB == 0 else ""


def _rows() -> tuple[PolicyField, ...]:
    proto = pb.RestorePolicy.DESCRIPTOR.fields_by_name
    rows = []
    for f in dataclasses.fields(Policy):
        if f.name not in proto:
            raise TypeError(f"Policy.{f.name} is not a field of RestorePolicy")
        if "knob" not in f.metadata:
            raise TypeError(f"Policy.{f.name} has no knob(...) annotation")
        rows.append(PolicyField(f.name, proto[f.name], f.metadata["knob"]))
    return tuple(rows)


# The policy table, in `Policy`'s order (the order of validation).
FIELDS = _rows()


def validate_policy(layer: pb.RestorePolicy) -> None:
    """Raise InvalidArgument (naming the field) for a value no layer may carry."""
    for f in FIELDS:
        if f.is_set(layer):  # an enum's UNSPECIFIED (0) is valid: it inherits
            f.validate(getattr(layer, f.name))


_PROFILE_POLICIES: dict[int, Policy] = {
    p: Policy(**{f.name: f.knob.value_for(p) for f in FIELDS}) for p in profiles.ALL
}


def profile_policy(profile: pb.Profile.ValueType) -> Policy:
    """The defaults of `profile` (UNSPECIFIED: the default profile's), from the policy table."""
    return _PROFILE_POLICIES[profiles.rules(profile).profile]


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
        # The fields set (an enum: not UNSPECIFIED, which inherits).
        changes: dict[str, Any] = {fd.name: value for fd, value in layer.ListFields()}
        if "file_token_budget" in changes and "match_budget" not in changes:
            # A budget set without match_budget is the one meant: it is not replaced by the
            # harness's spend an earlier layer (or the profile) asked for.
            changes["match_budget"] = pb.HARNESS_RULE_NONE
        if changes:  # most layers are empty; dataclasses.replace costs ~20 µs
            policy = replace(policy, **changes)
    return policy
