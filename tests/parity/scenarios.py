"""The sessions `make parity` puts through the real Claude Code (docs/parity.md).

A scenario is a project (files with set mtimes, so the newest-first order is known), and a list
of turns: a scripted step (its tool calls, answered by the model server), a slash command, or an
action on disk between turns (a deletion). The turn after the compaction is the one whose request
is captured: it only answers with text, so the disk is as it was at the compaction.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.parity.model_server import AGENT_MARK, PLAN_FILE, SAVED_RESULT, Step, ToolCall

__all__ = ["SCENARIOS", "Command", "Delete", "Prompt", "Scenario"]

# Files get mtimes this far apart, oldest first in the order they are listed.
MTIME_STEP_S = 60
MTIME_BASE_S = 1_780_000_000  # 2026-05-28: in the past, before anything the run writes


@dataclass(frozen=True, slots=True)
class Prompt:
    step: int  # the model server's script key: the prompt is `PARITY-STEP <step>`


@dataclass(frozen=True, slots=True)
class Command:
    text: str  # a slash command, e.g. "/compact"


@dataclass(frozen=True, slots=True)
class Delete:
    path: str  # relative to the project


Turn = Prompt | Command | Delete


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    about: str
    files: Mapping[str, bytes]  # relative path -> content; mtimes in this order
    turns: Sequence[Turn]
    steps: Mapping[int, Step]
    captured_step: int  # the step whose first request follows the compaction
    trigger: str = "manual"
    mcp: bool = False  # start tests/parity/mcp_server.py as an MCP server
    permission_mode: str = "acceptEdits"
    allowed_tools: Sequence[str] = ()  # --allowedTools rules (a background shell's command)
    # Files under the session's HOME (relative to it), written and dated after `files`.
    home_files: Mapping[str, bytes] = field(default_factory=dict)

    def write(self, project: Path, home: Path | None = None) -> None:
        placed = [(project / rel, data) for rel, data in self.files.items()]
        if home is not None:
            placed += [(home / rel, data) for rel, data in self.home_files.items()]
        for i, (p, data) in enumerate(placed):
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
            t = MTIME_BASE_S + i * MTIME_STEP_S
            os.utime(p, (t, t))


def _under(root: str) -> Callable[[str], str]:
    """The absolute path of a project file, for the tool calls."""
    return lambda rel: f"{root}/{rel}"


def _read(path: str, **kw: int) -> ToolCall:
    return ToolCall("Read", {"file_path": path, **kw})


def _lines(prefix: str, n: int, width: int = 60) -> bytes:
    return "".join(f"{prefix} {i:05d} " + "x" * (width - 14) + "\n" for i in range(n)).encode()


def files_scenario(root: str) -> Scenario:
    """Eight files read (the top-5 rule drops three), a ranged read, an edit, CRLF, an empty
    file, one holding a closing tag; manual `/compact` (a kept tail)."""

    p = _under(root)

    tag = b"# Tag\n\nA line with </system-reminder> inside.\nAnd < / System-Reminder > too.\n"
    files = {  # oldest first; the edit makes app.py the newest
        "src/old.py": b"OLD = True\n",
        "data/big.txt": _lines("big", 420),  # ~25 KB: over 5,000 tokens
        "src/util.py": b"def helper():\n    return 42\n",
        "docs/tag.md": tag,
        "notes/range.txt": _lines("range", 120),
        "src/crlf.txt": b"first line\r\nsecond line\r\nthird\r\n",
        "src/empty.txt": b"",
        "src/app.py": b"def main():\n    x = 1\n    return x\n",
    }
    steps = {
        1: Step(
            calls=(
                _read(p("src/old.py")),
                _read(p("data/big.txt")),
                _read(p("notes/range.txt"), offset=10, limit=20),
                _read(p("src/crlf.txt")),
                _read(p("src/empty.txt")),
                _read(p("docs/tag.md")),
                _read(p("src/util.py")),
                _read(p("src/app.py")),
                ToolCall(
                    "Edit",
                    {"file_path": p("src/app.py"), "old_string": "x = 1", "new_string": "x = 2"},
                ),
            )
        ),
        2: Step(),
    }
    turns = (Prompt(1), Command("/compact"), Prompt(2))
    return Scenario(
        "files",
        "8 files read (ranged, CRLF, empty, a closing tag; 3 dropped by rank), an edit; /compact",
        files,
        turns,
        steps,
        captured_step=2,
    )


def _skill(name: str, description: str, body: str) -> bytes:
    return f"---\nname: {name}\ndescription: {description}\n---\n\n{body}".encode()


def _text(n_chars: int, word: str) -> bytes:
    line = (word + " ") * 9 + word + "\n"
    return (line * (n_chars // len(line) + 1))[:n_chars].encode()


def session_scenario(root: str) -> Scenario:
    """Memory files (CLAUDE.md, CLAUDE.local.md, a nested one), two skills (one over 20 KB), an
    MCP server with instructions, eleven files read (the newest deleted before the compaction,
    six dropped by rank), files near the per-file cap on both sides of it and a JSON file; an
    automatic compaction (the model reports the context full)."""

    p = _under(root)

    files = {
        ".claude/skills/style/SKILL.md": _skill(
            "style",
            "House style for the parity project.",
            "Use four spaces.\nName things plainly.\n",
        ),
        ".claude/skills/guide/SKILL.md": _skill(
            "guide", "The long project guide.", _text(24_000, "guide").decode()
        ),
        "src/m1.py": b"M1 = 1\n",
        "src/m2.py": b"M2 = 2\n",
        "src/m3.py": b"M3 = 3\n",
        "src/m4.py": b"M4 = 4\n",
        "conf/data.json": b'{"rows": ['
        + b",".join(b'{"k": %d}' % i for i in range(1200))
        + b"]}\n",
        "docs/near_whole.txt": _text(14_000, "whole"),  # estimate 3,500, count 4,667: whole
        "docs/near_note.txt": _text(18_000, "note"),  # estimate 4,500, count 6,000: a note
        "src/m5.py": b"def five():\n    return 5\n",
        "src/gone.py": b"GONE = True\n",  # deleted before the compaction
        # Memory files, the newest of all: only their exclusion keeps them out of the top 5.
        "CLAUDE.md": b"# Project memory\n\nKeep functions short.\n",
        "CLAUDE.local.md": b"Local notes: the test database is on port 5433.\n",
        "src/CLAUDE.md": b"Nested memory: src/ holds the library.\n",
    }
    reads = [
        "CLAUDE.md", "CLAUDE.local.md", "src/CLAUDE.md", "src/m1.py", "src/m2.py", "src/m3.py",
        "conf/data.json", "docs/near_whole.txt", "docs/near_note.txt", "src/m4.py", "src/m5.py",
        "src/gone.py",
    ]  # fmt: skip
    steps = {
        1: Step(
            calls=(
                *(_read(p(r)) for r in reads),
                ToolCall("Skill", {"skill": "style"}),
                ToolCall("Skill", {"skill": "guide"}),
                ToolCall(
                    "Bash",
                    {
                        "command": "sleep 600",
                        "description": "Wait for the build",
                        "run_in_background": True,
                    },
                ),
                ToolCall(
                    "Agent",
                    {
                        "description": "Survey the notes",
                        "prompt": f"{AGENT_MARK}: survey the notes folder.",
                        "subagent_type": "general-purpose",
                        "run_in_background": True,
                    },
                ),
            ),
            report_input_tokens=990_000,
        ),
        2: Step(),
    }
    return Scenario(
        "session",
        "memory files, 2 skills (one over 20 KB), an MCP server, 11 reads, near the cap; auto",
        files,
        (Prompt(1), Delete("src/gone.py"), Prompt(2)),
        steps,
        captured_step=2,
        trigger="auto",
        mcp=True,
        allowed_tools=("Bash(sleep:*)",),
    )


def plan_scenario(root: str) -> Scenario:
    """Plan mode from the start: reads (one file twice), the plan written to the plan file
    Claude Code names, manual `/compact`. The plan-mode reminder's prose is postcompact's own
    wording by design; the plan file reference is compared."""

    p = _under(root)

    files = {
        "src/server.py": b"def serve():\n    pass\n",
        "src/client.py": b"def call():\n    return None\n",
        "README.md": b"# Service\n\nA small service.\n",
    }
    plan = "# Plan\n\n1. Add a health check to serve().\n2. Call it from the client.\n"
    steps = {
        1: Step(
            calls=(
                _read(p("README.md")),
                _read(p("src/server.py")),
                _read(p("src/client.py")),
                _read(p("src/server.py")),  # a re-read
                ToolCall("Write", {"file_path": PLAN_FILE, "content": plan}),
            )
        ),
        2: Step(),
    }
    return Scenario(
        "plan",
        "plan mode, 4 reads (one a re-read), the plan file written; /compact",
        files,
        (Prompt(1), Command("/compact"), Prompt(2)),
        steps,
        captured_step=2,
        permission_mode="plan",
    )


def budget_scenario(root: str) -> Scenario:
    """The 50,000-token budget, measured on the attachment's JSON: four files of control
    characters each within the per-file cap, whose JSON (every character written `\\u0001`)
    is six times as long, so the third and fourth no longer fit; manual `/compact`."""

    p = _under(root)

    ctl = ("\x01" * 99 + "\n") * 144  # 14,400 UTF-16 units: counted 4,800 tokens
    files = {f"data/c{i}.bin.txt": ctl.encode() for i in range(1, 5)}
    files["src/small.py"] = b"SMALL = 1\n"
    steps = {1: Step(calls=tuple(_read(p(rel)) for rel in files)), 2: Step()}
    return Scenario(
        "budget",
        "4 files each within the cap whose JSON is 6x their size, 1 small; /compact",
        files,
        (Prompt(1), Command("/compact"), Prompt(2)),
        steps,
        captured_step=2,
    )


def saved_scenario(root: str) -> Scenario:
    """Saved tool results and uploads (Claude Code 2.1.333 on): a shell command whose output
    Claude Code saves to its `tool-results` folder, read back, and two other saved results of
    the projects folder, one deleted before the compaction (named all the same); six project
    files (the five slots full); a saved result's artifact, a
    `project-file-` copy, a `tool-results` folder of the project, a file of `~/.claude/uploads`
    and one under an `artifact-files` folder, all read; manual `/compact`."""

    p = _under(root)
    home = root.rsplit("/", 1)[0] + "/home"
    saved = ".claude/projects/-elsewhere/0000-session/tool-results"
    files = {f"src/s{i}.py": f"S{i} = {i}\n".encode() for i in range(1, 7)}
    files["logs/tool-results/run.txt"] = b"a project folder named tool-results\n"
    files["out/artifact-files/report.md"] = b"# Report\n\nAn artifact's file.\n"
    home_files = {
        f"{saved}/manual.txt": b"a saved tool result of another session\n",
        # Deleted before the compaction: the newer of the two, as the replay stamps a file it
        # cannot stat with the time of its read, later than any mtime given here.
        f"{saved}/gone.txt": b"a saved tool result deleted before the compaction\n",
        f"{saved}/artifact-5f3a.txt": b"a saved artifact\n",
        f"{saved}/project-file-notes.txt": b"a saved project file\n",
        ".claude/uploads/0000-upload/brief.txt": b"an uploaded brief\n",
    }
    reads = [
        *(p(rel) for rel in files),
        *(f"{home}/{rel}" for rel in home_files),
    ]
    steps = {
        1: Step(
            calls=(
                *(_read(r) for r in reads),
                ToolCall("Bash", {"command": "seq 1 12000", "description": "Count to 12000"}),
                _read(SAVED_RESULT),
            )
        ),
        2: Step(),
    }
    return Scenario(
        "saved",
        "saved tool results read (3 named outside the 5 slots, 1 deleted), an artifact, uploads",
        files,
        (Prompt(1), Delete(f"../home/{saved}/gone.txt"), Command("/compact"), Prompt(2)),
        steps,
        captured_step=2,
        allowed_tools=("Bash(seq:*)", "Read"),
        home_files=home_files,
    )


SCENARIOS: dict[str, Callable[[str], Scenario]] = {
    "plan": plan_scenario,
    "budget": budget_scenario,
    "files": files_scenario,
    "session": session_scenario,
    "saved": saved_scenario,
}
