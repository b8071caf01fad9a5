"""`postcompact` command line: serve | start | stop | status [--json] | version | demo |
preview SESSION [--json] | state check | state reset | import TRANSCRIPT | replay TRANSCRIPT...

Exit codes: 0 success; 1 failure (e.g. `state check` found a problem, a runtime directory that is
not private); 2 bad usage or configuration; 3 not running (`status`, `stop`), as `systemctl
status` does; 4 `serve`: another daemon already holds the lock (a starter that raced another one
waits for that daemon).

`serve --detached` is how `start` and the clients' auto-start run the daemon in the background
(it does not fork itself): it logs to `log_file`, by default `daemon.log` in the state directory
(`detached_log_file`), rotated at `log_max_bytes` keeping `log_backups`; a start-up failure goes
to stderr, which the starter reads, and to that file; once serving, stderr is that file too.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from postcompact import API_VERSION, __version__
from postcompact.config import Config, ConfigError, load_config, socket_only, state_location
from postcompact.errors import REASON_METADATA_KEY
from postcompact.evaluation import commands as eval_commands
from postcompact.exitcodes import EXIT_ALREADY_RUNNING, EXIT_FAILURE, EXIT_NOT_RUNNING, EXIT_USAGE
from postcompact.lifecycle import (
    AlreadyRunning,
    InstanceLock,
    LifecycleError,
    RuntimePaths,
    pid_alive,
    read_server_json,
)
from postcompact.transcript import commands as transcript_commands
from postcompact.units import INT32_MAX
from postcompact.v1 import postcompact_pb2 as pb
from postcompact.v1 import postcompact_pb2_grpc as pb_grpc


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--socket", help="Unix socket path (default: $XDG_RUNTIME_DIR/postcompact/daemon.sock)"
    )
    p.add_argument(
        "--config",
        type=Path,
        help="config file (default: $XDG_CONFIG_HOME/postcompact/config.toml)",
    )


def _add_state_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--state-dir",
        type=Path,
        help="directory of the state database (default: $XDG_STATE_HOME/postcompact)",
    )
    p.add_argument("--state-path", type=Path, help="the state database file itself")
    p.add_argument(
        "--state-url",
        help="sqlite: (default), sqlite:///path/state.db, or postgresql://... (docs/fleet.md)",
    )


def _add_serve_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--state-pool-size",
        type=int,
        help="connections to a PostgreSQL state database (default 4; docs/fleet.md)",
    )
    p.add_argument(
        "--tcp-port",
        type=int,
        help="also listen on loopback PORT (tcp_host, default 127.0.0.1; 0 = pick), token required",
    )
    p.add_argument("--log-level", choices=["debug", "info", "warning", "error"])
    p.add_argument("--log-file", type=Path, help="log here (JSON lines) instead of stderr")
    p.add_argument("--max-message-bytes", type=int, help="gRPC message size limit (default 32 MiB)")
    p.add_argument(
        "--profile",
        choices=["default", "claude-code", "claude-code-2.1.88"],
        help="default session profile (docs/profiles.md)",
    )
    p.add_argument(
        "--server-implementation",
        choices=["grpcio", "native"],
        help="the gRPC server: grpcio (default) or native (pygrpc-native; docs/architecture.md)",
    )
    _add_state_flags(p)
    p.add_argument(
        "--no-persist",
        dest="persist",
        action="store_false",
        default=None,
        help="keep state in memory only (lost when the daemon stops)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="postcompact",
        description="Restores coding agents' working state after context compaction.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("serve", help="run the daemon in the foreground")
    _add_common(p)
    _add_serve_flags(p)
    p.add_argument(
        "--detached",
        action="store_true",
        help="run in the background, as `start` and the clients' auto-start do (no fork): log to "
        "log_file (default: daemon.log in the state directory); stderr only until serving",
    )
    p = sub.add_parser("start", help="start the daemon detached and wait until it is healthy")
    _add_common(p)
    _add_serve_flags(p)
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for health")
    p = sub.add_parser("stop", help="stop the running daemon (SIGTERM, graceful)")
    _add_common(p)
    p.add_argument("--timeout", type=float, default=10.0)
    p = sub.add_parser("status", help="show whether the daemon runs, and its sessions and caches")
    _add_common(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    sub.add_parser("version", help="print the version")
    p = sub.add_parser(
        "preview",
        help="what a session would restore if it were compacted now, and why (changes nothing)",
    )
    _add_common(p)
    p.add_argument(
        "session", metavar="SESSION", help="the session id (postcompact status lists them)"
    )
    p.add_argument(
        "--agent", default="", help="a sub-agent of the session (default: the main thread)"
    )
    p.add_argument("--text", action="store_true", help="also print the text that would be injected")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p = sub.add_parser(
        "demo", help="replay the design chapter's refactoring example through the daemon"
    )
    _add_common(p)
    p.add_argument("--no-start", action="store_true", help="do not start a daemon if none runs")
    p = sub.add_parser("state", help="inspect or reset the daemon's state database")
    state = p.add_subparsers(dest="state_command", required=True, metavar="ACTION")
    q = state.add_parser("check", help="integrity and schema version report (exit 1 on problems)")
    _add_common(q)
    _add_state_flags(q)
    q.add_argument("--json", action="store_true", help="machine-readable output")
    q = state.add_parser(
        "reset", help="move the state database aside (state.db.bak-<time>) and start empty"
    )
    _add_common(q)
    _add_state_flags(q)
    q.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    transcript_commands.add_parsers(sub, _add_common)
    eval_commands.add_parser(sub)
    return parser


def _config(args: argparse.Namespace) -> Config:
    flags: dict[str, Any] = {"socket": getattr(args, "socket", None)}
    for name in (
        "tcp_port",
        "log_level",
        "log_file",
        "max_message_bytes",
        "profile",
        "state_dir",
        "state_path",
        "state_url",
        "state_pool_size",
        "server_implementation",
        "persist",
    ):
        if getattr(args, name, None) is not None:
            flags[name] = getattr(args, name)
    return load_config(flags, config_file=getattr(args, "config", None))


def _control_config(args: argparse.Namespace) -> Config:
    """`_config`, or (on a configuration error) the socket alone, with a warning: stop and
    status must still reach a daemon whose config.toml was broken after it started."""
    try:
        return _config(args)
    except ConfigError as exc:
        _err(f"warning: configuration error ({exc}); using only the socket setting")
        return socket_only(getattr(args, "socket", None), config_file=getattr(args, "config", None))


def _err(msg: str) -> None:
    print(f"postcompact: {msg}", file=sys.stderr)


# --- talking to a running daemon ------------------------------------------------------------


class Connection:
    def __init__(self, socket: Path):
        self.socket = socket
        # Any answer the daemon may send (its max_message_bytes is configurable up to 2 GiB).
        options = [("grpc.max_receive_message_length", INT32_MAX)]
        self.channel = grpc.insecure_channel(f"unix://{socket}", options=options)
        self.stub = pb_grpc.PostcompactServiceStub(self.channel)
        self.health = health_pb2_grpc.HealthStub(self.channel)

    def close(self) -> None:
        self.channel.close()

    def serving(self, timeout: float = 1.0) -> bool:
        try:
            r = self.health.Check(health_pb2.HealthCheckRequest(), timeout=timeout)
        except grpc.RpcError:
            return False
        return bool(r.status == health_pb2.HealthCheckResponse.SERVING)

    def wait_serving(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                r = self.health.Check(
                    health_pb2.HealthCheckRequest(),
                    timeout=max(0.05, min(1.0, deadline - time.monotonic())),
                    wait_for_ready=True,
                )
                if r.status == health_pb2.HealthCheckResponse.SERVING:
                    return True
            except grpc.RpcError:
                pass
            time.sleep(0.05)
        return False


def spawn_detached(
    args: argparse.Namespace, cfg: Config, stderr: IO[bytes]
) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "postcompact", "serve", "--detached", "--socket", str(cfg.socket)]
    if args.config:
        cmd += ["--config", str(args.config)]
    flags = (
        "tcp_port",
        "log_level",
        "log_file",
        "max_message_bytes",
        "profile",
        "state_dir",
        "state_path",
        "state_url",
        "state_pool_size",
        "server_implementation",
    )
    for flag in flags:
        value = getattr(args, flag, None)
        if value is not None:
            cmd += [f"--{flag.replace('_', '-')}", str(value)]
    if getattr(args, "persist", None) is False:
        cmd.append("--no-persist")
    return subprocess.Popen(
        cmd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        start_new_session=True,
        close_fds=True,
    )


def detached_log_file(cfg: Config) -> Path:
    """Where a daemon started in the background logs when `log_file` is unset: in its state
    directory (the directory of its SQLite database, or the default state directory), named as
    its database is: `daemon.log` beside `state.db`, `daemon-<12 hex>.log` beside the
    `state-<12 hex>.db` of a daemon on another socket (two daemons never rotate one file)."""
    from postcompact.persist import state_db_path

    where = state_location(cfg)
    if where.kind == "sqlite":
        db = state_db_path(socket=cfg.socket, state_dir=where.dir, state_path=where.path)
    else:  # PostgreSQL: no directory of its own; the default one, named by the socket
        db = state_db_path(socket=cfg.socket)
    name = (
        f"daemon-{db.stem[len('state-') :]}.log" if db.stem.startswith("state-") else "daemon.log"
    )
    return db.parent / name


def ensure_running(args: argparse.Namespace, cfg: Config, timeout: float = 10.0) -> bool:
    """True when a daemon serves on cfg.socket (starting one if needed)."""
    conn = Connection(cfg.socket)
    # The child's stderr: what `serve` says when it cannot start (its log has nothing yet).
    with contextlib.closing(conn), tempfile.TemporaryFile() as errors:
        if conn.serving():
            return True
        proc = spawn_detached(args, cfg, errors)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if conn.wait_serving(min(0.5, deadline - time.monotonic())):
                return True
            if proc.poll() is not None and proc.returncode != EXIT_ALREADY_RUNNING:
                errors.seek(0)
                why = errors.read().decode(errors="replace").strip()
                _err(f"the daemon exited with status {proc.returncode} while starting")
                if why:
                    print(why, file=sys.stderr)
                return False
            # Exit 4: it lost the race to another `start` (or a client's auto-start), whose
            # daemon is coming up: wait for that one.
        _err(f"the daemon did not become healthy within {timeout:g}s")
        return False


# --- commands --------------------------------------------------------------------------------


def cmd_serve(args: argparse.Namespace) -> int:
    from postcompact import failpoints
    from postcompact.logs import adopt_stderr, setup_logging
    from postcompact.server import serve

    cfg = _config(args)
    try:
        failpoints.configure(os.environ.get(failpoints.ENV))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    log_file = cfg.log_file
    if args.detached and log_file is None:
        log_file = detached_log_file(cfg)
    setup_logging(cfg.log_level, log_file, max_bytes=cfg.log_max_bytes, backups=cfg.log_backups)
    return serve(cfg, on_serving=adopt_stderr if args.detached else None)


def cmd_start(args: argparse.Namespace) -> int:
    cfg = _config(args)
    conn = Connection(cfg.socket)
    try:
        if conn.serving():
            pid = _daemon_pid(cfg)
            print(f"postcompact is already running (pid {pid if pid else '?'}) on {cfg.socket}")
            return 0
    finally:
        conn.close()
    if not ensure_running(args, cfg, args.timeout):
        return EXIT_FAILURE
    info = read_server_json(RuntimePaths.for_socket(cfg.socket).server_json) or {}
    print(f"postcompact started (pid {info.get('pid', '?')}) on {cfg.socket}")
    return 0


def _daemon_pid(cfg: Config) -> int | None:
    """The pid of the daemon on cfg.socket: as it answers, else (it does not answer) the pid
    of the process holding its instance lock; None when no daemon runs there."""
    conn = Connection(cfg.socket)
    try:
        r = conn.stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=2.0)
        return int(r.pid)
    except grpc.RpcError:
        pid = InstanceLock(RuntimePaths.for_socket(cfg.socket).lock).holder()
        return pid if pid is not None and pid_alive(pid) else None
    finally:
        conn.close()


def cmd_stop(args: argparse.Namespace) -> int:
    import signal

    cfg = _control_config(args)
    pid = _daemon_pid(cfg)
    if pid is None:
        print(f"postcompact is not running on {cfg.socket}")
        return EXIT_NOT_RUNNING
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid) or not cfg.socket.exists():
            # The socket goes away last in the shutdown sequence, right before the exit.
            while pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            print(f"postcompact stopped (pid {pid})")
            return 0
        time.sleep(0.05)
    _err(f"the daemon (pid {pid}) did not stop within {args.timeout:g}s")
    return EXIT_FAILURE


STATUS_SESSIONS_SHOWN = 20  # `status` lists this many sessions (`--json`: all of them)
STATE_ROWS_SHOWN = 20  # `state check` lists this many bad rows (`--json`: all of them)


def status_dict(
    info: pb.GetServerInfoResponse,
    stats: pb.GetStatsResponse,
    sessions: list[pb.SessionInfo],
) -> dict[str, Any]:
    return {
        "running": True,
        "pid": info.pid,
        "version": info.version,
        "api_version": info.api_version,
        "socket": info.socket_path,
        "tcp_port": info.tcp_port,
        "tcp_address": info.tcp_address or None,
        "started_at_ms": info.started_at_ms,
        "uptime_ms": stats.uptime_ms,
        "sessions": stats.sessions,
        "agents": stats.agents,
        "cached_entries": stats.cached_entries,
        "cached_bytes": stats.cached_bytes,
        "content_bytes": stats.content_bytes,
        "max_content_bytes": stats.max_content_bytes,
        "compactions": stats.compactions,
        "evictions": stats.evictions,
        "session_infos": [
            {
                "session_id": s.session_id,
                "cwd": s.cwd,
                "agents": list(s.agent_ids),
                "cached_entries": s.cached_entries,
                "cached_bytes": s.cached_bytes,
                "compactions": s.compactions,
            }
            for s in sessions
        ],
    }


def _sessions(conn: Connection, limit: int | None) -> list[pb.SessionInfo]:
    """Sessions in id order, page by page (at most `limit`; None: all)."""
    out: list[pb.SessionInfo] = []
    token = ""
    while limit is None or len(out) < limit:
        page = conn.stub.ListSessions(pb.ListSessionsRequest(page_token=token), timeout=5.0)
        out.extend(page.sessions)
        token = page.next_page_token
        if not token:
            break
    return out if limit is None else out[:limit]


def _answered(exc: grpc.RpcError) -> bool:
    """Whether the daemon itself answered (an error status), as opposed to nothing listening:
    no socket, a refused connection, or no answer in time."""
    code = exc.code() if isinstance(exc, grpc.Call) else None
    return code not in (None, grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


def _rpc_error(exc: grpc.RpcError) -> str:
    if not isinstance(exc, grpc.Call):
        return str(exc)
    reason = dict(exc.trailing_metadata() or ()).get(REASON_METADATA_KEY)
    return f"{exc.code().name}{f' {reason}' if reason else ''}: {exc.details()}"


def cmd_status(args: argparse.Namespace) -> int:
    cfg = _control_config(args)
    conn = Connection(cfg.socket)
    step = "GetServerInfo"
    try:
        info = conn.stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=2.0)
        step = "GetStats"
        stats = conn.stub.GetStats(pb.GetStatsRequest(), timeout=5.0)
        step = "ListSessions"
        sessions = _sessions(conn, None if args.json else STATUS_SESSIONS_SHOWN)
    except grpc.RpcError as exc:
        if _answered(exc):
            # Running but answering an error: not the same as not running (exit 3).
            what = _rpc_error(exc)
            if args.json:
                print(json.dumps({"running": True, "socket": str(cfg.socket), "error": what}))
            else:
                _err(f"postcompact is running on {cfg.socket} but {step} failed: {what}")
            return EXIT_FAILURE
        if args.json:
            print(json.dumps({"running": False, "socket": str(cfg.socket)}))
        else:
            print(f"postcompact is not running (socket {cfg.socket})")
        return EXIT_NOT_RUNNING
    finally:
        conn.close()
    d = status_dict(info, stats, sessions)
    if args.json:
        print(json.dumps(d, indent=2))
        return 0
    print(f"postcompact {d['version']} ({d['api_version']}) running, pid {d['pid']}")
    print(
        f"  socket       {d['socket']}" + (f"   tcp {d['tcp_address']}" if d["tcp_address"] else "")
    )
    print(f"  uptime       {d['uptime_ms'] / 1000:.0f}s")
    print(f"  sessions     {d['sessions']}   agents {d['agents']}")
    print(f"  cached       {d['cached_entries']} files, {_human(d['cached_bytes'])}")
    print(
        f"  content      {_human(d['content_bytes'])} of {_human(d['max_content_bytes'])} "
        "(limits.max_content_bytes)"
    )
    print(f"  compactions  {d['compactions']}   evictions {d['evictions']}")
    for s in d["session_infos"]:
        print(
            f"    {s['session_id']}  {s['cwd']}  agents={len(s['agents'])} "
            f"files={s['cached_entries']} compactions={s['compactions']}"
        )
    more = d["sessions"] - len(d["session_infos"])
    if more > 0:
        print(f"    ... and {more} more (postcompact status --json lists them all)")
    return 0


def _enum_name(enum: Any, value: int, prefix: str) -> str:
    try:
        return str(enum.Name(value)).removeprefix(prefix)
    except ValueError:  # a value of a newer daemon
        return str(value)


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def preview_dict(session: str, agent: str, r: pb.PreviewCompactResponse) -> dict[str, Any]:
    """A PreviewCompact answer as `preview --json` prints it: each attachment (its text's length
    in UTF-16 units, what a harness counts), each decision, the totals."""
    attachments = []
    for a in r.attachments:
        item: dict[str, Any] = {
            "kind": _enum_name(pb.AttachmentKind, a.kind, "ATTACHMENT_KIND_"),
            "placement": _enum_name(pb.Placement, a.placement, "PLACEMENT_"),
            "tokens": a.tokens,
            "chars": _utf16_len("\n".join(a.blocks)),
            "blocks": list(a.blocks),
        }
        if a.HasField("file"):
            f = a.file
            item |= {
                "path": f.path,
                "display_path": f.display_path,
                "start_line": f.start_line,
                "num_lines": f.num_lines,
                "total_lines": f.total_lines,
                "truncated": f.truncated,
            }
        elif a.HasField("file_reference"):
            item |= {"path": a.file_reference.path, "display_path": a.file_reference.display_path}
        attachments.append(item)
    return {
        "session_id": session,
        "agent_id": agent,
        "compaction": r.compaction + 1,
        "attachments": attachments,
        "decisions": [
            {
                "subject": _enum_name(pb.Subject, d.subject, "SUBJECT_"),
                "name": d.name,
                "outcome": _enum_name(pb.Outcome, d.outcome, "OUTCOME_"),
                "rank": d.rank,
                "tokens": d.tokens,
                "content_tokens": d.content_tokens,
                "detail": d.detail,
            }
            for d in r.decisions
        ],
        "totals": [
            {
                "category": t.category,
                "attachments": t.attachments,
                "dropped": t.dropped,
                "tokens": t.tokens,
            }
            for t in r.totals
        ],
    }


def cmd_preview(args: argparse.Namespace) -> int:
    cfg = _control_config(args)
    conn = Connection(cfg.socket)
    try:
        r = conn.stub.PreviewCompact(
            pb.PreviewCompactRequest(session_id=args.session, agent_id=args.agent), timeout=30.0
        )
    except grpc.RpcError as exc:
        if not _answered(exc):
            print(f"postcompact is not running (socket {cfg.socket})")
            return EXIT_NOT_RUNNING
        _err(f"preview of {args.session}: {_rpc_error(exc)}")
        return EXIT_FAILURE
    finally:
        conn.close()
    d = preview_dict(args.session, args.agent, r)
    if args.json:
        print(json.dumps(d, indent=2, ensure_ascii=False))
        return 0
    who = f"agent {args.agent}" if args.agent else "the main thread"
    tokens = sum(a["tokens"] for a in d["attachments"])
    chars = sum(a["chars"] for a in d["attachments"])
    print(
        f"{args.session}, {who}: compaction {d['compaction']} would restore "
        f"{len(d['attachments'])} attachment(s), {tokens:,} tokens, {chars:,} characters "
        "(nothing is changed)"
    )
    for a in d["attachments"]:
        what = a.get("display_path") or a.get("path") or ""
        if a.get("num_lines"):
            last = a["start_line"] + a["num_lines"] - 1
            what += f"  lines {a['start_line']}-{last} of {a['total_lines']}"
            what += " (truncated)" if a.get("truncated") else ""
        print(f"  {a['kind'].lower():<24} {what}  {a['tokens']:,} tokens")
    print("decisions (rank, outcome, tokens, why):")
    for dec in d["decisions"]:
        rank = str(dec["rank"]) if dec["rank"] else "-"
        detail = f"  {dec['detail']}" if dec["detail"] else ""
        print(
            f"  {dec['subject'].lower():<5} {rank:>3}  {dec['outcome']:<24} {dec['name']}  "
            f"{dec['tokens']:,} tokens{detail}"
        )
    for t in d["totals"]:
        if t["attachments"] or t["dropped"]:
            print(
                f"  total {t['category']}: {t['attachments']} attached, {t['dropped']} dropped, "
                f"{t['tokens']:,} tokens"
            )
    if args.text:
        for a in d["attachments"]:
            print()
            print("\n".join(a["blocks"]))
    return 0


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB"):
        if size < 1024 or unit == "MiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover


def cmd_version(args: argparse.Namespace) -> int:
    print(f"postcompact {__version__} (api {API_VERSION})")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from postcompact.demo import run_demo

    cfg = _config(args)
    if args.no_start:
        conn = Connection(cfg.socket)
        try:
            if not conn.serving():
                print(f"postcompact is not running on {cfg.socket}")
                return EXIT_NOT_RUNNING
        finally:
            conn.close()
    elif not ensure_running(args, cfg):
        return EXIT_FAILURE
    return run_demo(cfg.socket)


def cmd_state(args: argparse.Namespace) -> int:
    from postcompact.persist import SCHEMA_VERSION, CheckResult, check_db, reset_db, state_db_path

    cfg = _config(args)
    where = state_location(cfg)
    res: CheckResult
    if where.kind == "postgresql":
        if args.state_command != "check":
            _err(
                "state reset moves an SQLite file aside; for a PostgreSQL database, drop "
                "postcompact's tables or give the daemons another database (docs/fleet.md)"
            )
            return EXIT_USAGE
        from postcompact.persist.postgres import check_pg

        res = check_pg(where.url)
        path: Path | str = res.path
        if not res.exists and res.problems:  # unreachable, or a bad URL
            _err(res.problems[0])
            return EXIT_FAILURE
    else:
        path = state_db_path(socket=cfg.socket, state_dir=where.dir, state_path=where.path)
    if args.state_command == "check":
        if where.kind != "postgresql":
            res = check_db(Path(path))
        if args.json:
            print(json.dumps(res.as_dict(), indent=2))
        elif not res.exists:
            print(f"no state database at {path} (nothing stored yet)")
        elif not res.is_database:
            _err(f"{res.problems[0]}; check --state-path / state_dir")
        else:
            print(f"state database {path}")
            print(f"  size            {_human(res.size_bytes)}")
            print(f"  schema version  {res.version} (this postcompact: {SCHEMA_VERSION})")
            for table, n in res.counts.items():
                print(f"  {table:<15} {n}")
            if res.quarantined:
                print(f"  {'quarantined':<15} {res.quarantined} rows (set aside; not a problem)")
            for version, at, by in res.history:
                when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at / 1000))
                print(f"  migrated to v{version} at {when} by postcompact {by}")
            if not res.problems:
                print("  integrity       ok")
            for problem in res.problems[:20]:
                print(f"  PROBLEM         {problem}")
            for bad in res.bad_rows[:STATE_ROWS_SHOWN]:
                print(f"  {'BAD ROW':<15} {bad.describe()}")
            if len(res.bad_rows) > STATE_ROWS_SHOWN:
                more = len(res.bad_rows) - STATE_ROWS_SHOWN
                print(f"  ... and {more} more bad rows (--json lists them all)")
            if res.problems and isinstance(path, Path):
                print(
                    f"the database is not usable; `postcompact state reset` moves it aside "
                    f"(to {path.name}.bak-<time>) so the daemon can start empty"
                )
            elif res.problems:
                print("the database is not usable by this postcompact (docs/fleet.md)")
            elif res.bad_rows:
                print(
                    f"{len(res.bad_rows)} rows cannot be used: `postcompact serve` moves them to "
                    "the quarantine table (docs/persistence.md) and serves the rest"
                )
        return 0 if res.ok else EXIT_FAILURE
    if not args.yes:
        if not sys.stdin.isatty():
            _err("state reset: pass --yes to confirm (stdin is not a terminal)")
            return EXIT_USAGE
        answer = input(f"move {path} aside and start with empty state? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing changed")
            return EXIT_FAILURE
    backup = reset_db(Path(path))
    if backup is None:
        print(f"no state database at {path}; nothing to reset")
    else:
        print(f"moved {path} to {backup}; the daemon will start with empty state")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    cfg = _control_config(args)
    conn = Connection(cfg.socket)
    try:
        return transcript_commands.cmd_import(args, conn)
    finally:
        conn.close()


def cmd_replay(args: argparse.Namespace) -> int:
    return transcript_commands.cmd_replay(args)


def cmd_eval(args: argparse.Namespace) -> int:
    return eval_commands.cmd_eval(args)


COMMANDS = {
    "serve": cmd_serve,
    "start": cmd_start,
    "stop": cmd_stop,
    "status": cmd_status,
    "version": cmd_version,
    "demo": cmd_demo,
    "preview": cmd_preview,
    "state": cmd_state,
    "import": cmd_import,
    "replay": cmd_replay,
    "eval": cmd_eval,
}


def _failed(args: argparse.Namespace, msg: str) -> None:
    """Say why the command failed, on stderr; a detached `serve` also records it in its log file
    (the one it logs to, or, when the configuration could not be read, where it would)."""
    _err(msg)
    if not getattr(args, "detached", False):
        return
    from postcompact.logs import log_file_handler, setup_logging, stderr_adopted

    if stderr_adopted():  # stderr is the log file already
        return
    with contextlib.suppress(Exception):  # best effort: stderr has it
        if log_file_handler() is None:
            flags = ("state_dir", "state_path", "state_url", "log_file")
            cfg = dataclasses.replace(
                socket_only(getattr(args, "socket", None), config_file=args.config),
                **{k: getattr(args, k) for k in flags if getattr(args, k, None) is not None},
            )
            setup_logging("info", cfg.log_file or detached_log_file(cfg))
        logging.getLogger("postcompact.cli").error(f"postcompact: {msg}")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except ConfigError as exc:
        _failed(args, f"configuration error: {exc}")
        return EXIT_USAGE
    except AlreadyRunning as exc:
        _failed(args, str(exc))
        return EXIT_ALREADY_RUNNING
    except LifecycleError as exc:
        _failed(args, str(exc))
        return EXIT_FAILURE
    except BrokenPipeError:  # `postcompact status | head`: the reader left; not an error
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # an unusable path (socket, log file, state directory...)
        where = f": {exc.filename}" if exc.filename else ""
        _failed(args, f"{exc.strerror or exc}{where}")
        return EXIT_FAILURE
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
