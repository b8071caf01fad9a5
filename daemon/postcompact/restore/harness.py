"""What a harness restores by itself, for complement mode (`RestorePolicy.complement`;
docs/profiles.md, "Complement mode").

Claude Code restores its own files after every compaction, whatever a plugin does, and its hooks
cannot turn that off (docs/claude-code.md §3). In complement mode postcompact restores only what
that rule leaves out. This module computes the rule's own selection over the agent's files — by
running the claude-code profile's file step itself (the code `make parity` holds byte for byte
to the real program), on a copy of the candidates stamped with their mtimes (Claude Code ranks
by the mtime each file had when it was read) — and says, per file, whether Claude Code restores
it whole.

Where Claude Code's state differs from postcompact's:

- Files postcompact restored itself in complement mode were never read in Claude Code's eyes:
  they are not its candidates while their entry is still the one postcompact seeded
  (`AgentState.harness_unaware`).
- The files it restored as path-only notes stay its candidates (`AgentState.carried_refs`, which
  complement mode keeps for the harness's rule).
- The per-file cap: a file over a quarter of the cap is counted by Anthropic's countTokens API,
  which postcompact estimates offline as characters / 3 (docs/claude-code.md §2). A file whose
  estimate is within `DOUBT` of the cap may fall on either side: it is treated as left out by
  Claude Code (a candidate for postcompact's own rule), so that in doubt a file is restored
  twice rather than by no one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from postcompact import core, profiles, render
from postcompact.paths import now_ms
from postcompact.restore.context import CompactContext
from postcompact.restore.file_step import FileStep, Seed, restore_files
from postcompact.restore.meter import Meter
from postcompact.restore.outcome import Outcome
from postcompact.restore.policy import profile_policy
from postcompact.state import AgentState, Session
from postcompact.state.model import RenderedFile
from postcompact.v1 import postcompact_pb2 as pb

__all__ = ["DOUBT", "HarnessPick", "claude_code_pick"]

# A file whose countTokens estimate is over this share of the per-file cap (and within it) may be
# restored whole or as a note by Claude Code: it is left to postcompact's rule (module doc).
DOUBT = 0.8


@dataclass(slots=True)
class HarnessPick:
    """The harness's own selection: the files it restores whole (path -> the rough tokens of
    its attachment, the decision's detail) and their entries to hold as restored after the
    compaction; the files it restores as notes (path -> the timestamp they ranked by), which
    stay its candidates; and the files it may restore either way (`DOUBT`), left to postcompact
    but still the harness's candidates."""

    restored: dict[str, tuple[int, str]] = field(default_factory=dict)
    seeds: list[Seed] = field(default_factory=list)
    referenced: dict[str, int] = field(default_factory=dict)
    doubtful: set[str] = field(default_factory=set)
    # Every file it restores whole, doubtful ones too, in its order (ranked first under
    # FILE_RANKING_CLAUDE_CODE_FIRST), and the rough tokens of all its file attachments and notes
    # (the budget under RestorePolicy.match_budget).
    order: list[str] = field(default_factory=list)
    tokens: int = 0
    # What its file step rendered, for the agent's next compaction (AgentState.harness_rendered).
    rendered: dict[str, RenderedFile] = field(default_factory=dict)

    def held_by_harness(self, path: str) -> bool:
        """Whether the harness holds `path` as read after the compaction (whatever postcompact
        restores of it)."""
        return path in self.restored or path in self.referenced or path in self.doubtful


def _mtime_of(agent: AgentState, path: str, st: core.FileState) -> int:
    """The mtime Claude Code would have stamped the entry with: the file's now, else the one
    seen at its last read (a deleted file keeps its slot, as in Claude Code), else the entry's
    own timestamp."""
    try:
        return os.stat(path).st_mtime_ns // 1_000_000
    except (OSError, ValueError):
        mark = agent.read_mtimes.get(path)
        return mark[1] if mark is not None and mark[0] == st.timestamp else st.timestamp


def harness_candidates(
    agent: AgentState, snapshot: Sequence[tuple[str, core.FileState]]
) -> list[tuple[str, core.FileState]]:
    """The snapshot as Claude Code holds it: without the files postcompact alone restored (still
    their seeded entry), each entry stamped with the file's mtime."""
    unaware = agent.harness_unaware
    out: list[tuple[str, core.FileState]] = []
    for path, st in snapshot:
        if unaware.get(path) == st.timestamp:
            continue
        stamp = _mtime_of(agent, path, st)
        out.append((path, core.FileState(st.content, stamp, st.offset, st.limit, st.partial_view)))
    return out


def _count_tokens_estimate(content: bytes, api_units: int) -> int:
    """The countTokens count postcompact assumes of a file's text (docs/claude-code.md §2)."""
    text = render.strip_cr(content.decode("utf-8", errors="replace"))
    units = int(core.utf16_len(text))
    return (2 * units + api_units) // (2 * api_units)


async def claude_code_pick(
    ctx: CompactContext,
    session: Session,
    agent: AgentState,
    snapshot: Sequence[tuple[str, core.FileState]],
    excluded: Mapping[str, pb.Outcome.ValueType],
) -> HarnessPick:
    """Claude Code's file restoration over `agent`'s files (module doc): run, not applied.
    `ctx`: the compaction's (its deny globs; its rules stamp what the harness holds)."""
    rules = profiles.rules(pb.PROFILE_CLAUDE_CODE)
    policy = profile_policy(pb.PROFILE_CLAUDE_CODE)
    # The claude-code profile's own file step, as Claude Code runs it: its policy, wording and
    # rules; nothing hashed, no content beside the blocks.
    theirs = CompactContext(
        policy=policy,
        templates=rules.templates,
        rules=rules,
        meter=Meter(),
        deny_globs=ctx.deny_globs,
        hash_contents=False,
        include_content=False,
    )
    step = FileStep(session, theirs, memo=agent.harness_rendered)
    scratch = Outcome()
    read_at = now_ms()
    referenced, seeds, rendered = await restore_files(
        step,
        agent,
        harness_candidates(agent, snapshot),
        excluded=dict(excluded),
        out=scratch,
    )
    pick = HarnessPick(referenced=referenced, rendered=rendered)
    by_path = {s.path: s for s in seeds}
    cap, api = policy.max_tokens_per_file, rules.api_units_per_token or 3
    mtime_stamps = ctx.rules.mtime_timestamps
    for d in scratch.decisions():
        if d.outcome in (pb.OUTCOME_RESTORED, pb.OUTCOME_REFERENCED):
            pick.tokens += d.tokens
        seed = by_path.get(d.name)
        if d.outcome != pb.OUTCOME_RESTORED or seed is None:
            continue
        pick.order.append(d.name)
        if _count_tokens_estimate(seed.state.content, api) > DOUBT * cap:
            pick.doubtful.add(d.name)  # it may come back as a note: postcompact's rule decides
            continue
        pick.restored[d.name] = (
            d.tokens,
            f"Claude Code restores it itself (its rank {d.rank} of {policy.max_files}, whole)",
        )
        st = seed.state
        stamp = st.timestamp if mtime_stamps else read_at
        held = core.FileState(st.content, stamp, st.offset, st.limit, False)
        pick.seeds.append(Seed(d.name, held, seed.mtime_ms, None, seed.lines))
    return pick
