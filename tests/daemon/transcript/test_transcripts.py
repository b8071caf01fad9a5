"""Transcripts in, decisions out (docs/transcripts.md, docs/parity.md): parsing, import over the
daemon's RPC, replay, and the real Claude Code transcripts of ../shared/transcripts."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import grpc
import pytest
from postcompact.restore.file_step import saved_result, upload_or_download
from postcompact.transcript.parse import FileRead, ModeChanged, TranscriptError, parse
from postcompact.transcript.replay import BoundaryResult, replay
from postcompact.v1 import postcompact_pb2 as pb
from postcompact_client import PostcompactError

from tests.daemon.conftest import RunningDaemon, new_session_id, start_daemon


def _corpus_dir() -> Path:
    """The shared transcripts: $POSTCOMPACT_TRANSCRIPTS, else ../shared/transcripts beside the
    checkout, else the workplace's /work/shared/transcripts (a clone elsewhere)."""
    env = os.environ.get("POSTCOMPACT_TRANSCRIPTS")
    candidates = [Path(env)] if env else []
    candidates += [
        Path(__file__).resolve().parents[4] / "shared" / "transcripts",
        Path("/work/shared/transcripts"),
    ]
    return next((c for c in candidates if c.is_dir()), candidates[0])


CORPUS = _corpus_dir()
# A few transcripts in `make test`; the whole corpus in `make parity-corpus` (.ci/run).
ALL = os.environ.get("POSTCOMPACT_CORPUS") == "all"
FEW = {
    "blackgirlbytes__planetfall-seed-signalkit__09-cb2aeecea3-2-full.jsonl",
    "ebridges__wakil__32-340547b1ec32-0-full.jsonl",
    "entireio__cli__91-b42542f24f-0-full.jsonl",
    "JanDeDobbeleer__oh-my-posh__d3-cfdfe7f72d-0-full.jsonl",
}


# --- hand-made transcripts --------------------------------------------------------------------

T0 = "2026-03-01T10:00:00.000Z"


def _t(seconds: int) -> str:
    return f"2026-03-01T10:{seconds // 60:02d}:{seconds % 60:02d}.000Z"


def _rec(kind: str, uuid: str, at: int, **kw: Any) -> dict[str, Any]:
    base = {"type": kind, "uuid": uuid, "timestamp": _t(at), "sessionId": "s-orig"}
    base.setdefault("cwd", "/orig/app")
    base.update(kw)
    return base


def _read(uid: str, at: int, path: str, content: str, *, sidechain: str = "") -> list[Any]:
    extra = {"isSidechain": True, "agentId": sidechain} if sidechain else {"isSidechain": False}
    lines = content.count("\n") + 1
    return [
        _rec(
            "assistant",
            f"a-{uid}",
            at,
            message={
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": uid, "name": "Read", "input": {"file_path": path}}
                ],
            },
            **extra,
        ),
        _rec(
            "user",
            f"u-{uid}",
            at + 1,
            message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": uid}]},
            toolUseResult={
                "type": "text",
                "file": {
                    "filePath": path,
                    "content": content,
                    "numLines": lines,
                    "startLine": 1,
                    "totalLines": lines,
                },
            },
            **extra,
        ),
    ]


def _jsonl(records: list[Any]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def _boundary(uid: str, at: int) -> dict[str, Any]:
    return _rec(
        "system",
        uid,
        at,
        subtype="compact_boundary",
        content="Conversation compacted",
        compactMetadata={"trigger": "auto", "preTokens": 170000},
    )


def test_a_bad_line_is_an_error_naming_it() -> None:
    good = _jsonl(_read("t1", 1, "/orig/app/a.ts", "x\n"))
    with pytest.raises(TranscriptError) as err:
        parse(good + b'{"type": "user", "oops"\n' + good)
    assert err.value.line == 3
    assert "not valid JSON" in str(err.value)
    with pytest.raises(TranscriptError) as err:
        parse(good + b'{"type": "user", "message": {"role": "us')
    assert err.value.line == 3
    assert "truncated" in str(err.value)
    with pytest.raises(TranscriptError, match="line 1: a record is a JSON object, not list"):
        parse(b"[1, 2]\n")
    with pytest.raises(TranscriptError, match="no records"):
        parse(b"\n\n")
    with pytest.raises(TranscriptError, match=r"line 2: not UTF-8"):
        parse(good[: good.index(b"\n") + 1] + b'{"a": "\xff"}\n')


def test_events_come_in_order_per_agent() -> None:
    records = [
        *_read("t1", 1, "/orig/app/a.ts", "a\n"),
        *_read("t2", 3, "/orig/app/b.ts", "b\n", sidechain="helper"),
        _boundary("b1", 10),
    ]
    t = parse(_jsonl(records))
    reads = [e for e in t.events if isinstance(e, FileRead)]
    assert [(e.agent, e.path) for e in reads] == [
        ("", "/orig/app/a.ts"),
        ("helper", "/orig/app/b.ts"),
    ]
    (b,) = t.boundaries
    assert (b.uuid, b.trigger, b.has_recorded_restore) == ("b1", "auto", False)
    assert t.cwd == "/orig/app"
    assert t.session_id == "s-orig"


def test_import_over_the_rpc(daemon: RunningDaemon, tmp_path: Path) -> None:
    project = tmp_path / "app"
    (project / "src").mkdir(parents=True)
    (project / "src/a.ts").write_text("a\n")
    (project / "src/b.ts").write_text("b\n")
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "notes.md").write_text("n\n")
    records = [
        *_read("t1", 1, "/orig/app/src/a.ts", "a\n"),
        *_read("t2", 3, "/data/notes/notes.md", "n\n"),
        *_read("t3", 5, "/orig/app/src/b.ts", "b\n", sidechain="helper"),
        _boundary("b1", 10),
        *_read("t4", 12, "/orig/app/src/b.ts", "b\n"),
    ]
    sid = new_session_id("imp")
    resp = daemon.client.import_transcript(
        _jsonl(records),
        cwd=str(project),
        session_id=sid,
        path_map={"/data/notes": str(other)},
        profile="claude-code",
    )
    assert resp.session_id == sid
    assert (resp.records, resp.events) == (9, 5)
    assert resp.session is not None
    assert sorted(resp.session.agent_ids) == ["", "helper"]
    # Roots cover every path the transcript touches: the project and the mapped folder.
    assert set(resp.session.roots) == {str(project), str(other)}
    (b,) = resp.boundaries
    assert [(x.kind, x.path) for x in b.restored] == [
        ("file", "/data/notes/notes.md"),
        ("file", "/orig/app/src/a.ts"),
    ]
    assert not b.has_recorded_restore
    # The state is the daemon's: a Compact now restores what the main thread read since.
    s = daemon.client.session(sid)
    after = s.preview_compact(skip_hooks=True)
    files = [a.file.path for a in after.attachments if a.file is not None]
    assert files[0] == str(project / "src/b.ts")
    # Importing again needs replace.
    with pytest.raises(PostcompactError) as err:
        daemon.client.import_transcript(_jsonl(records), cwd=str(project), session_id=sid)
    assert err.value.code == grpc.StatusCode.ALREADY_EXISTS
    again = daemon.client.import_transcript(
        _jsonl(records), cwd=str(project), session_id=sid, replace=True
    )
    assert again.events == 5


def test_import_with_file_mtimes(daemon: RunningDaemon, tmp_path: Path) -> None:
    """`file_mtimes` stamps the reads with the files' mtimes (as a running Claude Code does),
    so the restoration's newest-first order follows them, not the order of the records."""
    project = tmp_path / "app"
    project.mkdir()
    for name, mtime in (("a.ts", 3_000), ("b.ts", 1_000), ("c.ts", 2_000)):
        (project / name).write_text(f"{name}\n")
        os.utime(project / name, (mtime, mtime))
    records = [
        *_read("t1", 1, "/orig/app/a.ts", "a.ts\n"),
        *_read("t2", 3, "/orig/app/b.ts", "b.ts\n"),
        *_read("t3", 5, "/orig/app/c.ts", "c.ts\n"),
    ]

    def order(**kw: Any) -> list[str]:
        sid = new_session_id("mt")
        daemon.client.import_transcript(
            _jsonl(records), cwd=str(project), session_id=sid, profile="claude-code", **kw
        )
        after = daemon.client.session(sid).preview_compact(skip_hooks=True)
        files = [a.file for a in after.attachments if a.file is not None]
        return [Path(f.path).name for f in files]

    assert order() == ["c.ts", "b.ts", "a.ts"]  # the records' times: the last read first
    assert order(file_mtimes=True) == ["a.ts", "c.ts", "b.ts"]  # the files' mtimes


def test_an_import_skips_files_a_deny_glob_matches(daemon: RunningDaemon, tmp_path: Path) -> None:
    """A transcript's read or write of a file the deny globs match (`.env` by default) is not
    taken into the session, as RecordRead and RecordWrite refuse such content from a harness:
    the import warns, holds no entry for it, and no Compact mentions it."""
    project = tmp_path / "app"
    project.mkdir()
    (project / "a.ts").write_text("a\n")
    (project / ".env").write_text("SECRET=1\n")
    records = [
        *_read("t1", 1, "/orig/app/a.ts", "a\n"),
        *_read("t2", 3, "/orig/app/.env", "SECRET=1\n"),
        _boundary("b1", 10),
        *_read("t3", 12, "/orig/app/.env", "SECRET=1\n"),
    ]
    sid = new_session_id("deny")
    resp = daemon.client.import_transcript(
        _jsonl(records), cwd=str(project), session_id=sid, profile="claude-code", file_mtimes=True
    )
    assert resp.events == 2  # the read of a.ts and the boundary; both reads of .env skipped
    denied = [w for w in resp.warnings if "deny rule '.env'" in w]
    assert len(denied) == 1  # warned once
    assert "/orig/app/.env" in denied[0]
    (b,) = resp.boundaries
    assert [x.path for x in b.restored] == ["/orig/app/a.ts"]
    after = daemon.client.session(sid).preview_compact(skip_hooks=True)
    paths = [a.file.path for a in after.attachments if a.file is not None]
    assert paths == [str(project / "a.ts")]
    assert all("SECRET" not in block for a in after.attachments for block in a.blocks)


def test_an_import_reserves_only_its_own_answer(tmp_path: Path) -> None:
    """The compactions an import replays are not answers: their responses are never sent, so
    they reserve nothing against limits.max_answer_bytes_in_flight. Fifteen boundaries that each
    restore a 14 KB file import under a 100 KB limit (before, the import's own replayed
    compactions filled it and the import was refused OVERLOADED, on every retry too)."""
    project = tmp_path / "app"
    project.mkdir()
    body = "".join(f"line {i}: " + "x" * 60 + "\n" for i in range(200))  # ~14 KB
    (project / "big.ts").write_text(body)
    records: list[Any] = []
    for k in range(15):
        records += _read(f"t{k}", 20 * k + 1, "/orig/app/big.ts", body)
        records.append(_boundary(f"b{k}", 20 * k + 10))
    limits = "[limits]\nmax_answer_bytes_in_flight = 100000\n"
    d = start_daemon(["--no-persist"], config_toml=limits)
    try:
        sid = new_session_id("res")
        resp = d.client.import_transcript(
            _jsonl(records), cwd=str(project), session_id=sid, profile="claude-code"
        )
        assert len(resp.boundaries) == 15
        assert all([x.path for x in b.restored] == ["/orig/app/big.ts"] for b in resp.boundaries)
        # Each replayed compaction restored the whole file: together well over the limit.
        after = d.client.session(resp.session_id).preview_compact(skip_hooks=True)
        restored = sum(len(block.encode()) for a in after.attachments for block in a.blocks)
        assert 15 * restored > 100_000
    finally:
        d.stop()


def test_catalogue_and_skills_as_claude_code_2_1_328_shows_them(
    daemon: RunningDaemon, tmp_path: Path
) -> None:
    """What `make parity` found: a skill listing entry may run over several lines, an agent
    type's `(Tools: *)` is shown as `*`, and a project skill's path is `projectSettings:{name}`."""
    project = tmp_path / "app"
    project.mkdir()
    listing = "- style: House style.\nTRIGGER: whenever code is written.\n- deploy: Ship it."
    base = "/orig/app/.claude/skills/style"
    records = [
        _rec(
            "attachment",
            "at1",
            1,
            attachment={"type": "skill_listing", "content": listing, "names": ["style", "deploy"]},
        ),
        _rec(
            "attachment",
            "at2",
            2,
            attachment={
                "type": "agent_listing_delta",
                "addedTypes": ["claude"],
                "addedLines": ["- claude: Catch-all agent. (Tools: *)"],
                "removedTypes": [],
                "isInitial": True,
            },
        ),
        _rec(
            "assistant",
            "a-s1",
            3,
            message={
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "s1", "name": "Skill", "input": {"skill": "style"}}
                ],
            },
        ),
        _rec(
            "user",
            "u-s1",
            4,
            message={
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "s1",
                        "content": "Launching skill: style",
                    }
                ],
            },
        ),
        _rec(
            "user",
            "m-s1",
            5,
            isMeta=True,
            sourceToolUseID="s1",
            message={
                "role": "user",
                "content": [
                    {"type": "text", "text": f"Base directory for this skill: {base}\n\nUse."}
                ],
            },
        ),
    ]
    sid = new_session_id("cat")
    daemon.client.import_transcript(
        _jsonl(records), cwd=str(project), session_id=sid, profile="claude-code"
    )
    after = daemon.client.session(sid).preview_compact(skip_hooks=True)
    by_kind = {a.payload_case: "\n\n".join(a.blocks) for a in after.attachments}
    assert by_kind["skill_listing"].endswith(listing)
    assert "- claude: Catch-all agent. (Tools: *)" in by_kind["agent_listing_delta"]
    assert (
        "### Skill: style\nPath: projectSettings:style\n\nBase directory"
        in by_kind["invoked_skills"]
    )


def test_the_mode_recorded_on_prompts_is_the_mode() -> None:
    """Claude Code 2.1.328 records the permission mode on each prompt (`permissionMode`), not
    in `permission-mode` records (`make parity` found plan mode missed): each change counts."""
    prompt = {"role": "user", "content": [{"type": "text", "text": "go"}]}
    records = [
        _rec("user", "p1", 1, permissionMode="plan", message=prompt),
        _rec("user", "p2", 2, permissionMode="plan", message=prompt),
        _rec("user", "p3", 3, permissionMode="default", message=prompt),
    ]
    modes = [e.mode for e in parse(_jsonl(records)).events if isinstance(e, ModeChanged)]
    assert modes == ["plan", "default"]


def test_a_bad_transcript_imports_nothing(daemon: RunningDaemon, tmp_path: Path) -> None:
    sid = new_session_id("bad")
    data = _jsonl(_read("t1", 1, "/orig/app/a.ts", "a\n")) + b"{not json}\n"
    with pytest.raises(PostcompactError) as err:
        daemon.client.import_transcript(data, cwd=str(tmp_path), session_id=sid)
    assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert err.value.reason == "BAD_TRANSCRIPT"
    assert "line 3" in str(err.value)
    assert sid not in {i.session_id for i in daemon.client.list_sessions()}
    with pytest.raises(PostcompactError) as err:
        daemon.client.import_transcript(data, cwd="relative/dir", session_id=sid)
    assert err.value.reason == "PATH_NOT_ABSOLUTE"


def test_windows_paths_map_into_the_tree_and_print_as_written() -> None:
    records = [
        *_read("t1", 1, "D:\\proj\\src\\a.ts", "a\n"),
        *_read("t2", 3, "C:\\Users\\me\\.claude\\projects\\D--proj\\memory\\MEMORY.md", "m\n"),
        _boundary("b1", 10),
    ]
    for r in records:
        r["cwd"] = "D:\\proj"
    (res,) = asyncio.run(replay(parse(_jsonl(records)), profile=pb.PROFILE_CLAUDE_CODE))
    assert [(x.kind, x.path) for x in res.postcompact] == [("file", "D:\\proj\\src\\a.ts")]
    memory = [d for d in res.decisions if d["path"].endswith("MEMORY.md")]
    assert memory[0]["outcome"] == "excluded_memory_file"  # the auto-memory entry point


def test_a_resume_rebuilds_the_file_state_as_claude_code_does() -> None:
    """On `--resume` only whole reads and writes since the last boundary come back, stamped
    with their record times: a ranged read before the resume is not a candidate."""
    ranged = _read("t1", 1, "/orig/app/big.ts", "l1\nl2\n")
    ranged[0]["message"]["content"][0]["input"]["limit"] = 2
    records = [
        *ranged,
        *_read("t2", 3, "/orig/app/a.ts", "a\n"),
        _rec(
            "attachment",
            "h1",
            20,
            attachment={"type": "hook_success", "hookName": "SessionStart:resume"},
        ),
        _boundary("b1", 30),
    ]
    (res,) = asyncio.run(replay(parse(_jsonl(records)), profile=pb.PROFILE_CLAUDE_CODE))
    assert [x.path for x in res.postcompact] == ["/orig/app/a.ts"]


# --- the real transcripts ---------------------------------------------------------------------


@cache
def _index() -> dict[str, Any]:
    return dict(json.loads((CORPUS / "INDEX.json").read_text()))


def _corpus_files() -> list[str]:
    if not CORPUS.is_dir():
        return []
    names = sorted(p.name for p in CORPUS.glob("*.jsonl"))
    return names if ALL else [n for n in names if n in FEW]


@cache
def _replayed(name: str, profile: int) -> list[BoundaryResult]:
    t = parse((CORPUS / name).read_bytes())
    return asyncio.run(replay(t, profile=profile))  # type: ignore[arg-type]


def _compactions(name: str) -> Iterator[dict[str, Any]]:
    for f in _index()["files"]:
        if f["file"] == name:
            yield from f["compactions"]["list"]


def test_the_corpus_is_there() -> None:
    assert CORPUS.is_dir(), f"the shared transcripts are expected at {CORPUS}"
    assert len(_corpus_files()) >= (40 if ALL else 4)


@pytest.mark.parametrize("name", _corpus_files())
def test_every_transcript_replays(name: str) -> None:
    t = parse((CORPUS / name).read_bytes())
    results = _replayed(name, pb.PROFILE_CLAUDE_CODE)
    assert [r.uuid for r in results] == [b.uuid for b in t.boundaries]
    for r, b in zip(results, t.boundaries, strict=True):
        line = json.dumps(r.as_json())
        assert json.loads(line)["boundary"] == b.uuid
        assert (r.claude_code is None) == (not b.has_recorded_restore)


@pytest.mark.parametrize("name", _corpus_files())
def test_claude_code_profile_agrees_with_what_claude_code_recorded(name: str) -> None:
    """For each compaction INDEX.json lists with recorded restorations and a complete segment
    before it: the same files and too-large notes, in the same order, wherever the transcript
    determines them (docs/parity.md says what it does not determine, and why)."""
    by_uuid = {r.uuid: r for r in _replayed(name, pb.PROFILE_CLAUDE_CODE)}
    for c in _compactions(name):
        if not (c["has_restored_file_attachments"] and c["pre_segment_complete"]):
            continue
        r = by_uuid[c["uuid"]]
        assert r.claude_code is not None
        assert [x.path for x in r.claude_code] == [x["path"] for x in c["restored_files"]]
        assert r.disagreements() == [], (name, c["line"])


@pytest.mark.parametrize("name", _corpus_files())
def test_older_transcripts_under_2_1_88_restore_what_was_edited_unread(name: str) -> None:
    """Transcripts older than the recorded restorations: a file edited after the compaction
    without a new Read was held as read, so restored; postcompact restores it too."""
    by_uuid = {r.uuid: r for r in _replayed(name, pb.PROFILE_CLAUDE_CODE_2_1_88)}
    for c in _compactions(name):
        if c["has_restored_file_attachments"] or not c["pre_segment_complete"]:
            continue
        r = by_uuid[c["uuid"]]
        whole = {x.path for x in r.postcompact if x.kind == "file"}
        missing = [p for p in r.edited_without_read if p not in whole]
        assert missing == [], (name, c["line"])


# Claude Code 2.1.333 changed what comes back of saved tool results, uploads and downloads
# (docs/claude-code.md §3); the replay applies today's rule to every transcript.
SAVED_RESULTS_CHANGED = (2, 1, 333)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(".")[:3] if x.isdigit())


@pytest.mark.parametrize("name", _corpus_files())
def test_older_transcripts_touch_no_file_whose_rule_changed(name: str) -> None:
    """Why the replay may apply 2.1.333's rule to older transcripts: none of them reads or writes
    a saved tool result (but an artifact, left out by both rules), an upload or download, or a
    file of an `artifact-files` folder. One that did would be replayed under a rule its Claude
    Code did not have; the agreement test above would fail on it, and the replay would then
    have to take the rule by the transcript's version (docs/parity.md §1)."""
    touched: list[str] = []
    old = False
    for line in (CORPUS / name).read_bytes().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        version = record.get("version")
        if isinstance(version, str) and version:
            old = old or _version(version) < SAVED_RESULTS_CHANGED
        content = (record.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                path = (block.get("input") or {}).get("file_path")
                if isinstance(path, str) and path:
                    touched.append(path.replace("\\", "/"))
    if not old:
        return
    changed = [
        p
        for p in touched
        if (saved_result(p) and not os.path.basename(p).lower().startswith("artifact-"))
        or upload_or_download(p, p.split("/.claude/")[0] if "/.claude/" in p else "/") is not None
    ]
    assert changed == [], (name, changed)


def test_the_disagreement_check_has_teeth() -> None:
    """The default profile's rules differ from Claude Code's: replayed with them, the same
    corpus shows determined disagreements."""
    name = "blackgirlbytes__planetfall-seed-signalkit__09-cb2aeecea3-2-full.jsonl"
    results = _replayed(name, pb.PROFILE_DEFAULT)
    assert any(r.disagreements() for r in results if r.claude_code is not None)


# --- the commands -----------------------------------------------------------------------------


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "postcompact", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )


def test_replay_json_prints_one_object_per_boundary(tmp_path: Path) -> None:
    name = "ebridges__wakil__32-340547b1ec32-0-full.jsonl"
    out = _cli("replay", "--json", str(CORPUS / name))
    assert out.returncode == 0, out.stderr
    lines = [json.loads(x) for x in out.stdout.splitlines()]
    t = parse((CORPUS / name).read_bytes())
    assert [x["boundary"] for x in lines] == [b.uuid for b in t.boundaries]
    first = lines[0]
    assert set(first) == {"boundary", "claude_code", "postcompact", "equal"}
    assert first["equal"] is True
    assert first["postcompact"][0] == {
        "kind": "reference",
        "path": "/Users/ebridges/Projects/wakil/docs/entity-metadata.md",
    }
    table = _cli("replay", str(CORPUS / name))
    assert "Claude Code restored:" in table.stdout
    assert "excluded" in table.stdout or "dropped_by_rank" in table.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "user"}\n{oops\n')
    out = _cli("replay", str(bad))
    assert out.returncode == 2  # a transcript that cannot be replayed, as eval (issue 37)
    assert "line 2" in out.stderr


def test_import_command(daemon: RunningDaemon, tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(_jsonl([*_read("t1", 1, "/orig/app/a.ts", "a\n"), _boundary("b1", 10)]))
    (tmp_path / "app").mkdir()
    (tmp_path / "app/a.ts").write_text("a\n")
    sid = new_session_id("cli")
    env = {**os.environ, "POSTCOMPACT_SOCKET": str(daemon.socket_path)}
    out = _cli(
        "import",
        str(path),
        "--cwd",
        str(tmp_path / "app"),
        "--session-id",
        sid,
        "--json",
        env=env,
    )
    assert out.returncode == 0, out.stderr
    resp = json.loads(out.stdout)
    assert resp["sessionId"] == sid
    assert resp["boundaries"][0]["restored"] == [{"kind": "file", "path": "/orig/app/a.ts"}]
    again = _cli("import", str(path), "--cwd", str(tmp_path / "app"), "--session-id", sid, env=env)
    assert again.returncode == 1
    assert "ALREADY_EXISTS" in again.stderr


def test_a_replay_tree_name_drawn_twice_is_drawn_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`make eval` registers every replay tree's name for its clean-up: a name already
    registered in the run, or a tree another process made, is drawn again (and the latter is
    not registered, so the clean-up never removes another process's tree)."""
    import secrets
    import tempfile

    from postcompact.transcript import replay as replay_module

    registry = tmp_path / "registry"
    registry.mkdir()
    names = iter(["0000aaaa", "0000bbbb", "0000cccc"])
    monkeypatch.setattr(secrets, "token_hex", lambda _n: next(names))
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    monkeypatch.setattr(replay_module, "TREE_REGISTRY", str(registry))
    (registry / "postcompact-replay-0000aaaa").touch()  # drawn earlier in this run
    (tmp_path / "postcompact-replay-0000bbbb").mkdir()  # another process's tree
    with replay_module._tree() as tree:
        assert Path(tree).name == "postcompact-replay-0000cccc"
        assert Path(tree).is_dir()
    assert sorted(p.name for p in registry.iterdir()) == [
        "postcompact-replay-0000aaaa",
        "postcompact-replay-0000cccc",
    ]
    assert (tmp_path / "postcompact-replay-0000bbbb").is_dir()
