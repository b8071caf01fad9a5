"""A Compact's answer as `Outcome.wire` writes it (restore/outcome.py): the serialised attachments,
then the decisions, totals and count that the core writes (`core.compact_tail`), byte for byte
the protobuf runtime's serialisation of the same message, decisions in the documented order."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from postcompact import core
from postcompact.restore.outcome import CATEGORIES, DROPPED, Outcome
from postcompact.v1 import postcompact_pb2 as pb

_INT32 = st.integers(min_value=-(2**31), max_value=2**31 - 1)
_INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
# Valid text (a protobuf string field holds UTF-8: no lone surrogates).
_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=16)
_DECISION = st.tuples(_INT32, _TEXT, _INT32, _INT64, _INT32, _TEXT, _INT64)
_TOTALS = st.tuples(_TEXT, _INT32, _INT32, _INT64)


def _message(
    decisions: list[tuple[int, str, int, int, int, str, int]],
    totals: list[tuple[str, int, int, int]],
    compaction: int,
) -> pb.CompactResponse:
    resp = pb.CompactResponse(compaction=compaction)
    for subject, name, outcome, tokens, rank, detail, content in decisions:
        resp.decisions.add(
            subject=pb.Subject.ValueType(subject),
            name=name,
            outcome=pb.Outcome.ValueType(outcome),
            tokens=tokens,
            rank=rank,
            detail=detail,
            content_tokens=content,
        )
    for category, attachments, dropped, tokens in totals:
        resp.totals.add(category=category, attachments=attachments, dropped=dropped, tokens=tokens)
    return resp


@given(st.lists(_DECISION, max_size=6), st.lists(_TOTALS, max_size=8), _INT64)
def test_compact_tail_is_the_runtime_serialisation(
    decisions: list[tuple[int, str, int, int, int, str, int]],
    totals: list[tuple[str, int, int, int]],
    compaction: int,
) -> None:
    want = _message(decisions, totals, compaction).SerializeToString()
    decided = [core.Decision(*d) for d in decisions]
    counted = [core.Totals(*t) for t in totals]
    assert core.compact_tail(decided, counted, compaction) == want


def test_compact_tail_refuses_what_the_message_refuses() -> None:
    for bad in ("/a/\udcff",):  # a lone surrogate: not UTF-8
        try:
            core.compact_tail([core.Decision(1, bad, 1, 0, 0, "", 0)], [], 0)
        except UnicodeEncodeError:
            pass
        else:
            raise AssertionError("a lone surrogate was written")


def _expected_order(
    decided: list[tuple[int, str, int, int, int, str, int]],
) -> list[tuple[int, str, int, int, int, str, int]]:
    """Subjects in the order first decided; within one, ranked decisions by rank, then the
    unranked in the order decided."""
    subjects: list[int] = []
    for d in decided:
        if d[0] not in subjects:
            subjects.append(d[0])
    out = []
    for s in subjects:
        mine = [d for d in decided if d[0] == s]
        out += sorted((d for d in mine if d[4] != 0), key=lambda d: d[4])
        out += [d for d in mine if d[4] == 0]
    return out


_SUBJECTS = st.sampled_from([pb.SUBJECT_FILE, pb.SUBJECT_SKILL, pb.SUBJECT_HOOK])
_OUTCOMES = st.sampled_from(sorted(pb.Outcome.values()))
_DECIDED = st.tuples(
    _SUBJECTS,
    _TEXT,
    _OUTCOMES,
    st.integers(0, 10**6),
    st.integers(0, 5),
    _TEXT,
    st.integers(0, 10**6),
)


@given(
    st.lists(st.binary(max_size=40), max_size=3),
    st.lists(_TEXT, max_size=2),
    st.lists(st.tuples(st.sampled_from(CATEGORIES), _DECIDED), max_size=10),
    st.integers(0, 10**6),
)
def test_wire_is_the_message_serialised(
    serialised: list[bytes],
    built: list[str],
    decided: list[tuple[str, tuple[int, str, int, int, int, str, int]]],
    compaction: int,
) -> None:
    out = Outcome()
    attachments = []
    for i, data in enumerate(serialised):
        att = pb.Attachment(kind=pb.ATTACHMENT_KIND_FILE, blocks=[data.hex()], tokens=i)
        attachments.append(att)
        frame = pb.CompactResponse(attachments=[att]).SerializeToString()
        out.attach_wire("files", frame, att.tokens)
    for text in built:
        att = pb.Attachment(kind=pb.ATTACHMENT_KIND_PLAN_MODE, blocks=[text], tokens=len(text))
        attachments.append(att)
        out.attach("plan", att)
    totals: dict[str, list[int]] = {c: [0, 0, 0] for c in CATEGORIES}
    for att, category in zip(
        attachments, ["files"] * len(serialised) + ["plan"] * len(built), strict=True
    ):
        totals[category][0] += 1
        totals[category][2] += att.tokens
    # Each step decides for its own subject: the decisions come in blocks of one subject.
    blocks: list[int] = []
    for _, d in decided:
        if d[0] not in blocks:
            blocks.append(d[0])
    decided = sorted(decided, key=lambda cd: blocks.index(cd[1][0]))
    for category, (subject, name, outcome, tokens, rank, detail, content) in decided:
        out.decide(
            category,
            pb.Subject.ValueType(subject),
            name,
            pb.Outcome.ValueType(outcome),
            tokens=tokens,
            rank=rank,
            detail=detail,
            content_tokens=content,
        )
        totals[category][1] += outcome in DROPPED
    wire = out.wire(compaction)

    want = _message(
        _expected_order([d for _, d in decided]),
        [(c, totals[c][0], totals[c][1], totals[c][2]) for c in CATEGORIES],
        compaction,
    )
    want.attachments.extend(attachments)
    assert wire == want.SerializeToString()
    assert pb.CompactResponse.FromString(wire) == want
