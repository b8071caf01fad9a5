"""Decisions and per-category totals collected while the pipeline runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from postcompact import core, render
from postcompact.restore.meter import rough
from postcompact.v1 import postcompact_pb2 as pb

__all__ = ["CATEGORIES", "DROPPED", "Outcome", "Pending", "make"]

# Category names in CategoryTotals, in response order.
CATEGORIES = ("files", "tasks", "plan", "plan_mode", "skills", "deltas", "hooks")

# Outcomes counted as "dropped" in a category's totals (exclusions are not drops: the content is
# elsewhere — in the plan attachment, the memory files, or the preserved tail).
DROPPED = frozenset(
    {
        pb.OUTCOME_DROPPED_BY_RANK,
        pb.OUTCOME_DROPPED_BY_BUDGET,
        pb.OUTCOME_UNREADABLE,
        pb.OUTCOME_DENIED,
        pb.OUTCOME_BINARY,
        pb.OUTCOME_HOOK_FAILED,
        pb.OUTCOME_HOOK_TIMED_OUT,
    }
)


# A category with nothing in it (immutable: one each, shared by every answer).
_NONE = {c: core.Totals(c) for c in CATEGORIES}


@dataclass(slots=True)
class _Totals:
    attachments: int = 0
    dropped: int = 0
    tokens: int = 0


_PLACEMENTS: dict[str, pb.Placement.ValueType] = {
    render.USER: pb.PLACEMENT_USER,
    render.SYSTEM: pb.PLACEMENT_SYSTEM,
}


def make(
    kind: pb.AttachmentKind.ValueType,
    placement: str,
    blocks: Sequence[str],
    **payload: Any,
) -> pb.Attachment:
    """An attachment with its placement, text blocks, their rough token count and `payload`."""
    return pb.Attachment(
        kind=kind,
        placement=_PLACEMENTS[placement],
        blocks=blocks,
        tokens=rough("\n".join(blocks)),
        **payload,
    )


@dataclass(frozen=True, slots=True)
class Pending:
    """An attachment not built yet: `Outcome.attach_pending` builds and serialises it, so its
    (large) text blocks are copied into a message once."""

    kind: pb.AttachmentKind.ValueType
    placement: str
    blocks: list[str]
    tokens: int
    file: pb.FileAttachment | None = None
    file_reference: pb.CompactFileReference | None = None
    left_out_files: pb.LeftOutFiles | None = None


@dataclass(slots=True)
class Outcome:
    """Attachments in injection order, decisions, and totals per category.

    The files step's attachments (the first ones, and the largest) are kept serialised, as
    `CompactResponse.attachments` bytes (`attach_wire`, `attach_pending`): the core renders a
    restored file straight into those bytes, and the answer is their concatenation followed by
    the rest of the response (`wire`), so a restored file's text is never a Python string nor a
    message field. The other attachments are built in a response message that holds only them
    (adding a message to a response copies it: build each once, in place). The decisions and the
    totals are plain values, which the core writes after the attachments (`core.compact_tail`):
    a Compact decides on every candidate, and a message per decision cost more than the rest of
    the answer's Python."""

    _response: pb.CompactResponse = field(default_factory=pb.CompactResponse)
    totals: dict[str, _Totals] = field(default_factory=dict)  # the categories used, by name
    _head: list[bytes | core.Framed] = field(default_factory=list)
    # The decisions, in the order decided: the core writes them into the answer (`wire`), no
    # message built.
    _decisions: list[core.Decision] = field(default_factory=list)
    _built: bool = False  # an attachment was built in the response (`attach`)

    def attach(self, category: str, attachment: pb.Attachment) -> None:
        self._response.attachments.append(attachment)
        self._built = True
        self._count(category, attachment.tokens)

    def attach_wire(self, category: str, framed: bytes | core.Framed, tokens: int) -> None:
        """An attachment given as its `CompactResponse.attachments` bytes (key, length, the
        message; the core's `Framed` is copied once, into the answer). Only before any
        `attach`: these come first in the answer."""
        if self._built:
            raise RuntimeError("serialised attachments must precede the built ones")
        self._head.append(framed)
        self._count(category, tokens)

    def attach_pending(self, category: str, p: Pending) -> None:
        part = pb.CompactResponse()  # the attachment built in place, serialised framed
        att = part.attachments.add(kind=p.kind, placement=_PLACEMENTS[p.placement])
        att.blocks.extend(p.blocks)
        att.tokens = p.tokens
        if p.file is not None:
            att.file.CopyFrom(p.file)
        if p.file_reference is not None:
            att.file_reference.CopyFrom(p.file_reference)
        if p.left_out_files is not None:
            att.left_out_files.CopyFrom(p.left_out_files)
        self.attach_wire(category, part.SerializeToString(), p.tokens)

    def _count(self, category: str, tokens: int) -> None:
        t = self.totals.get(category)
        if t is None:
            t = self.totals[category] = _Totals()
        t.attachments += 1
        t.tokens += tokens

    def decide(
        self,
        category: str,
        subject: pb.Subject.ValueType,
        name: str,
        outcome: pb.Outcome.ValueType,
        *,
        tokens: int = 0,
        rank: int = 0,
        detail: str = "",
        content_tokens: int = 0,
    ) -> None:
        self._decisions.append(
            core.Decision(subject, name, outcome, tokens, rank, detail, content_tokens)
        )
        if outcome in DROPPED:
            t = self.totals.get(category)
            if t is None:
                t = self.totals[category] = _Totals()
            t.dropped += 1

    def decisions(self) -> list[core.Decision]:
        """The decisions so far, in the order decided."""
        return list(self._decisions)

    def wire(self, compaction: int) -> bytes:
        """The serialised response (call once, at the end): the serialised attachments, the
        built ones, then the rest (`core.compact_tail`). Each part is `CompactResponse` bytes in
        field order (attachments are field 1, the decisions 2, the totals 3, the count 5), so
        the concatenation is the message's own serialisation (also a `PreviewCompactResponse`'s:
        the two share their fields)."""
        parts = self._head
        if self._built:
            parts.append(self._response.SerializeToString())
        parts.append(core.compact_tail(self._ordered(), self._totals(), compaction))
        return b"".join(parts)

    def _ordered(self) -> list[core.Decision]:
        """The decisions in rank order within each subject (subjects in the order first
        decided; ranked first, then the unranked in the order they were decided)."""
        decisions = self._decisions
        ranks = [d.rank for d in decisions]
        if not any(
            ranks[i] > ranks[i + 1] or (ranks[i] == 0 < ranks[i + 1]) for i in range(len(ranks) - 1)
        ):
            return decisions
        first: dict[int, int] = {}
        for d in decisions:
            first.setdefault(d.subject, len(first))
        return sorted(
            decisions, key=lambda d: (first[d.subject], d.rank == 0, d.rank)
        )  # stable: equal keys keep the order decided

    def _totals(self) -> list[core.Totals]:
        """Every category's totals, in response order."""
        used = self.totals
        out = []
        for c in CATEGORIES:
            t = used.get(c)
            if t is None:
                out.append(_NONE[c])
            else:
                out.append(core.Totals(c, t.attachments, t.dropped, t.tokens))
        return out
