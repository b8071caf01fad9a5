"""Answers that could not be sent are refused before anything is applied, and listings are paged
so that no amount of state makes them unanswerable (issue 11, items 6, 7 and 11;
docs/reliability.md)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest
from postcompact.v1 import postcompact_pb2 as pb
from postcompact_client import PostcompactError

from tests.daemon.conftest import (
    RunningDaemon,
    daemon_env,
    new_session_id,
    short_dir,
    start_daemon,
)

SMALL = 65536  # max_message_bytes: the limits show at kilobytes
CONFIG = f"max_message_bytes = {SMALL}\n[limits]\nmax_roots = 8\n"


@pytest.fixture(scope="module")
def small() -> Iterator[RunningDaemon]:
    d = start_daemon(config_toml=CONFIG)
    yield d
    d.stop()
    shutil.rmtree(d.dir, ignore_errors=True)


@pytest.fixture
def proj() -> Iterator[Path]:
    root = short_dir("pca")
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _ids(d: RunningDaemon) -> set[str]:
    return {s.session_id for s in d.client.list_sessions()}


def _refused(call: Any, code: grpc.StatusCode, reason: str) -> PostcompactError:
    with pytest.raises(PostcompactError) as exc:
        call()
    assert exc.value.code == code, exc.value
    assert exc.value.reason == reason, exc.value
    return exc.value


# --- item 11: cwd and roots ----------------------------------------------------------------


def test_roots_have_a_count_limit(small: RunningDaemon, proj: Path) -> None:
    sid = new_session_id("roots")
    roots = [str(proj / f"r{i}") for i in range(9)]
    err = _refused(
        lambda: small.client.open_session(str(proj), session_id=sid, roots=roots),
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "TOO_MANY_ROOTS",
    )
    assert "limits.max_roots (8)" in err.message
    assert sid not in _ids(small)
    small.client.open_session(str(proj), session_id=sid, roots=roots[:8]).close()


@pytest.mark.parametrize("field", ["cwd", "roots", "home", "plans_directory", "memory_paths"])
def test_every_session_path_has_a_length_limit(
    small: RunningDaemon, proj: Path, field: str
) -> None:
    long = str(proj / ("d" * 4100))
    choices: dict[str, dict[str, Any]] = {
        "cwd": {"cwd": long},
        "roots": {"roots": [long]},
        "home": {"home": long},
        "plans_directory": {"plans_directory": long},
        "memory_paths": {"memory_paths": [long]},
    }
    kwargs = choices[field]
    cwd = kwargs.pop("cwd", str(proj))
    sid = new_session_id("long")
    err = _refused(
        lambda: small.client.open_session(cwd, session_id=sid, **kwargs),
        grpc.StatusCode.INVALID_ARGUMENT,
        "PATH_TOO_LONG",
    )
    assert "4096-byte path limit" in err.message
    assert sid not in _ids(small)


def test_memory_lists_have_a_count_limit(small: RunningDaemon, proj: Path) -> None:
    _refused(
        lambda: small.client.open_session(
            str(proj), memory_file_names=[f"M{i}.md" for i in range(65)]
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "TOO_MANY_MEMORY_FILES",
    )


# --- item 6: answers checked before they are applied ---------------------------------------


def test_an_open_session_whose_answer_is_too_large_creates_nothing(proj: Path) -> None:
    """Relative roots are answered resolved against the cwd: 64 short roots under a 4,000-byte
    cwd make a small request and a 256 KB answer. Refused, and nothing is created or stored."""
    d = start_daemon(config_toml=f"max_message_bytes = {SMALL}\n[limits]\nmax_roots = 64\n")
    try:
        cwd = str(proj / ("c" * 4000))
        roots = [f"r{i:02d}" for i in range(64)]
        sid = new_session_id("big-open")
        err = _refused(
            lambda: d.client.open_session(cwd, session_id=sid, roots=roots),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "RESPONSE_TOO_LARGE",
        )
        assert "nothing was changed" in err.message
        assert sid not in _ids(d)
        d.stop()
        d2 = start_daemon(config_toml=CONFIG, runtime_dir=d.dir)  # and nothing was stored
        try:
            assert sid not in _ids(d2)
        finally:
            d2.stop()
    finally:
        if d.proc.poll() is None:
            d.stop()
        shutil.rmtree(d.dir, ignore_errors=True)


def test_a_compact_whose_answer_is_too_large_is_not_applied(
    small: RunningDaemon, proj: Path
) -> None:
    f = proj / "notes.txt"
    f.write_text("".join(f"note {i}: {'n' * 60}\n" for i in range(400)))  # ~28 KB
    s = small.client.open_session(str(proj), session_id=new_session_id("big-compact"))
    s.read_file(str(f), offset=1, limit=400)
    context = ["A" * 40_000]  # fits the request; the answer also restores the file
    err = _refused(
        lambda: s.compact(additional_context=context),
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "RESPONSE_TOO_LARGE",
    )
    assert "Compact" in err.message
    (info,) = [i for i in small.client.list_sessions() if i.session_id == s.session_id]
    assert info.compactions == 0
    assert info.cached_entries == 1
    # The agent is as it was: the same range read again is the "unchanged" stub.
    assert s.read_file(str(f), offset=1, limit=400).unchanged
    _refused(
        lambda: s.preview_compact(additional_context=context),
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "RESPONSE_TOO_LARGE",
    )
    assert s.compact().compaction == 1
    s.close()


# --- item 7: listings are paged ----------------------------------------------------------------


def _check_listing(d: RunningDaemon, made: list[str]) -> None:
    pages, token = [], ""
    while True:
        page = d.client.list_sessions_page(page_token=token)
        assert page.to_pb().ByteSize() <= SMALL  # the answer as sent
        assert page.total_sessions == len(made)
        pages.append([x.session_id for x in page.sessions])
        token = page.next_page_token
        if not token:
            break
    assert len(pages) > 1
    assert [sid for p in pages for sid in p] == sorted(made)
    assert all(not x.partial for x in d.client.list_sessions())
    stats = d.client.stats()
    assert (stats.sessions, stats.agents) == (len(made), len(made) * 25)
    r = subprocess.run(
        [sys.executable, "-m", "postcompact", "status", "--json", "--socket", str(d.socket_path)],
        env=daemon_env(d.dir),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)["session_infos"]) == len(made)


def test_listing_is_paged_within_the_message_limit(proj: Path) -> None:
    """Sessions whose infos together are several times the message limit (agents with 256-byte
    ids): every page fits, every session is listed once, GetStats answers, also after a
    restart, and `postcompact status` reports the daemon running."""
    d = start_daemon(config_toml=CONFIG)
    try:
        made = []
        for i in range(12):
            s = d.client.open_session(str(proj), session_id=f"page-{i:02d}-" + "s" * 240)
            for j in range(24):
                s.start_agent(f"agent-{j:02d}-" + "a" * 246)
            made.append(s.session_id)
        _check_listing(d, made)
        d.stop()
        d = start_daemon(config_toml=CONFIG, runtime_dir=d.dir)
        _check_listing(d, made)
    finally:
        d.stop()
        shutil.rmtree(d.dir, ignore_errors=True)


def test_page_arguments_are_checked(small: RunningDaemon) -> None:
    _refused(
        lambda: small.client.list_sessions_page(page_size=-1),
        grpc.StatusCode.INVALID_ARGUMENT,
        "BAD_PAGE_SIZE",
    )
    _refused(
        lambda: small.client.list_sessions_page(page_token="%%%"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "BAD_PAGE_TOKEN",
    )
    assert len(small.client.list_sessions_page(page_size=1).sessions) <= 1


def _status(socket: Path, base: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "postcompact", "status", "--socket", str(socket)],
        env=daemon_env(base),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_status_tells_an_error_from_no_daemon(tmp_path: Path) -> None:
    """A daemon answering errors is running (exit 1, the error named); no daemon is exit 3."""
    socket = short_dir("pcs") / "d.sock"
    assert _status(socket, tmp_path).returncode == 3

    def refuse(request: bytes, context: grpc.ServicerContext) -> bytes:
        context.set_trailing_metadata((("postcompact-error-reason", "RESPONSE_TOO_LARGE"),))
        context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "too large to answer")

    class Everything(grpc.GenericRpcHandler):
        def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler[Any, Any]:
            return grpc.unary_unary_rpc_method_handler(refuse)

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((Everything(),))
    server.add_insecure_port(f"unix://{socket}")
    server.start()
    try:
        r = _status(socket, tmp_path)
    finally:
        server.stop(0)
        shutil.rmtree(socket.parent, ignore_errors=True)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "running" in r.stderr
    assert "RESOURCE_EXHAUSTED RESPONSE_TOO_LARGE: too large to answer" in r.stderr
    assert "not running" not in r.stdout


def test_get_stats_reports_the_content_held(small: RunningDaemon) -> None:
    st = small.client.stats()
    assert st.max_content_bytes == 256 << 20
    assert st.content_bytes >= 0
    assert not hasattr(pb.GetStatsResponse(), "session_infos")
