"""Decisions and per-category totals collected while the pipeline runs."""

from __future__ import annotations

from dataclasses import dataclass, field

from postcompact.v1 import postcompact_pb2 as pb

__all__ = ["CATEGORIES", "DROPPED", "Outcome"]

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


@dataclass(slots=True)
class _Totals:
    attachments: int = 0
    dropped: int = 0
    tokens: int = 0


@dataclass(slots=True)
class Outcome:
    """Attachments in injection order, decisions, and totals per category."""

    attachments: list[pb.Attachment] = field(default_factory=list)
    decisions: list[pb.Decision] = field(default_factory=list)
    totals: dict[str, _Totals] = field(default_factory=lambda: {c: _Totals() for c in CATEGORIES})

    def attach(self, category: str, attachment: pb.Attachment) -> None:
        self.attachments.append(attachment)
        t = self.totals[category]
        t.attachments += 1
        t.tokens += attachment.tokens

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
    ) -> None:
        self.decisions.append(
            pb.Decision(
                subject=subject, name=name, outcome=outcome, tokens=tokens, rank=rank, detail=detail
            )
        )
        if outcome in DROPPED:
            self.totals[category].dropped += 1

    def response(self, compaction: int) -> pb.CompactResponse:
        return pb.CompactResponse(
            attachments=self.attachments,
            decisions=self.decisions,
            totals=[
                pb.CategoryTotals(
                    category=c, attachments=t.attachments, dropped=t.dropped, tokens=t.tokens
                )
                for c, t in self.totals.items()
            ],
            compaction=compaction,
        )
