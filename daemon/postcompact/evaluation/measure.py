"""Each policy's restoration at each compaction, scored against what the agent needed
(docs/eval.md §1).

For a transcript, every policy is replayed in-process (`transcript.replay`, the real pipeline on
the disk recreated from the records) and, at each main-thread boundary:

- **candidates**: the files seen since the previous boundary (`need.Point.seen`) plus what this
  policy restored at the previous one (with the lines it restored);
- **needed**: the candidates touched in the first `window` tool calls after it, with the lines
  (`need.Point.needed`); a needed file is **covered** when every needed line was restored;
- **tokens restored**: the rough tokens of the file attachments, the too-large notes and any
  index of left-out files; **wasted**: those of files not needed;
- **re-reads avoided**: files whose first touch is a Read of lines the restoration holds, and
  the tokens those Reads' results cost (`need.Touch.tokens`); **net tokens**: those avoided
  tokens minus the wasted ones and any index of left-out files (restored, used by no one);
- **failed edits avoided**: files whose first touch is an Edit or Write (a failed edit under
  claude-code-2.1.88's rules when nothing vouches for the read) that the daemon's own
  CheckWrite allows on the agent's state right after the compaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields

from postcompact.config import Config
from postcompact.evaluation.need import Point
from postcompact.evaluation.policies import Policy
from postcompact.service.files import FileService
from postcompact.state import AgentState, Session
from postcompact.state.registry import Registry
from postcompact.transcript.parse import Boundary, Transcript
from postcompact.transcript.paths import PathMap
from postcompact.transcript.replay import replay
from postcompact.v1 import postcompact_pb2 as pb

__all__ = ["Counts", "Restored", "Scored", "score_transcript"]

PROBE_AGENT = "postcompact-eval-probe"


@dataclass(slots=True)
class Counts:
    """Sums over compactions (one compaction: its own figures)."""

    compactions: int = 0
    needed_files: int = 0
    covered_files: int = 0
    needed_lines: int = 0
    covered_lines: int = 0
    tokens_restored: int = 0
    wasted_tokens: int = 0
    files_restored: int = 0
    reads: int = 0  # files first touched by a Read
    rereads_avoided: int = 0
    reread_tokens_avoided: int = 0  # the rough tokens of the avoided re-reads' results
    index_tokens: int = 0  # of an index of left-out files
    edits_first: int = 0  # files first touched by an Edit or Write
    failed_edits_avoided: int = 0
    # A complement (RestorePolicy.complement) beside the claude-code rule it complements: files
    # it left to Claude Code that Claude Code did not restore whole (lost), and files Claude
    # Code restored whole that it did not leave to it (restored twice or by Claude Code alone).
    harness_lost: int = 0
    harness_unpredicted: int = 0

    def add(self, other: Counts) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    @property
    def recall(self) -> float:
        return self.covered_files / self.needed_files if self.needed_files else 0.0

    @property
    def line_recall(self) -> float:
        return self.covered_lines / self.needed_lines if self.needed_lines else 0.0

    @property
    def net_tokens(self) -> int:
        """Tokens of the re-reads the restoration made unnecessary minus the restored tokens
        no one used (files not needed, an index of left-out files)."""
        return self.reread_tokens_avoided - self.wasted_tokens - self.index_tokens


@dataclass(slots=True)
class Restored:
    """What one policy restored at one boundary (transcript paths)."""

    lines: dict[str, set[int]] = field(default_factory=dict)  # file attachments
    tokens: dict[str, int] = field(default_factory=dict)  # files and too-large notes
    other_tokens: int = 0  # an index of left-out files
    allowed: set[str] = field(default_factory=set)  # edit-first files CheckWrite allows
    outcomes: dict[str, int] = field(default_factory=dict)  # file decisions: path -> Outcome
    lost: int = 0  # complement: see Counts.harness_lost
    unpredicted: int = 0

    def beside(self, harness: Restored) -> Restored:
        """A complement's restoration (this) together with the harness's own at the same
        boundary: what the model gets from both, and how well the complement predicted the
        harness's choice."""
        left = {p for p, o in self.outcomes.items() if o == pb.OUTCOME_RESTORED_BY_HARNESS}
        whole = {p for p, o in harness.outcomes.items() if o == pb.OUTCOME_RESTORED}
        out = Restored(
            lines={p: set(ls) for p, ls in harness.lines.items()},
            tokens=dict(harness.tokens),
            other_tokens=harness.other_tokens + self.other_tokens,
            allowed=harness.allowed | self.allowed,
            outcomes={**self.outcomes, **harness.outcomes},
            lost=len(left - whole),
            unpredicted=len(whole - left),
        )
        for p, ls in self.lines.items():
            out.lines.setdefault(p, set()).update(ls)
        for p, t in self.tokens.items():
            out.tokens[p] = out.tokens.get(p, 0) + t
        return out


@dataclass(slots=True)
class Scored:
    """One boundary under one policy: its counts per window."""

    point: Point
    restored: Restored
    counts: dict[int, Counts]


def restored_of(resp: pb.CompactResponse, paths: PathMap) -> Restored:
    out = Restored()
    for d in resp.decisions:
        if d.subject == pb.SUBJECT_FILE:
            out.outcomes[paths.original(d.name)] = d.outcome
    for a in resp.attachments:
        if a.kind == pb.ATTACHMENT_KIND_FILE:
            path = paths.original(a.file.path)
            out.lines[path] = set(range(a.file.start_line, a.file.start_line + a.file.num_lines))
            out.tokens[path] = out.tokens.get(path, 0) + a.tokens
        elif a.kind == pb.ATTACHMENT_KIND_COMPACT_FILE_REFERENCE:
            path = paths.original(a.file_reference.path)
            out.tokens[path] = out.tokens.get(path, 0) + a.tokens
        elif a.kind == getattr(pb, "ATTACHMENT_KIND_LEFT_OUT_FILES", -1):
            out.other_tokens += a.tokens
    return out


async def _allowed(
    checker: FileService,
    session: Session,
    agent: AgentState,
    paths: PathMap,
    wanted: Sequence[str],
) -> set[str]:
    """The files of `wanted` the daemon's CheckWrite allows to write right now, asked on a copy
    of the agent (the check marks an entry as used: the replay must not see that)."""
    probe = AgentState(
        PROBE_AGENT,
        agent.files.clone(),
        read_mtimes=dict(agent.read_mtimes),
        unverified=dict(agent.unverified),
        carried_reads=dict(agent.carried_reads),
    )
    session.agents[PROBE_AGENT] = probe
    checker.registry.sessions[session.session_id] = session
    try:
        out: set[str] = set()
        for path in wanted:
            local = paths.local(path)
            if local is None:
                continue
            req = pb.CheckWriteRequest(session_id=session.session_id, agent_id=PROBE_AGENT)
            req.path = local
            if (await checker.check_write(req)).result == pb.WRITE_CHECK_ALLOWED:
                out.add(path)
        return out
    finally:
        del session.agents[PROBE_AGENT]
        checker.registry.sessions.pop(session.session_id, None)


def _count(point: Point, restored: Restored, candidates: dict[str, set[int]], w: int) -> Counts:
    needed = point.needed(w, candidates)
    c = Counts(compactions=1)
    c.needed_files = len(needed)
    for path, lines in needed.items():
        have = restored.lines.get(path, set())
        hit = len(lines & have)
        c.needed_lines += len(lines)
        c.covered_lines += hit
        c.covered_files += hit == len(lines)
    c.tokens_restored = sum(restored.tokens.values()) + restored.other_tokens
    c.files_restored = len(restored.lines)
    c.wasted_tokens = sum(t for p, t in restored.tokens.items() if p not in needed)
    c.index_tokens = restored.other_tokens
    c.harness_lost, c.harness_unpredicted = restored.lost, restored.unpredicted
    for path, touch in point.first_touches(w).items():
        if path not in candidates:
            continue
        if touch.kind == "read":
            c.reads += 1
            lines = candidates[path] if touch.lines is None else set(touch.lines)
            if lines and lines <= restored.lines.get(path, set()):
                c.rereads_avoided += 1
                c.reread_tokens_avoided += touch.tokens
        else:
            c.edits_first += 1
            c.failed_edits_avoided += path in restored.allowed
    return c


async def _restorations(
    t: Transcript,
    points: Sequence[Point],
    profile: pb.Profile.ValueType,
    policy: pb.RestorePolicy,
    widest: int,
) -> dict[int, Restored]:
    """What `policy` restored at each of `points` (by the boundary's line), replayed over `t`."""
    by_line = {p.boundary.line: p for p in points}
    checker = FileService(Registry(Config()), Config())
    got: dict[int, Restored] = {}

    async def observe(
        b: Boundary, session: Session, agent: AgentState, resp: pb.CompactResponse, paths: PathMap
    ) -> None:
        point = by_line.get(b.line)
        if b.agent or point is None:
            return
        restored = restored_of(resp, paths)
        edits = [p for p, x in point.first_touches(widest).items() if x.kind != "read"]
        restored.allowed = await _allowed(checker, session, agent, paths, edits)
        got[b.line] = restored

    await replay(t, profile=profile, policy=policy, observe=observe)
    return got


async def score_transcript(
    t: Transcript, points: Sequence[Point], policy: Policy, windows: Sequence[int]
) -> list[Scored]:
    """`policy` replayed over `t`, scored at each of `points` for each window. A complement
    (`RestorePolicy.complement`) is scored together with the harness rule it complements,
    replayed beside it: Claude Code's own restoration plus the complement's."""
    got = await _restorations(t, points, policy.profile, policy.policy, max(windows))
    if policy.policy.complement == pb.HARNESS_RULE_CLAUDE_CODE:
        harness = await _restorations(
            t, points, pb.PROFILE_CLAUDE_CODE, pb.RestorePolicy(), max(windows)
        )
        got = {line: r.beside(harness.get(line, Restored())) for line, r in got.items()}
    out: list[Scored] = []
    carried: dict[str, set[int]] = {}
    for point in points:
        restored = got.get(point.boundary.line, Restored())
        candidates = {p: set(lines) for p, lines in point.seen.items()}
        for p, lines in carried.items():
            candidates.setdefault(p, set()).update(lines)
        counts = {w: _count(point, restored, candidates, w) for w in windows}
        out.append(Scored(point, restored, counts))
        carried = restored.lines
    return out
