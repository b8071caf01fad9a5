"""The plugin's hook command (clients/go/cmd/postcompact-hook), compiled, fed the payloads Claude
Code 2.1.336 sends, against a live daemon: what reaches the daemon, what the hook prints.

The end-to-end test (test_claude_code.py) runs it inside the real Claude Code; these cover what a
scripted session does not: a sub-agent's calls, the PreCompact sweep of what an async report
missed, a daemon that cannot start across several hook processes, a Codex payload.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from postcompact_client.v1 import postcompact_pb2 as pb

from tests.daemon.conftest import RunningDaemon, short_dir, start_daemon

ROOT = Path(__file__).resolve().parents[2]
GO = os.environ.get("GO") or shutil.which("go") or "/usr/local/go/bin/go"
PART_CHARS = 9_900  # postcompact-hook's PartChars
# The first test builds the hook (a cold Go build takes a minute or two on two busy cores).
pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def hook_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hook") / "postcompact-hook"
    subprocess.run(
        [GO, "build", "-o", str(out), "./cmd/postcompact-hook"],
        cwd=ROOT / "clients" / "go",
        check=True,
        timeout=600,
    )
    return out


@pytest.fixture
def daemon() -> Iterator[RunningDaemon]:
    d = start_daemon(["--no-persist"])
    yield d
    d.stop()
    shutil.rmtree(d.dir, ignore_errors=True)


@dataclass
class Hook:
    """Runs the hook as Claude Code does: the payload on stdin, the plugin's environment."""

    bin: Path
    env: dict[str, str]
    project: Path
    session: str = "3d029608-6441-40eb-b1c1-24f4726f0f33"

    @property
    def session_id(self) -> str:
        return f"claude-code-{self.session}"

    def __call__(self, event: str, *args: str, **fields: Any) -> str:
        payload = {
            "session_id": self.session,
            "transcript_path": str(self.project.parent / "transcript.jsonl"),
            "cwd": str(self.project),
            "prompt_id": "p1",
            "permission_mode": "acceptEdits",
            "hook_event_name": event,
            **fields,
        }
        r = subprocess.run(
            [str(self.bin), *args],
            input=json.dumps(payload),
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert r.returncode == 0, r.stderr
        return r.stdout

    def read(self, rel: str, tool_use_id: str, agent: str = "", **rng: int) -> None:
        path = self.project / rel
        text = path.read_text()
        lines = text.split("\n")
        start, num = rng.get("offset", 1), rng.get("limit", len(lines))
        extra = {"agent_id": agent, "agent_type": "general-purpose"} if agent else {}
        self(
            "PostToolUse",
            tool_name="Read",
            tool_use_id=tool_use_id,
            tool_input={"file_path": str(path), **rng},
            tool_response={
                "type": "text",
                "file": {
                    "filePath": str(path),
                    "content": "\n".join(lines[start - 1 : start - 1 + num]),
                    "numLines": num,
                    "startLine": start,
                    "totalLines": len(lines),
                },
            },
            **extra,
        )

    @property
    def state(self) -> Path:
        return Path(self.env["POSTCOMPACT_HOOK_STATE"])

    def log(self) -> str:
        log = self.state / "hook.log"
        return log.read_text() if log.exists() else ""


def make_hook(hook_bin: Path, base: Path, address: str, **env: str) -> Hook:
    project = base / "project"
    (project / "src").mkdir(parents=True)
    home = base / "home"
    home.mkdir()
    full = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "POSTCOMPACT_ADDRESS": address,
        "POSTCOMPACT_HOOK_STATE": str(base / "state"),
        "CLAUDE_PROJECT_DIR": str(project),
        "CLAUDECODE": "1",
        **env,
    }
    return Hook(hook_bin, full, project)


@pytest.fixture
def hook(hook_bin: Path, daemon: RunningDaemon, tmp_path: Path) -> Hook:
    return make_hook(hook_bin, tmp_path, daemon.address, POSTCOMPACT_BIN="/bin/false")


def write(project: Path, rel: str, n_lines: int, tag: str = "") -> None:
    f = project / rel
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text("".join(f"{tag or rel} line {i:03d} " + "z" * 50 + "\n" for i in range(n_lines)))


def preview(
    daemon: RunningDaemon, session: str, agent: str = "", policy: pb.RestorePolicy | None = None
) -> Any:
    return daemon.client.call(
        "PreviewCompact",
        pb.PreviewCompactRequest(session_id=session, agent_id=agent, policy=policy),
    )


def decided(answer: Any) -> dict[str, str]:
    return {
        Path(d.name).name: pb.Outcome.Name(d.outcome)
        for d in answer.decisions
        if d.subject == pb.SUBJECT_FILE
    }


def test_a_sub_agents_reads_go_to_its_own_agent(hook: Hook, daemon: RunningDaemon) -> None:
    write(hook.project, "src/main.py", 10)
    write(hook.project, "src/sub.py", 10)
    hook.read("src/main.py", "t1")
    hook.read("src/sub.py", "t2", agent="abb2779657b8067af")
    info = next(s for s in daemon.client.list_sessions() if s.session_id == hook.session_id)
    assert set(info.agent_ids) == {"", "abb2779657b8067af"}
    assert set(decided(preview(daemon, hook.session_id))) == {"main.py"}
    assert set(decided(preview(daemon, hook.session_id, "abb2779657b8067af"))) == {"sub.py"}
    hook("SubagentStop", agent_id="abb2779657b8067af", agent_type="general-purpose")
    info = next(s for s in daemon.client.list_sessions() if s.session_id == hook.session_id)
    assert list(info.agent_ids) == [""]
    assert not hook.log()


def transcript_line(kind: str, **rec: Any) -> str:
    return json.dumps({"type": kind, **rec})


def test_pre_compact_records_what_the_async_reports_missed(
    hook: Hook, daemon: RunningDaemon
) -> None:
    """Three reads in the transcript, one of them reported: PreCompact records the other two,
    each at its result's time (ranked where it happened), and prints nothing. (Five newer files,
    Claude Code's own restoration, keep the three among postcompact's.)"""
    lines = []
    for i, name in enumerate(("a.py", "b.py", "c.py")):
        write(hook.project, f"src/{name}", 5)
        path = hook.project / "src" / name
        os.utime(path, (1_600_000_000 + i, 1_600_000_000 + i))
        use = {"type": "tool_use", "id": f"r{i}", "name": "Read", "input": {"file_path": str(path)}}
        lines.append(transcript_line("assistant", message={"content": [use]}))
        file = {"filePath": str(path), "content": path.read_text(), "numLines": 6, "startLine": 1}
        lines.append(
            transcript_line(
                "user",
                timestamp=f"2020-12-05T05:15:5{i}.000Z",
                toolUseResult={"type": "text", "file": {**file, "totalLines": 6}},
                message={"content": [{"type": "tool_result", "tool_use_id": f"r{i}"}]},
            )
        )
    (hook.project.parent / "transcript.jsonl").write_text("\n".join(lines) + "\n")
    for i in range(5):
        write(hook.project, f"src/new{i}.py", 5)
        hook.read(f"src/new{i}.py", f"n{i}")
    hook.read("src/b.py", "r1")
    assert "a.py" not in decided(preview(daemon, hook.session_id))
    assert hook("PreCompact", trigger="manual", custom_instructions=None) == ""
    # Ranked by recency, the order of the times recorded (the session's own ranking, by value
    # per token, weighs more than that).
    recency = pb.RestorePolicy(ranking=pb.FILE_RANKING_RECENCY)
    ranked = [
        Path(d.name).name
        for d in sorted(
            preview(daemon, hook.session_id, policy=recency).decisions, key=lambda d: d.rank
        )
        if d.subject == pb.SUBJECT_FILE and d.outcome == pb.OUTCOME_RESTORED
    ]
    # b.py was reported now (the newest); c.py and a.py at their results' times.
    assert ranked == ["b.py", "c.py", "a.py"]
    assert not hook.log()


def test_parts_each_fit_and_post_compact_commits_them(hook: Hook, daemon: RunningDaemon) -> None:
    """Fourteen files read: Claude Code's five left to it, the rest in parts of at most 9,900
    characters, whole files, every file once; PostCompact commits those and prints nothing."""
    for i in range(14):
        write(hook.project, f"src/f{i:02d}.py", 20)
        hook.read(f"src/f{i:02d}.py", f"t{i}")
    parts = []
    for k in (1, 2, 3):
        out = hook("SessionStart", "--part", str(k), source="compact", model="m")
        if out:
            ctx = json.loads(out)["hookSpecificOutput"]
            assert ctx["hookEventName"] == "SessionStart"
            parts.append(ctx["additionalContext"])
    assert len(parts) >= 2, "the restoration did not need parts?"
    for text in parts:
        assert len(text.encode("utf-16-le")) // 2 <= PART_CHARS
        assert "<system-reminder>" not in text
    files = [
        json.loads(line.split("input: ", 1)[1])["file_path"]
        for text in parts
        for line in text.split("\n")
        if line.startswith("Called the Read tool with the following input: ")
    ]
    assert len(files) == len(set(files))
    answer = preview(daemon, hook.session_id)
    assert sorted(files) == sorted(a.file.path for a in answer.attachments)
    harness = {n for n, o in decided(answer).items() if o == "OUTCOME_RESTORED_BY_HARNESS"}
    assert len(harness) == 5
    assert not harness & {Path(f).name for f in files}
    assert hook("PostCompact", trigger="manual", compact_summary="s") == ""
    info = next(s for s in daemon.client.list_sessions() if s.session_id == hook.session_id)
    assert info.compactions == 1
    assert not hook.log()


def test_a_daemon_that_cannot_start_is_tried_once_and_told_once(
    hook_bin: Path, tmp_path: Path
) -> None:
    base = short_dir()
    try:
        starts = tmp_path / "starts"
        fake = tmp_path / "postcompact"
        fake.write_text(
            f"#!/bin/sh\necho start >> {starts}\necho 'no room on the disk' >&2\nexit 1\n"
        )
        fake.chmod(0o755)
        h = make_hook(hook_bin, tmp_path, f"unix://{base}/d.sock", POSTCOMPACT_BIN=str(fake))
        write(h.project, "src/a.py", 5)
        out = h("SessionStart", source="startup", model="m")
        message = json.loads(out)["systemMessage"]
        assert "could not be started" in message
        assert "no room on the disk" in message
        for i in range(5):  # in the back-off: no hook process starts it again
            h.read("src/a.py", f"t{i}")
        assert h("PreCompact", trigger="auto", custom_instructions=None) == ""
        for k in (1, 2, 3):  # the session was told already
            assert h("SessionStart", "--part", str(k), source="compact", model="m") == ""
        assert h("PostCompact", trigger="auto", compact_summary="s") == ""
        assert starts.read_text().count("start") == 1
        marker = json.loads((h.state / "daemon-start-failed.json").read_text())
        assert marker["failures"] == 1
        assert "no room on the disk" in marker["reason"]
        # Another session is told too, once.
        h.session = "another"
        out = h("SessionStart", source="startup", model="m")
        assert "could not be started" in json.loads(out)["systemMessage"]
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_codex_payload_is_left_alone(hook: Hook, daemon: RunningDaemon) -> None:
    write(hook.project, "src/a.py", 5)
    env = dict(hook.env)
    del env["CLAUDECODE"]
    codex = Hook(hook.bin, env, hook.project)
    out = codex("PostToolUse", turn_id="t1", tool_name="Read", tool_input={}, tool_response={})
    assert out == ""
    assert not [s for s in daemon.client.list_sessions() if s.session_id == hook.session_id]


def test_a_budget_of_the_kept_files_commits_exactly_them(hook: Hook, daemon: RunningDaemon) -> None:
    """What PostCompact relies on when files do not fit the parts: the same compaction with a
    file budget of the tokens of the files kept (a prefix of the ranking) restores exactly those,
    and records the others as dropped by the budget."""
    for i in range(12):
        write(hook.project, f"src/g{i:02d}.py", 20)
        hook.read(f"src/g{i:02d}.py", f"t{i}")
    policy = pb.RestorePolicy(
        complement=pb.HARNESS_RULE_CLAUDE_CODE, max_tokens_per_file=2_400, file_token_budget=4_800
    )
    full = daemon.client.call(
        "PreviewCompact", pb.PreviewCompactRequest(session_id=hook.session_id, policy=policy)
    )
    assert len(full.attachments) >= 3
    kept = full.attachments[:2]
    policy.file_token_budget = sum(a.tokens for a in kept)
    cut = daemon.client.call(
        "Compact", pb.CompactRequest(session_id=hook.session_id, policy=policy)
    )
    assert [a.file.path for a in cut.attachments] == [a.file.path for a in kept]
    dropped = {d.name for d in cut.decisions if d.outcome == pb.OUTCOME_DROPPED_BY_BUDGET}
    assert dropped == {a.file.path for a in full.attachments[2:]}
