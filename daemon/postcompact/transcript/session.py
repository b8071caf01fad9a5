"""The session a transcript is imported or replayed into: where its home, cwd, memory files,
plan file and roots are on this machine (docs/transcripts.md)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

from postcompact import core
from postcompact.service.sessions import DEFAULT_MEMORY_FILE_NAMES, project_dir_name
from postcompact.state import MAIN_AGENT, AgentState, Session
from postcompact.transcript.parse import (
    Event,
    FileChanged,
    FileRead,
    FileReadFailed,
    FileUnchanged,
    FileWritten,
    PlanFile,
    Transcript,
)
from postcompact.transcript.paths import PathMap, join, split_parts
from postcompact.v1 import postcompact_pb2 as pb

__all__ = ["guess_home", "new_session", "touched_paths", "transcript_paths"]

_HOME_POSIX = re.compile(r"\A(/(?:Users|home)/[^/]+)(?:/|\Z)")
_HOME_WINDOWS = re.compile(r"\A([A-Za-z]:\\Users\\[^\\]+)(?:\\|\Z)", re.IGNORECASE)
_CLAUDE_DIR = re.compile(r"[\\/]\.claude[\\/]")


def touched_paths(events: Iterable[Event]) -> list[str]:
    """Every file path the events name, in first-seen order."""
    out: dict[str, None] = {}
    for e in events:
        if isinstance(
            e, FileRead | FileWritten | FileUnchanged | FileReadFailed | FileChanged | PlanFile
        ):
            out.setdefault(e.path, None)
    return list(out)


def transcript_paths(t: Transcript) -> Sequence[str]:
    """Every file path `t`'s events name, in first-seen order."""
    return t.touched if t.touched is not None else touched_paths(t.events)


def guess_home(t: Transcript) -> str:
    """The home directory of the machine that wrote `t`: the prefix of a `.claude` folder some
    path names, else the `/Users/x`, `/home/x` or `C:\\Users\\x` its cwd lies in, else ""."""
    for path in transcript_paths(t):
        m = _CLAUDE_DIR.search(path)
        if m and m.start() > 0:
            return path[: m.start()]
    for pattern in (_HOME_POSIX, _HOME_WINDOWS):
        m = pattern.match(t.cwd)
        if m:
            return m.group(1)
    return ""


def _minimal_dirs(paths: Iterable[str]) -> list[str]:
    """The directories holding `paths`, without those inside another of them."""
    dirs = sorted({os.path.dirname(p) for p in paths})
    out: list[str] = []
    for d in dirs:
        if not any(d == o or d.startswith(o.rstrip("/") + "/") for o in out):
            out.append(d)
    return out


def new_session(
    t: Transcript,
    paths: PathMap,
    *,
    session_id: str,
    cwd: str,
    home: str,
    profile: pb.Profile.ValueType,
    policy: pb.RestorePolicy,
    new_cache: object,
    now_ms: int,
) -> Session:
    """A session for `t` (not registered anywhere): `cwd` and `home` are local; its roots cover
    the cwd and the directory of every path the transcript touches; memory files and the plan
    file are where Claude Code would have them on the transcript's machine, mapped."""
    orig_home = guess_home(t)
    local_paths = [p for p in (paths.local(x) for x in transcript_paths(t)) if p]
    inside = [p for p in local_paths if p == cwd or p.startswith(cwd.rstrip("/") + "/")]
    roots = [cwd, *(d for d in _minimal_dirs(set(local_paths) - set(inside)) if d != cwd)]
    memory = {core.expand_path(os.path.join(cwd, n), cwd, home) for n in DEFAULT_MEMORY_FILE_NAMES}
    plans = os.path.join(home, ".claude", "plans")
    if orig_home:
        plans = paths.local(join(orig_home, ".claude", "plans")) or plans
        for mem in (
            join(orig_home, ".claude", "CLAUDE.md"),
            join(orig_home, ".claude", "projects", project_dir_name(t.cwd), "memory", "MEMORY.md"),
        ):
            local = paths.local(mem)
            if local:
                memory.add(local)
    s = Session(
        session_id=session_id,
        cwd=cwd,
        home=home,
        roots=roots,
        memory_paths=frozenset(memory),
        plans_directory=plans,
        policy=policy,
        profile=profile,
        created_at_ms=now_ms,
        last_active_ms=now_ms,
    )
    s.agents[MAIN_AGENT] = AgentState(MAIN_AGENT, new_cache(s))  # type: ignore[operator]
    if split_parts(t.cwd) is None:
        raise ValueError(f"the transcript's cwd is not an absolute path: {t.cwd!r}")
    return s
