"""The restoration rules `postcompact eval` measures, by name (docs/eval.md §2).

A policy is a profile and a `RestorePolicy` over it: every rule is selectable per request.
`--policy NAME` picks a named one; `--policy NAME=PROFILE[:FIELD=VALUE,...]` defines one on
the command line (fields of `RestorePolicy`, e.g. `wide=default:max_files=10`).
"""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf import text_format

from postcompact import profiles
from postcompact.v1 import postcompact_pb2 as pb

__all__ = ["DEFAULT_POLICY", "NAMED", "Policy", "parse_policy"]


@dataclass(frozen=True, slots=True)
class Policy:
    name: str
    profile: pb.Profile.ValueType
    policy: pb.RestorePolicy
    about: str = ""

    @property
    def spec(self) -> str:
        """`PROFILE[:FIELD=VALUE,...]`, as on the command line."""
        fields = text_format.MessageToString(self.policy, as_one_line=True)
        name = profiles.rules(self.profile).name
        return f"{name}:{fields}" if fields else name


def _named(name: str, profile: pb.Profile.ValueType, about: str, **fields: object) -> Policy:
    return Policy(name, profile, pb.RestorePolicy(**fields), about)  # type: ignore[arg-type]


NAMED: dict[str, Policy] = {
    p.name: p
    for p in (
        _named(
            "claude-code",
            pb.PROFILE_CLAUDE_CODE,
            "Claude Code today: the 5 most recently modified files, whole or a path-only note",
        ),
        _named(
            "claude-code-2.1.88",
            pb.PROFILE_CLAUDE_CODE_2_1_88,
            "Claude Code 2.1.88: the 5 most recently modified files, whole or a path-only note, "
            "no read state carried",
        ),
        _named(
            "default-v1",
            pb.PROFILE_DEFAULT,
            "postcompact's default before the measurement: the 5 most recently read files, the "
            "range last read, an oversize file cut to a head",
            max_files=5,
            file_token_budget=50_000,
            max_tokens_per_file=5_000,
            oversize=pb.OVERSIZE_POLICY_TRUNCATE_HEAD,
            malware_reminder=True,
            carry_read_state=False,
            restore_seen=False,
        ),
        _named(
            "default",
            pb.PROFILE_DEFAULT,
            "postcompact's default: the lines seen of the most recently used files, up to 20, "
            "each within 3,000 tokens (a file over it is left out), 7,000 in all; read state "
            "carried",
        ),
    )
}


def _v1(**changes: object) -> pb.RestorePolicy:
    """default-v1's policy with `changes`: one new rule alone."""
    p = pb.RestorePolicy()
    p.CopyFrom(NAMED["default-v1"].policy)
    for name, value in changes.items():
        setattr(p, name, value)
    return p


_BY_VALUE = {
    "max_files": 20,
    "max_tokens_per_file": 3_000,
    "file_token_budget": 7_000,
    "oversize": pb.OVERSIZE_POLICY_SKIP,
    "malware_reminder": False,
}
_EDITS_FIRST = pb.FILE_RANKING_EDITS_FIRST
for _p in (
    Policy("seen", pb.PROFILE_DEFAULT, _v1(restore_seen=True), "default-v1, the lines seen"),
    Policy(
        "edits-first",
        pb.PROFILE_DEFAULT,
        _v1(ranking=_EDITS_FIRST),
        "default-v1, files edited since the last compaction first",
    ),
    Policy(
        "index", pb.PROFILE_DEFAULT, _v1(left_out_index=True), "default-v1 and the left-out index"
    ),
    Policy("carry", pb.PROFILE_DEFAULT, _v1(carry_read_state=True), "default-v1, read state kept"),
    Policy(
        "by-value",
        pb.PROFILE_DEFAULT,
        _v1(**_BY_VALUE),
        "default-v1's budget spent by value: up to 20 files of at most 3,000 tokens (over it: "
        "left out), 7,000 in all, no malware reminder",
    ),
    Policy(
        "default+index",
        pb.PROFILE_DEFAULT,
        pb.RestorePolicy(left_out_index=True),
        "the default and the left-out index",
    ),
    Policy(
        "default+edits-first",
        pb.PROFILE_DEFAULT,
        pb.RestorePolicy(ranking=_EDITS_FIRST),
        "the default, files edited since the last compaction first",
    ),
):
    NAMED[_p.name] = _p
DEFAULT_POLICY = "default"


def parse_policy(arg: str) -> Policy:
    """A `--policy` argument: a name of `NAMED`, or `NAME=PROFILE[:FIELD=VALUE,...]`; ValueError
    naming what is wrong otherwise."""
    if "=" not in arg.split(":", 1)[0]:
        if arg in NAMED:
            return NAMED[arg]
        raise ValueError(f"unknown policy {arg!r} (known: {', '.join(NAMED)}; or NAME=PROFILE:...)")
    name, _, spec = arg.partition("=")
    profile_name, _, fields = spec.partition(":")
    if not name:
        raise ValueError(f"policy {arg!r} has no name before '='")
    try:
        profile = profiles.parse(profile_name)
    except ValueError as exc:
        raise ValueError(f"policy {name!r}: {exc}") from None
    policy = pb.RestorePolicy()
    if fields:
        try:
            text_format.Parse(fields.replace(",", " ").replace("=", ":"), policy)
        except text_format.ParseError as exc:
            raise ValueError(f"policy {name!r}: {exc}") from None
    return Policy(name, profile, policy, spec)
