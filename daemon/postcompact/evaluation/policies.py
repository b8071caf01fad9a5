"""The restoration rules `postcompact eval` measures (docs/eval.md §2).

A policy is a profile and a `RestorePolicy` over it: every rule is selectable per request.

- **Named policies** (`NAMED`): hand-described rules for the descriptive tables. `--policy NAME`
  picks one; `--policy NAME=PROFILE[:FIELD=VALUE,...]` defines one on the command line (fields
  of `RestorePolicy`, e.g. `wide=default:max_files=10`), validated as the daemon validates a
  policy layer.
- **Rule families** (`FAMILIES`): a profile, fixed fields and a grid of field values; every grid
  point is a configuration with a stable name (`seen/recency-f20-c3000-b7000-skip`). The
  configurations of the families are what the selection procedure chooses among
  (`crossval`). To add a family, add a `Family` to `FAMILIES`.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from google.protobuf import text_format

from postcompact import profiles
from postcompact.errors import InvalidArgument
from postcompact.restore import ranker
from postcompact.restore.policy import profile_policy, validate_policy
from postcompact.v1 import postcompact_pb2 as pb

__all__ = [
    "DEFAULT_POLICY",
    "FAMILIES",
    "NAMED",
    "Family",
    "Policy",
    "configurations",
    "parse_policy",
]


@dataclass(frozen=True, slots=True)
class Policy:
    name: str
    profile: pb.Profile.ValueType
    policy: pb.RestorePolicy
    about: str = ""
    # A learned ranking's model (FILE_RANKING_SCORED), in place of the committed one: a fold's.
    model: ranker.Model | None = None

    @property
    def spec(self) -> str:
        """`PROFILE[:FIELD=VALUE,...]`, as on the command line."""
        fields = text_format.MessageToString(self.policy, as_one_line=True)
        name = profiles.rules(self.profile).name
        return f"{name}:{fields}" if fields else name


_OVERSIZE_ABOUT = {
    pb.OVERSIZE_POLICY_SKIP: "a file over it is left out",
    pb.OVERSIZE_POLICY_TRUNCATE_HEAD: "a file over it cut to a head",
    pb.OVERSIZE_POLICY_REFERENCE: "a file over it a path-only note",
}


def _about_default() -> str:
    """The default profile's file rule as it is now (the profile's defaults, which change)."""
    r = profile_policy(pb.PROFILE_DEFAULT)
    what = "the lines seen" if r.restore_seen else "the whole file or the range last read"
    order = (
        "the files ranked by value per token (the learned ranking)"
        if r.ranking == pb.FILE_RANKING_SCORED
        else "the most recently used files"
    )
    return (
        f"postcompact's default profile as it is: {what} of {order}, up "
        f"to {r.max_files}, each within {r.max_tokens_per_file:,} tokens "
        f"({_OVERSIZE_ABOUT.get(r.oversize, 'oversize rule ' + str(r.oversize))}), "
        + (
            "in the tokens Claude Code's own rule spends at each compaction"
            if r.match_budget == pb.HARNESS_RULE_CLAUDE_CODE
            else f"{r.file_token_budget:,} in all"
        )
        + "; read state "
        f"{'carried' if r.carry_read_state else 'not carried'}"
    )


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
            match_budget=pb.HARNESS_RULE_NONE,
        ),
        _named("default", pb.PROFILE_DEFAULT, _about_default()),
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

# Claude Code with postcompact's complement beside it (docs/profiles.md, "Complement mode"):
# what a Claude Code plugin adds within the text it can send inline (10,000 characters a hook,
# ~2,400 tokens), with half and twice that budget.
COMPLEMENT_BUDGETS = (1_200, 2_400, 4_800)
for _budget in COMPLEMENT_BUDGETS:
    NAMED[f"claude-code+complement-{_budget}"] = _named(
        f"claude-code+complement-{_budget}",
        pb.PROFILE_DEFAULT,
        f"Claude Code's own rule and postcompact's complement in {_budget:,} more tokens: the "
        "lines seen of the files Claude Code leaves out, ranked by value per token (the "
        "default's learned ranking), each within the budget",
        complement=pb.HARNESS_RULE_CLAUDE_CODE,
        file_token_budget=_budget,
        max_tokens_per_file=_budget,
        max_files=20,
        restore_seen=True,
        ranking=pb.FILE_RANKING_SCORED,
        oversize=pb.OVERSIZE_POLICY_SKIP,
    )
DEFAULT_POLICY = "default"


# --- rule families ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Family:
    """A rule family: `profile` with the `fixed` fields, and every combination of the `grid`'s
    field values (in the grid's order); no grid: the one configuration `profile` + `fixed`,
    named after the family."""

    name: str
    profile: pb.Profile.ValueType
    about: str
    fixed: Mapping[str, object] = field(default_factory=dict)
    grid: Mapping[str, Sequence[object]] = field(default_factory=dict)
    # Its rule never restores more tokens than claude-code's at a compaction, by construction
    # (claude-code's own; `match_budget`): the families the selection procedure chooses among.
    bounded: bool = False

    def configurations(self) -> list[Policy]:
        if not self.grid:
            return [Policy(self.name, self.profile, _policy(self.fixed), self.about)]
        out = []
        keys = list(self.grid)
        for values in itertools.product(*(self.grid[k] for k in keys)):
            point = dict(zip(keys, values, strict=True))
            label = "-".join(_label(k, v) for k, v in point.items())
            out.append(
                Policy(
                    f"{self.name}/{label}",
                    self.profile,
                    _policy({**self.fixed, **point}),
                    f"{self.name}: {self.about}",
                )
            )
        return out


def _policy(fields: Mapping[str, object]) -> pb.RestorePolicy:
    p = pb.RestorePolicy()
    for name, value in fields.items():
        setattr(p, name, value)
    return p


# Short labels of a grid point's values in configuration names; other fields are named in full.
_PREFIXES = {"max_files": "f", "max_tokens_per_file": "c", "file_token_budget": "b"}
_ENUM_PREFIXES = {
    "ranking": "FILE_RANKING_",
    "oversize": "OVERSIZE_POLICY_",
    "complement": "HARNESS_RULE_",
    "match_budget": "HARNESS_RULE_",
    "counter": "TOKEN_COUNTER_",
}


def _label(name: str, value: object) -> str:
    """`f20` for max_files=20, `recency` for FILE_RANKING_RECENCY, `seen`/`no-seen` style for a
    bool (`restore_seen`, `no-restore_seen`), `NAME=VALUE` otherwise."""
    if name in _ENUM_PREFIXES and isinstance(value, int):
        enum = pb.RestorePolicy.DESCRIPTOR.fields_by_name[name].enum_type
        assert enum is not None
        label = enum.values_by_number[value].name.removeprefix(_ENUM_PREFIXES[name])
        short = label.lower().replace("_", "-")
        return short if name in ("ranking", "oversize") else f"{name}-{short}"
    if isinstance(value, bool):
        return name if value else f"no-{name}"
    if name in _PREFIXES:
        return f"{_PREFIXES[name]}{value}"
    return f"{name}={value}"


_RANKINGS = (pb.FILE_RANKING_RECENCY, pb.FILE_RANKING_MTIME)

FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family(
            "claude-code",
            pb.PROFILE_CLAUDE_CODE,
            "Claude Code's own rule (the baseline, and a candidate)",
            bounded=True,
        ),
        Family(
            "claude-code-2.1.88",
            pb.PROFILE_CLAUDE_CODE_2_1_88,
            "Claude Code 2.1.88's rule",
        ),
        Family(
            "seen",
            pb.PROFILE_DEFAULT,
            "the lines seen of each file, ranked, capped per file and in all",
            fixed={"restore_seen": True, "match_budget": pb.HARNESS_RULE_NONE},
            grid={
                "ranking": _RANKINGS,
                "max_files": (5, 10, 20),
                "max_tokens_per_file": (2_000, 3_000, 5_000),
                "file_token_budget": (4_000, 5_000, 6_000, 7_000, 8_000),
                "oversize": (pb.OVERSIZE_POLICY_SKIP, pb.OVERSIZE_POLICY_TRUNCATE_HEAD),
            },
        ),
        Family(
            "matched",
            pb.PROFILE_DEFAULT,
            "the lines seen of each file, ranked, capped per file, within the tokens Claude "
            "Code's own rule spends at that compaction",
            fixed={"restore_seen": True, "match_budget": pb.HARNESS_RULE_CLAUDE_CODE},
            grid={
                "ranking": (*_RANKINGS, pb.FILE_RANKING_CLAUDE_CODE_FIRST),
                "max_files": (10, 20),
                "max_tokens_per_file": (3_000, 5_000),
                "oversize": (pb.OVERSIZE_POLICY_SKIP, pb.OVERSIZE_POLICY_TRUNCATE_HEAD),
            },
            bounded=True,
        ),
        Family(
            "whole",
            pb.PROFILE_DEFAULT,
            "each file whole or the range last read, ranked, capped per file and in all",
            fixed={"restore_seen": False, "match_budget": pb.HARNESS_RULE_NONE},
            grid={
                "ranking": _RANKINGS,
                "max_files": (5, 10),
                "max_tokens_per_file": (3_000, 5_000),
                "file_token_budget": (5_000, 7_000, 50_000),
                "oversize": (pb.OVERSIZE_POLICY_REFERENCE, pb.OVERSIZE_POLICY_TRUNCATE_HEAD),
            },
        ),
    )
}
BASELINE = "claude-code"  # the rule every ratio is against: a configuration of FAMILIES


def configurations(families: Sequence[str] | None = None) -> list[Policy]:
    """Every configuration of the named families (all of them by default), in family order."""
    return [c for name in families or list(FAMILIES) for c in FAMILIES[name].configurations()]


def parse_policy(arg: str) -> Policy:
    """A `--policy` argument: a name of `NAMED` or of a family's configuration, or
    `NAME=PROFILE[:FIELD=VALUE,...]` (validated as the daemon validates a policy layer);
    ValueError naming what is wrong otherwise."""
    if "=" not in arg.split(":", 1)[0]:
        if arg in NAMED:
            return NAMED[arg]
        family = FAMILIES.get(arg.split("/", 1)[0])
        for c in family.configurations() if family is not None else []:
            if c.name == arg:
                return c
        raise ValueError(
            f"unknown policy {arg!r} (known: {', '.join(NAMED)}, a configuration of "
            f"{', '.join(FAMILIES)}; or NAME=PROFILE:...)"
        )
    name, _, spec = arg.partition("=")
    profile_name, _, fields = spec.partition(":")
    if not name:
        raise ValueError(f"policy {arg!r} has no name before '='")
    try:
        profile = profiles.parse(profile_name)
    except ValueError as exc:
        raise ValueError(f"policy {name}: {exc}") from None
    policy = pb.RestorePolicy()
    if fields:
        try:
            text_format.Parse(fields.replace(",", " ").replace("=", ":"), policy)
        except text_format.ParseError as exc:
            raise ValueError(f"policy {name}: {exc}") from None
    try:
        validate_policy(policy)
    except InvalidArgument as exc:
        raise ValueError(f"policy {name}: {exc.message}") from None
    return Policy(name, profile, policy, spec)
