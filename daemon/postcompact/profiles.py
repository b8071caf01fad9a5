"""Profiles: whose rules and words a session gets (docs/profiles.md). The one owner of every
difference between them, but for the defaults of the policy fields, which the policy table gives
per profile (`restore/policy.py`, `Policy`).

- `default`: postcompact's own rules (the design chapter's): ReadFile stores the read time, a
  re-read of an unchanged range is the "unchanged" stub, a file over the per-file cap is left out
  and its budget goes to the files that fit (`oversize = skip`), every attachment is user-placed
  and wrapped. Read state is carried over compaction and
  running background shells are reported, as in current Claude Code, because its users miss them.
- `claude-code`: Claude Code as it ships today (2.1.336; docs/claude-code.md).
- `claude-code-2.1.88`: the Claude Code snapshot postcompact was first built from.

Safety rules (no inserted text can close its reminder) and the CR rule (a file is measured and
attached with its line ends' `\\r` removed) hold in every profile; they are not listed here.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from postcompact.render import CLAUDE_CODE_TEMPLATES, DEFAULT_TEMPLATES, Templates, templates_with
from postcompact.v1 import postcompact_pb2 as pb

__all__ = ["ALL", "NAMES", "Rules", "name_of", "parse", "rules"]


@dataclass(frozen=True, slots=True)
class Rules:
    profile: pb.Profile.ValueType
    name: str  # as in config files and on the command line
    # ReadFile stores the file's mtime (floor ms) as the entry's timestamp; else the read time.
    mtime_timestamps: bool
    # ReadFile of an unchanged range answers the "File unchanged since last read" stub.
    unchanged_stub: bool
    # The 50K file budget measures JSON.stringify of the attachment payload only; else the whole
    # attachment message (uuid and timestamp included).
    payload_cost: bool
    # Every attachment but a restored file is a section of one system message, unwrapped; else
    # everything is user-placed and wrapped.
    system_sections: bool
    # The skill listing is announced again after compaction (against the kept tail's listing).
    reannounce_skill_listing: bool
    # A restored skill overwrites the stored one: dropped by the budget -> emptied (never
    # restored again), truncated -> its truncated text.
    rewrite_skills: bool
    # Running background shells (local_bash) get a status line, for the agent that started them.
    shell_status: bool
    # Tasks of the compacting agent's parent are not reported either.
    skip_parent_task: bool
    # A file restored as a too-large note stays a candidate at the next compaction.
    references_stay_candidates: bool
    # Claude Code 2.1.333 on (restore/file_step.py, `saved_result`): a saved tool result (a file of
    # a `tool-results` folder, any case) is never restored whole; one under Claude Code's projects
    # folder whose name starts neither `artifact-` nor `project-file-` is named in a too-large
    # note after the ranked files (up to `max_files` more, newest first, within the file
    # budget); every saved result stays a candidate at the next compaction. Else only
    # `tool-results/artifact-*` is left out, in every profile.
    saved_result_notes: bool
    # Claude Code 2.1.333 on: files under the upload and download folders and paths through an
    # `artifact-files` folder are never restored (restore/file_step.py, `upload_or_download`).
    uploads_excluded: bool
    # CheckStale's write-command markers include `sed -i` / `gsed -i`.
    sed_markers: bool
    # A file last read as a range (offset > 1) is restored as that range (numbered from its
    # first line, its Read call with offset and limit); else from line 1.
    restore_ranges: bool
    # The per-file cap bounds the rough estimate of the whole attachment as the model sees it
    # (Read call, numbered text, wrappers, marker: `FileAttachment`'s `tokens`); else the file's
    # text, measured as Claude Code measures it.
    cap_rendered: bool
    # ReadFile refuses a file over the size cap with current Claude Code's own message.
    claude_read_errors: bool
    # A whole ReadFile over max_read_tokens answers its first page, marked partial; else it is
    # refused with Claude Code's message.
    page_over_read_tokens: bool
    # A file over a quarter of the per-file cap by the rough estimate is measured again as
    # Claude Code's countTokens API would count it, estimated offline as this many UTF-16 units
    # a token (docs/claude-code.md §3); None: the rough estimate decides alone.
    api_units_per_token: int | None
    # Per-agent file-state cache entries when limits.cache_max_entries is not configured.
    cache_max_entries: int
    templates: Templates


_DEFAULT = Rules(
    profile=pb.PROFILE_DEFAULT,
    name="default",
    mtime_timestamps=False,
    unchanged_stub=True,
    payload_cost=False,
    system_sections=False,
    reannounce_skill_listing=False,
    rewrite_skills=False,
    shell_status=True,
    skip_parent_task=False,
    references_stay_candidates=False,
    saved_result_notes=False,
    uploads_excluded=False,
    sed_markers=True,
    restore_ranges=True,
    cap_rendered=True,
    claude_read_errors=False,
    page_over_read_tokens=True,
    api_units_per_token=None,
    cache_max_entries=100,
    templates=DEFAULT_TEMPLATES,
)

_CLAUDE_CODE = Rules(
    profile=pb.PROFILE_CLAUDE_CODE,
    name="claude-code",
    mtime_timestamps=True,
    unchanged_stub=False,
    payload_cost=True,
    system_sections=True,
    reannounce_skill_listing=True,
    rewrite_skills=True,
    shell_status=True,
    skip_parent_task=True,
    references_stay_candidates=True,
    saved_result_notes=True,
    uploads_excluded=True,
    sed_markers=True,
    restore_ranges=False,
    cap_rendered=False,
    claude_read_errors=True,
    page_over_read_tokens=True,
    api_units_per_token=3,
    cache_max_entries=5000,
    templates=CLAUDE_CODE_TEMPLATES,
)

_CLAUDE_CODE_2_1_88 = Rules(
    profile=pb.PROFILE_CLAUDE_CODE_2_1_88,
    name="claude-code-2.1.88",
    mtime_timestamps=True,
    unchanged_stub=True,
    payload_cost=False,
    system_sections=False,
    reannounce_skill_listing=False,
    rewrite_skills=False,
    shell_status=False,
    skip_parent_task=False,
    references_stay_candidates=False,
    saved_result_notes=False,
    uploads_excluded=False,
    sed_markers=False,
    restore_ranges=False,
    cap_rendered=False,
    claude_read_errors=False,
    page_over_read_tokens=False,
    api_units_per_token=3,
    cache_max_entries=100,
    templates=DEFAULT_TEMPLATES,
)

_BY_PROFILE: dict[int, Rules] = {
    r.profile: r for r in (_DEFAULT, _CLAUDE_CODE, _CLAUDE_CODE_2_1_88)
}
# Every profile, in the order of docs/profiles.md's tables.
ALL: tuple[pb.Profile.ValueType, ...] = tuple(r.profile for r in _BY_PROFILE.values())

# Names accepted in config files, environment and flags (the first of each is the canonical one).
NAMES: dict[str, pb.Profile.ValueType] = {
    "default": pb.PROFILE_DEFAULT,
    "claude-code": pb.PROFILE_CLAUDE_CODE,
    "claude_code": pb.PROFILE_CLAUDE_CODE,
    "claude-code-2.1.88": pb.PROFILE_CLAUDE_CODE_2_1_88,
    "claude_code_2_1_88": pb.PROFILE_CLAUDE_CODE_2_1_88,
}


@functools.lru_cache(maxsize=256)
def templates_for(profile: pb.Profile.ValueType, *specs: bytes) -> Templates:
    """The profile's templates with each serialised pb.TemplateSpec of `specs` on top, in order
    (empty ones skipped). TemplateError for a spec that names an unknown preset or template, or
    a template using a placeholder it may not."""
    out = rules(profile).templates
    for raw in specs:
        if raw:
            spec = pb.TemplateSpec.FromString(raw)
            out = templates_with(out, spec.preset, dict(spec.strings))
    return out


def rules(profile: pb.Profile.ValueType) -> Rules:
    """The rules of `profile` (UNSPECIFIED: the default profile's)."""
    return _BY_PROFILE.get(profile, _DEFAULT)


def known(profile: int) -> bool:
    return profile in _BY_PROFILE


def parse(name: str) -> pb.Profile.ValueType:
    """The profile named `name`; ValueError listing the names otherwise."""
    try:
        return NAMES[name]
    except KeyError:
        choices = ", ".join(r.name for r in _BY_PROFILE.values())
        raise ValueError(f"unknown profile {name!r} (one of {choices})") from None


def name_of(profile: pb.Profile.ValueType) -> str:
    return rules(profile).name
