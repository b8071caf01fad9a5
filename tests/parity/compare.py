"""What Claude Code sent after a compaction, beside what the daemon restores for the same session
(docs/parity.md, "Against the running Claude Code").

From a capture (`tests.parity.session`): the transcript up to the compaction is imported into a
live daemon over its socket (profile `claude-code`, reads stamped with the files' mtimes, as the
running Claude Code stamped them), and a Compact is asked for with the kept tail (PARTIAL) or
without (FULL). Then, against the first request Claude Code made after the compaction:

- the files, in order: the transcript's `file` and `compact_file_reference` records after the
  boundary, against the daemon's file and too-large-note attachments;
- the user blocks: the run of text blocks from the first Read call block on, against the
  daemon's user-placed blocks, one by one. Claude Code ends the last block of each message it
  merges into the next with one `\\n` (docs/claude-code.md §10, a transport detail): a block
  equal but for that one `\\n` is counted equal, and said;
- the system sections: each system-placed attachment of the daemon must be a whole section
  (between `\\n\\n` joins) of Claude Code's closing system message, in the same order.

Kinds of Claude Code's that postcompact does not produce are listed, not compared.
"""

from __future__ import annotations

import collections
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from postcompact.transcript.build import conversation
from postcompact.transcript.parse import Boundary, parse
from postcompact.transcript.paths import PathMap
from postcompact_client.types import CompactKind, CompactResponse, Placement
from postcompact_client.v1 import postcompact_pb2 as pb

from tests.daemon.conftest import RunningDaemon

__all__ = ["Comparison", "compare"]

# The daemon's payload names, as Claude Code names the same attachment types.
KIND_NAMES = {
    "file": "file",
    "file_reference": "compact_file_reference",
    "task_status": "task_status",
    "plan_file_reference": "plan_file_reference",
    "plan_mode": "plan_mode",
    "invoked_skills": "invoked_skills",
    "deferred_tools_delta": "deferred_tools_delta",
    "agent_listing_delta": "agent_listing_delta",
    "mcp_instructions_delta": "mcp_instructions_delta",
    "hook_additional_context": "hook_additional_context",
    "skill_listing": "skill_listing",
}
# Claude Code's user blocks of a restored file start with one of these.
_FILE_BLOCK_HEADS = (
    "<system-reminder>\nCalled the Read tool",
    "<system-reminder>\nResult of calling the Read tool",
    "<system-reminder>\nNote: ",
)
_CONTEXT = 40  # bytes shown either side of a first difference
PLAN_PROSE = "postcompact's own wording, by design (docs/claude-code.md §8)"


@dataclass(slots=True)
class Item:
    kind: str  # Claude Code's attachment type
    what: str  # a path, or the section's first line
    equal: bool
    detail: str = ""  # the first difference, or a transport note
    by_design: bool = False  # differs on purpose (plan mode's prose): not a failure


@dataclass(slots=True)
class Comparison:
    scenario: str
    claude_code: str
    trigger: str
    cc_files: list[str]
    pc_files: list[str]
    items: list[Item] = field(default_factory=list)
    out_of_scope: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def files_equal(self) -> bool:
        return self.cc_files == self.pc_files

    @property
    def equal(self) -> bool:
        """Files and every attachment equal, but for what differs by design."""
        return self.files_equal and all(i.equal or i.by_design for i in self.items)

    def as_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "claude_code": self.claude_code,
            "trigger": self.trigger,
            "files_equal": self.files_equal,
            "cc_files": self.cc_files,
            "pc_files": self.pc_files,
            "items": [_item(i) for i in self.items],
            "out_of_scope": self.out_of_scope,
            "warnings": self.warnings,
        }


def _item(i: Item) -> dict[str, Any]:
    return {
        "kind": i.kind,
        "what": i.what,
        "equal": i.equal,
        "by_design": i.by_design,
        "detail": i.detail,
    }


def first_difference(ours: str, theirs: str) -> str:
    """Where two texts part, with a little of each around it."""
    n = 0
    limit = min(len(ours), len(theirs))
    while n < limit and ours[n] == theirs[n]:
        n += 1
    lo = max(0, n - _CONTEXT)
    return (
        f"at character {n}: postcompact {ours[lo : n + _CONTEXT]!r}, "
        f"Claude Code {theirs[lo : n + _CONTEXT]!r}"
    )


def _texts(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [
        b["text"]
        for b in content or []
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]


def _after_compaction(capture: dict[str, Any]) -> dict[str, Any]:
    """The first main-thread request after the compaction request."""
    seen = False
    for r in capture["requests"]:
        if r["kind"] == "compact":
            seen = True
        elif seen and r["kind"] == "main":
            body: dict[str, Any] = r["body"]
            return body
    raise ValueError("no request after the compaction was captured")


def _cc_user_blocks(body: dict[str, Any]) -> list[str]:
    """The run of restored-file blocks in the user messages (after the summary)."""
    blocks = [t for m in body["messages"][1:] if m.get("role") == "user" for t in _texts(m)]
    start = next((i for i, t in enumerate(blocks) if t.startswith(_FILE_BLOCK_HEADS[0])), None)
    if start is None:
        return []
    end = start
    while end < len(blocks) and blocks[end].startswith(_FILE_BLOCK_HEADS):
        end += 1
    return blocks[start:end]


def _cc_system_text(body: dict[str, Any]) -> str:
    last = body["messages"][-1]
    return "\n\n".join(_texts(last)) if last.get("role") == "system" else ""


def _recorded_after(records: Sequence[dict[str, Any]], boundary_line: int) -> list[dict[str, Any]]:
    """The attachment records Claude Code wrote after the boundary, up to the next prompt."""
    out: list[dict[str, Any]] = []
    for r in records[boundary_line:]:
        if r.get("type") == "attachment" and isinstance(r.get("attachment"), dict):
            out.append(r["attachment"])
        elif r.get("type") == "user" and not r.get("isCompactSummary") and not r.get("isMeta"):
            content = (r.get("message") or {}).get("content")
            if isinstance(content, list):  # the next prompt (not a slash command's record)
                break
    return out


def compare(capture: dict[str, Any], daemon: RunningDaemon, session_id: str) -> Comparison:
    transcript = Path(capture["transcript"]).read_bytes()
    lines = transcript.splitlines(keepends=True)
    t = parse(transcript)
    boundary = next(e for e in t.events if isinstance(e, Boundary))
    records = [json.loads(line) for line in lines]
    project, home = capture["project"], capture["home"]
    imp = daemon.client.import_transcript(
        b"".join(lines[: boundary.line - 1]),
        cwd=project,
        home=home,
        session_id=session_id,
        profile="claude-code",
        file_mtimes=True,
    )
    preserved = [  # the daemon's own message type, as the client's
        pb.ConversationMessage.FromString(m.SerializeToString())
        for m in conversation(boundary.preserved, PathMap.of([(project, project)]))
    ]
    s = daemon.client.session(session_id)
    resp = s.compact(
        kind=CompactKind.PARTIAL if preserved else CompactKind.FULL,
        preserved_messages=preserved,
        skip_hooks=True,
    )
    body = _after_compaction(capture)
    recorded = _recorded_after(records, boundary.line)
    # Files in order, a too-large note as "note <path>".
    cc_files = [
        ("note " if a["type"] == "compact_file_reference" else "") + str(a.get("filename", ""))
        for a in recorded
        if a.get("type") in ("file", "compact_file_reference")
    ]
    pc_files: list[str] = []
    for a in resp.attachments:
        if a.file is not None:
            pc_files.append(a.file.path)
        elif a.file_reference is not None:
            pc_files.append(f"note {a.file_reference.path}")
    out = Comparison(
        scenario=capture["scenario"],
        claude_code=capture["claude_code"],
        trigger=boundary.trigger,
        cc_files=cc_files,
        pc_files=pc_files,
        warnings=list(imp.warnings),
    )
    _compare_user(out, resp, _cc_user_blocks(body), project)
    produced = _compare_system(out, resp, _cc_system_text(body))
    sent = collections.Counter(str(a.get("type")) for a in recorded)
    for kind in sorted(set(sent) & set(KIND_NAMES.values()) - {"file", "compact_file_reference"}):
        if sent[kind] != produced[kind]:
            out.items.append(
                Item(kind, f"{kind} x{sent[kind]}", False, f"postcompact sent {produced[kind]}")
            )
    out.out_of_scope = sorted(set(sent) - set(KIND_NAMES.values()))
    return out


def _compare_user(out: Comparison, resp: CompactResponse, cc: list[str], project: str) -> None:
    ours = [
        (a, block) for a in resp.attachments if a.placement == Placement.USER for block in a.blocks
    ]
    for i in range(max(len(ours), len(cc))):
        if i >= len(ours):
            out.items.append(Item("file", cc[i][:80], False, "Claude Code sent a block more"))
            continue
        a, block = ours[i]
        kind = KIND_NAMES.get(a.payload_case or "", "?")
        path = a.file.path if a.file is not None else ""
        what = f"{os.path.relpath(path, project) if path else kind} block {i + 1}"
        if i >= len(cc):
            out.items.append(Item(kind, what, False, "postcompact sent a block more"))
        elif block == cc[i]:
            out.items.append(Item(kind, what, True))
        elif cc[i] == block + "\n":
            out.items.append(Item(kind, what, True, "Claude Code's merge newline after it"))
        else:
            out.items.append(Item(kind, what, False, first_difference(block, cc[i])))


def _compare_system(out: Comparison, resp: CompactResponse, cc: str) -> collections.Counter[str]:
    """Each system-placed attachment against Claude Code's closing system message; how many of
    each kind the daemon sent."""
    produced: collections.Counter[str] = collections.Counter()
    pos = 0
    for a in resp.attachments:
        if a.placement != Placement.SYSTEM:
            continue
        kind = KIND_NAMES.get(a.payload_case or "", "?")
        produced[kind] += 1
        section = "\n\n".join(a.blocks)
        head = section.split("\n", 1)[0][:80]
        at = cc.find(section, pos)
        whole = at >= 0 and (at == 0 or cc[at - 2 : at] == "\n\n")
        whole = whole and (
            at + len(section) == len(cc) or cc[at + len(section) :].startswith("\n\n")
        )
        if whole:
            out.items.append(Item(kind, head, True))
            pos = at + len(section)
            continue
        start = cc.find(head, pos) if head else -1
        if kind == "plan_mode":
            # The reminder's prose is postcompact's own (docs/claude-code.md §8); its count is
            # still compared below.
            out.items.append(Item(kind, head, False, PLAN_PROSE, by_design=True))
        elif start < 0:
            out.items.append(Item(kind, head, False, "Claude Code sent no such section"))
        else:
            out.items.append(Item(kind, head, False, first_difference(section, cc[start:])))
    return produced
