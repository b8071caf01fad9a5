"""Security (issue 5 item 3, docs/security.md): the daemon is the user's alone, TCP is loopback-only
and token-checked, and every read path stays inside the session roots, never follows a symlink out
of them and honours the deny globs; hooks run only from the daemon's config.

test_lifecycle.py already checks the runtime directory's modes, the refusal of a runtime
directory open to others and the basic TCP token flow; this file adds the other-user proof (run
as root, which CI is: a child process drops to uid/gid 65534), the state and log files, every RPC
over TCP, loopback binding, and every read path end to end.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from postcompact import auth
from postcompact_client import PostcompactError, Session
from postcompact_client.types import (
    CompactResponse,
    Decision,
    Outcome,
    PreviewCompactResponse,
    Subject,
    WriteCheck,
)
from postcompact_client.v1 import postcompact_pb2 as pb

from tests.daemon.conftest import (
    RunningDaemon,
    daemon_env,
    new_session_id,
    serve_command,
    short_dir,
    start_daemon,
)

OTHER_UID = 65534  # "nobody" on Debian-likes; the uid needs no passwd entry to setuid to it
OTHER_GID = 65534
SERVICE = "/postcompact.v1.PostcompactService/"
PD = grpc.StatusCode.PERMISSION_DENIED


def _mode(p: Path) -> int:
    return stat.S_IMODE(os.lstat(p).st_mode)


# --- another local user ----------------------------------------------------------------------

# Runs as root, imports what it needs, then drops to another uid (no supplementary groups) before
# touching anything: after setuid it could not even read the interpreter's own library directory.
_OTHER_USER = r"""
import errno, json, os, socket, sys
checks = json.loads(sys.argv[1])
os.setgroups([])
os.setgid(int(sys.argv[3]))
os.setuid(int(sys.argv[2]))
out = {"uid": os.getuid(), "euid": os.geteuid(), "results": []}
for op, path in checks:
    try:
        if op == "connect":
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(path)
            finally:
                s.close()
        elif op == "read":
            with open(path, "rb") as f:
                f.read(1)
        elif op == "list":
            os.listdir(path)
        r = "ok"
    except OSError as e:
        r = errno.errorcode.get(e.errno, str(e.errno))
    out["results"].append(r)
print(json.dumps(out))
"""


def as_other_user(checks: list[tuple[str, str]]) -> list[str]:
    """Each (op, path) attempted as uid 65534: "ok" or the errno name (e.g. "EACCES")."""
    proc = subprocess.run(
        [
            sys.executable,
            "-I",
            "-c",
            _OTHER_USER,
            json.dumps(checks),
            str(OTHER_UID),
            str(OTHER_GID),
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["uid"] == OTHER_UID
    assert out["euid"] == OTHER_UID
    results: list[str] = out["results"]
    return results


@pytest.fixture
def public_parent() -> Iterator[Path]:
    """A 0755 directory under /tmp: the only barrier between another user and the daemon's files
    is then the daemon's own 0700 directory and 0600 files."""
    p = Path(tempfile.mkdtemp(prefix="pcs", dir="/tmp"))
    p.chmod(0o755)
    yield p
    shutil.rmtree(p, ignore_errors=True)


def test_another_local_user_can_neither_connect_nor_read_state(public_parent: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("acting as another local user needs root (CI runs as root)")
    base = public_parent / "rt"
    base.mkdir(mode=0o700)
    state = base / "state" / "postcompact"
    log = state / "daemon.log"
    d = start_daemon(["--tcp-port", "0", "--log-file", str(log)], runtime_dir=base)
    try:
        s = d.client.open_session(str(public_parent), session_id=new_session_id("perm"))
        s.record_read(str(public_parent / "x.txt"), "x")  # something in the state store
        token = Path(json.loads(d.server_json.read_text())["token_file"])
        lock = base / "daemon.lock"
        tcp_sock = base / "tcp.sock"  # the gated gRPC server behind the TCP front

        # Every file of the daemon: the runtime dir 0700, sockets/token/server.json/lock 0600,
        # the state directory 0700 and everything in it 0600 (the log, and the SQLite database
        # with its -wal/-shm files when persistence is on).
        assert _mode(base) == 0o700
        for f in (d.socket_path, tcp_sock, token, d.server_json, lock):
            assert _mode(f) == 0o600, f
        assert log.exists()
        state_files: list[Path] = []
        assert _mode(state) == 0o700
        for dirpath, dirnames, filenames in os.walk(state):
            for name in dirnames:
                assert _mode(Path(dirpath) / name) == 0o700, name
            for name in filenames:
                state_files.append(Path(dirpath) / name)
                assert _mode(Path(dirpath) / name) == 0o600, name
        assert log in state_files

        private = [str(p) for p in (token, d.server_json, lock, *state_files)]
        checks = [("connect", str(d.socket_path)), ("connect", str(tcp_sock))]
        checks += [("read", p) for p in private]
        checks += [("list", str(base)), ("list", str(state))]

        # Positive control: the same child can connect to a socket and read a file that allow it.
        open_sock = public_parent / "open.sock"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(str(open_sock))
            listener.listen(1)
            open_sock.chmod(0o666)
            (public_parent / "open.txt").write_text("public")
            (public_parent / "open.txt").chmod(0o644)
            control = [("connect", str(open_sock)), ("read", str(public_parent / "open.txt"))]
            assert as_other_user(control) == ["ok", "ok"]

            # Layer 1: the 0700 directories stop another user at the door.
            assert as_other_user(checks) == ["EACCES"] * len(checks)

            # Layer 2: even with the runtime and state directories opened for traversal, each
            # file's own mode (0600) still refuses: connect(2) needs write permission on the socket.
            base.chmod(0o711)
            state.chmod(0o711)
            try:
                results = as_other_user(checks[:-2])
            finally:
                base.chmod(0o700)
                state.chmod(0o700)
            assert results == ["EACCES"] * (len(checks) - 2), list(
                zip(checks, results, strict=False)
            )
        finally:
            listener.close()

        assert d.client.health()  # the owner still gets in
        assert token.read_text().strip() not in log.read_text()  # the token is never logged
    finally:
        d.stop()
        shutil.rmtree(base, ignore_errors=True)


def test_log_file_is_private_even_if_it_existed(public_parent: Path) -> None:
    log = public_parent / "logs" / "daemon.log"
    log.parent.mkdir(mode=0o755)
    log.write_text("")
    log.chmod(0o644)
    d = start_daemon(["--log-file", str(log)])
    try:
        assert _mode(log) == 0o600
        assert "serving" in log.read_text()
    finally:
        d.stop()
        shutil.rmtree(d.dir, ignore_errors=True)


# --- TCP ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tcp_daemon() -> Iterator[tuple[RunningDaemon, int, str]]:
    d = start_daemon(["--tcp-port", "0"])
    info = json.loads(d.server_json.read_text())
    token = Path(info["token_file"]).read_text().strip()
    yield d, info["tcp_port"], token
    d.stop()
    shutil.rmtree(d.dir, ignore_errors=True)


def _listening_addresses(port: int) -> list[str]:
    """Local addresses of LISTEN sockets on `port`, from /proc/net/tcp{,6}."""
    found: list[str] = []
    for table, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except FileNotFoundError:
            continue
        for line in lines:
            fields = line.split()
            local, st = fields[1], fields[3]
            hex_ip, hex_port = local.split(":")
            if st != "0A" or int(hex_port, 16) != port:
                continue
            raw = bytes.fromhex(hex_ip)
            # /proc prints each 32-bit word in host (little-endian) order
            raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
            found.append(socket.inet_ntop(family, raw))
    return found


def _is_loopback(a: str) -> bool:
    """127.0.0.0/8, ::1, or 127.x as an IPv4-mapped address (grpc binds 127.0.0.1 through a
    dual-stack socket: /proc shows ::ffff:127.0.0.1)."""
    ip = ipaddress.ip_address(a)
    mapped = getattr(ip, "ipv4_mapped", None)
    return ip.is_loopback or (mapped is not None and mapped.is_loopback)


def _non_loopback_addresses() -> list[str]:
    addrs: set[str] = set()
    with contextlib.suppress(OSError):
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            addrs.add(str(info[4][0]))
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    with contextlib.suppress(OSError):
        probe.connect(("192.0.2.1", 9))  # no packet is sent: only picks the outgoing interface
        addrs.add(probe.getsockname()[0])
    probe.close()
    return sorted(a for a in addrs if not a.startswith("127.") and a != "0.0.0.0")


def test_tcp_listens_on_loopback_only(tcp_daemon: tuple[RunningDaemon, int, str]) -> None:
    _, port, _ = tcp_daemon
    addrs = _listening_addresses(port)
    assert addrs, f"no LISTEN socket on port {port}"
    assert all(_is_loopback(a) for a in addrs), addrs
    for ip in _non_loopback_addresses():
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as c:
            c.settimeout(5)
            assert c.connect_ex((ip, port)) != 0, f"reachable on {ip}:{port}"


@pytest.mark.parametrize(
    ("how", "value"),
    [
        ("config", "0.0.0.0"),
        ("config", "::"),
        ("env", "192.0.2.7"),
        ("env", "example.com"),
        ("config", "::ffff:127.0.0.1"),
    ],
)
def test_non_loopback_tcp_host_is_refused(how: str, value: str) -> None:
    base = short_dir()
    try:
        env = daemon_env(base)
        if how == "env":
            env["POSTCOMPACT_TCP_HOST"] = value
            env["POSTCOMPACT_TCP_PORT"] = "0"
        else:
            cfg = base / "config" / "postcompact" / "config.toml"
            cfg.parent.mkdir(parents=True)
            cfg.write_text(f"tcp_port = 0\ntcp_host = {json.dumps(value)}\n")
        r = subprocess.run(
            serve_command(base / "d.sock"), env=env, capture_output=True, timeout=30, check=False
        )
        assert r.returncode == 2, r.stderr
        assert b"not a loopback address" in r.stderr
        assert not (base / "d.sock").exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def test_tcp_host_ipv6_loopback() -> None:
    if not _ipv6_loopback():
        pytest.skip("no IPv6 loopback in this network namespace")
    d = start_daemon(["--tcp-port", "0"], env={"POSTCOMPACT_TCP_HOST": "::1"})
    try:
        info = json.loads(d.server_json.read_text())
        port = info["tcp_port"]
        assert _listening_addresses(port) == ["::1"]
        assert info["tcp_address"] == f"[::1]:{port}"
        assert d.client.server_info().tcp_address == f"[::1]:{port}"
        token = Path(info["token_file"]).read_text().strip()
        with grpc.insecure_channel(f"[::1]:{port}") as ch:
            call: Any = ch.unary_unary(SERVICE + "GetServerInfo")
            raw = call(b"", timeout=10, metadata=(("authorization", f"Bearer {token}"),))
            assert pb.GetServerInfoResponse.FromString(raw).pid == d.proc.pid
    finally:
        d.stop()
        shutil.rmtree(d.dir, ignore_errors=True)


ALL_METHODS = [
    SERVICE + m.name for m in pb.DESCRIPTOR.services_by_name["PostcompactService"].methods
]
OTHER_METHODS = [
    "/grpc.health.v1.Health/Check",
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
]


def _bad_credentials(token: str) -> list[tuple[tuple[str, str], ...]]:
    return [
        (),
        (("authorization", ""),),
        (("authorization", "Bearer"),),
        (("authorization", "Bearer "),),
        (("authorization", "Bearer wrong"),),
        (("authorization", f"Bearer {token[:-1]}"),),  # a prefix
        (("authorization", f"Bearer {token}x"),),  # an extension
        (("authorization", f"Bearer {token.upper()}"),),
        (("authorization", f"Basic {token}"),),  # the wrong scheme
        (("authorization", token),),  # no scheme
        (("x-token", token),),  # the wrong key
    ]


def _call(
    ch: grpc.Channel, method: str, payload: bytes, md: Any, *, stream: bool = False
) -> list[Any]:
    if stream:
        multi: Any = ch.stream_stream(method)
        return list(multi(iter([payload]), timeout=10, metadata=md))
    unary: Any = ch.unary_unary(method)
    return [unary(payload, timeout=10, metadata=md)]


def test_every_call_over_tcp_needs_the_token(tcp_daemon: tuple[RunningDaemon, int, str]) -> None:
    """Health and reflection included (decision: over TCP nothing answers without the token; the
    Unix socket needs none). Undecodable request bytes are UNAUTHENTICATED too: an
    unauthenticated request is never parsed."""
    _, port, token = tcp_daemon
    assert len(token) >= 40  # 32 random bytes, base64url
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        for method in ALL_METHODS + OTHER_METHODS:
            stream = "Reflection" in method
            for md in _bad_credentials(token):
                for payload in (b"", b"\xff\xff\xff\x0f"):
                    with pytest.raises(grpc.RpcError) as err:
                        _call(ch, method, payload, md, stream=stream)
                    e: Any = err.value
                    assert e.code() == grpc.StatusCode.UNAUTHENTICATED, (method, md, e.details())
                    trailers = dict(e.trailing_metadata() or ())
                    assert trailers.get("postcompact-error-reason") == "UNAUTHENTICATED"
        # With the token every method is served (bad input is the method's own error, never
        # UNAUTHENTICATED).
        good = (("authorization", f"Bearer {token}"),)
        for method in ALL_METHODS:
            try:
                _call(ch, method, b"", good)
            except grpc.RpcError as exc:
                e = exc
                assert e.code() != grpc.StatusCode.UNAUTHENTICATED, method
                assert e.code() not in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)
        # The scheme is case-insensitive, the token is not.
        info: Any = ch.unary_unary(SERVICE + "GetServerInfo")
        assert info(b"", timeout=10, metadata=(("authorization", f"bearer {token}"),)) is not None


def test_health_and_reflection_answer_over_tcp_with_the_token(
    tcp_daemon: tuple[RunningDaemon, int, str],
) -> None:
    """Behind the gate, with the token: health says SERVING and reflection lists the services
    (its streaming servicer is the grpc.aio one, answering on the loop)."""
    _, port, token = tcp_daemon
    good = (("authorization", f"Bearer {token}"),)
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        health = health_pb2_grpc.HealthStub(ch)
        got = health.Check(health_pb2.HealthCheckRequest(), timeout=10, metadata=good)
        assert got.status == health_pb2.HealthCheckResponse.SERVING
        stub = reflection_pb2_grpc.ServerReflectionStub(ch)
        ask = reflection_pb2.ServerReflectionRequest(list_services="")
        answers = list(stub.ServerReflectionInfo(iter([ask]), timeout=10, metadata=good))
        names = {s.name for s in answers[0].list_services_response.service}
        assert names == {
            "postcompact.v1.PostcompactService",
            "grpc.health.v1.Health",
            "grpc.reflection.v1alpha.ServerReflection",
        }


def test_token_is_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return bool(real(a, b))

    monkeypatch.setattr(hmac, "compare_digest", spy)  # the module auth.py calls it through
    assert auth._token_ok((("authorization", "Bearer s3cret"),), b"s3cret")
    assert not auth._token_ok((("authorization", "Bearer s3creX"),), b"s3cret")
    assert not auth._token_ok((("authorization", "Bearer s3cre"),), b"s3cret")
    assert calls == [(b"s3cret", b"s3cret"), (b"s3creX", b"s3cret"), (b"s3cre", b"s3cret")]


def test_each_start_makes_a_new_token_file() -> None:
    tokens = []
    for _ in range(2):
        d = start_daemon(["--tcp-port", "0"])
        try:
            info = json.loads(d.server_json.read_text())
            token_file = Path(info["token_file"])
            assert _mode(token_file) == 0o600
            tokens.append(token_file.read_text().strip())
            assert tokens[-1] not in d.server_json.read_text()
        finally:
            d.stop()
            shutil.rmtree(d.dir, ignore_errors=True)
        assert not token_file.exists()
    assert tokens[0] != tokens[1]


# --- roots, symlinks and deny globs on every read path -----------------------------------------

DENIED_NAMES = [
    ".env",
    ".env.local",
    "config/.env.production",
    "server.pem",
    "tls/server.key",
    "id_rsa",
    "id_ed25519.pub",
    "home/.ssh/config",
    "home/.aws/credentials",
    ".netrc",
    "cert.p12",
]


@pytest.fixture
def world(daemon: RunningDaemon, request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """A project with ordinary files, secrets matching the default deny globs, and a directory
    outside the roots holding a secret; plus the session on it."""
    root = short_dir("pcr")
    outside = short_dir("pcx")
    plans = short_dir("pcl")
    (outside / "secret.txt").write_text("OUTSIDE-SECRET\n")
    (root / "a.txt").write_text("alpha\n")
    (root / "b.txt").write_text("beta\n")
    for name in DENIED_NAMES:
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"DENIED-SECRET {name}\n")
    s = daemon.client.open_session(
        str(root), session_id=new_session_id(request.node.name), plans_directory=str(plans)
    )
    yield {"root": root, "outside": outside, "plans": plans, "s": s}
    for p in (root, outside, plans):
        shutil.rmtree(p, ignore_errors=True)


def _err(fn: Any, *args: Any, **kw: Any) -> PostcompactError:
    with pytest.raises(PostcompactError) as err:
        fn(*args, **kw)
    return err.value


def _compact(s: Session) -> CompactResponse:
    # include_content: the leak checks then see the raw copies too, not only rendered_text; no
    # budget matched to Claude Code's (whose picks here are the unreadable files): every file
    # that may be restored is.
    return s.compact(skip_hooks=True, policy=_EVERY_FILE, include_content=True)


_EVERY_FILE = {"max_files": 50, "match_budget": "none"}


def _outcome(resp: CompactResponse | PreviewCompactResponse, path: Path) -> Decision:
    (d,) = [d for d in resp.decisions if d.name == str(path)]
    return d


def _leaks(resp: CompactResponse | PreviewCompactResponse, *secrets: str) -> list[str]:
    blob = resp.to_pb().SerializeToString()  # every byte of the answer, as it was sent
    return [x for x in secrets if x.encode() in blob]


ESCAPES = ["/etc/passwd", "../../../../etc/passwd", "a/../../x", "~/.bashrc", "/"]


@pytest.mark.parametrize("raw", ESCAPES)
def test_paths_outside_the_roots_are_refused_by_every_path_rpc(
    world: dict[str, Any], raw: str
) -> None:
    s: Session = world["s"]
    calls = [
        lambda: s.read_file(raw),
        lambda: s.record_read(raw, "x"),
        lambda: s.record_write(raw, "x", timestamp_ms=1),
        lambda: s.check_write(raw),
        lambda: s.set_plan(raw),
    ]
    for call in calls:
        e = _err(call)
        assert e.code == PD, raw
        assert e.reason == "PATH_OUTSIDE_ROOTS"


def test_read_file_never_follows_a_symlink_out(world: dict[str, Any]) -> None:
    s: Session = world["s"]
    root, outside = world["root"], world["outside"]
    (root / "link.txt").symlink_to(outside / "secret.txt")
    (root / "linkdir").symlink_to(outside)
    (root / "inner.txt").symlink_to(root / "a.txt")
    for raw in ("link.txt", "linkdir/secret.txt", str(root / "linkdir" / "secret.txt")):
        e = _err(s.read_file, raw)
        assert (e.code, e.reason) == (PD, "PATH_OUTSIDE_ROOTS"), raw
        assert "OUTSIDE-SECRET" not in str(e)
    assert s.read_file("inner.txt").content == b"alpha\n"  # a symlink that stays inside is fine


@pytest.mark.parametrize("name", DENIED_NAMES)
def test_read_file_honours_the_default_deny_globs(world: dict[str, Any], name: str) -> None:
    s: Session = world["s"]
    e = _err(s.read_file, name)
    assert (e.code, e.reason) == (PD, "PATH_DENIED")
    # Nor does the daemon take its content from the harness (it would hold the secret).
    for record in (s.record_read, s.record_write):
        e = _err(record, name, f"DENIED-SECRET {name}\n", timestamp_ms=1)
        assert (e.code, e.reason) == (PD, "PATH_DENIED")
        assert "DENIED-SECRET" not in str(e)
    e = _err(s.read_file, name)
    assert (e.code, e.reason) == (PD, "PATH_DENIED")
    assert s.check_write(name).result == WriteCheck.NOT_READ


def test_a_symlink_to_a_secret_is_denied(world: dict[str, Any]) -> None:
    s: Session = world["s"]
    (world["root"] / "innocent.txt").symlink_to(world["root"] / ".env")
    e = _err(s.read_file, "innocent.txt")
    assert (e.code, e.reason) == (PD, "PATH_DENIED")


def test_restoration_never_reads_outside_the_roots_nor_a_denied_file(
    world: dict[str, Any],
) -> None:
    s: Session = world["s"]
    root, outside = world["root"], world["outside"]
    secrets = [f"secret-{i}.txt" for i in range(len(DENIED_NAMES))]
    for name in secrets:
        (root / name).write_text("an ordinary file, for now\n")
    for name in ("a.txt", "b.txt", *secrets):
        s.record_read(name, (root / name).read_text())
    # After the reads: a.txt becomes a symlink out of the roots, each secret-N.txt a symlink to a
    # deny-globbed file, and the directory of sub/c.txt a symlink to a directory outside holding
    # a c.txt; b.txt stays an ordinary file.
    (root / "a.txt").unlink()
    (root / "a.txt").symlink_to(outside / "secret.txt")
    for link, target in zip(secrets, DENIED_NAMES, strict=True):
        (root / link).unlink()
        (root / link).symlink_to(root / target)
    (outside / "c.txt").write_text("OUTSIDE-SECRET c\n")
    (root / "sub").mkdir()
    (root / "sub" / "c.txt").write_text("inside c\n")
    s.record_read("sub/c.txt", "inside c\n")
    shutil.rmtree(root / "sub")
    (root / "sub").symlink_to(outside)

    for resp in (
        s.preview_compact(skip_hooks=True, policy=_EVERY_FILE, include_content=True),
        _compact(s),
    ):
        assert _outcome(resp, root / "a.txt").outcome == Outcome.UNREADABLE
        assert "outside_roots" in _outcome(resp, root / "a.txt").detail
        assert _outcome(resp, root / "sub" / "c.txt").outcome == Outcome.UNREADABLE
        assert _outcome(resp, root / "b.txt").outcome == Outcome.RESTORED
        for name in secrets:
            assert _outcome(resp, root / name).outcome == Outcome.DENIED, name
        assert _leaks(resp, "OUTSIDE-SECRET", "DENIED-SECRET") == []
    # Nothing denied or outside was re-seeded into the cache: a second compaction restores b.txt.
    again = _compact(s)
    assert [d.name for d in again.decisions] == [str(root / "b.txt")]


def test_plan_files_stay_in_the_roots_or_the_plans_directory(world: dict[str, Any]) -> None:
    s: Session = world["s"]
    root, outside, plans = world["root"], world["outside"], world["plans"]

    # Decision (docs/security.md, "Plans"): the plans directory is readable for plans even
    # when it is outside the roots.
    (plans / "p.md").write_text("PLAN-IN-PLANS-DIR\n")
    s.set_plan(str(plans / "p.md"))
    resp = _compact(s)
    assert [
        a.plan_file_reference.plan_content
        for a in resp.attachments
        if a.plan_file_reference is not None
    ] == [b"PLAN-IN-PLANS-DIR\n"]

    # Anywhere else is refused by SetPlan...
    e = _err(s.set_plan, str(outside / "secret.txt"))
    assert (e.code, e.reason) == (PD, "PATH_OUTSIDE_ROOTS")
    # ...and what SetPlan accepted is not read through a symlink out, nor when deny-globbed.
    (plans / "evil.md").symlink_to(outside / "secret.txt")
    (root / "linkdir").symlink_to(outside)
    for plan in (str(plans / "evil.md"), "linkdir/secret.txt", ".env", "server.pem"):
        s.set_plan(plan)
        s.set_mode("plan")
        resp = _compact(s)
        assert not any(a.plan_file_reference is not None for a in resp.attachments), plan
        (mode,) = [a.plan_mode for a in resp.attachments if a.plan_mode is not None]
        assert not mode.plan_exists
        assert _leaks(resp, "OUTSIDE-SECRET", "DENIED-SECRET") == [], plan


def test_the_plans_directory_is_a_root_for_its_own_files(world: dict[str, Any]) -> None:
    """A harness writes its plan file in the plans directory (outside the roots here) and then
    reports that write, reads it back and checks an edit of it, like any file of the roots; the
    plans directory lends nothing else: a symlink out of it is still refused, and so is a file
    outside both."""
    s: Session = world["s"]
    plans, outside = world["plans"], world["outside"]
    plan = plans / "x.md"
    plan.write_text("# Plan\n\n1. step\n")
    assert s.set_plan(str(plan)) == str(plan)
    assert s.record_write(str(plan), plan.read_text()) == str(plan)
    assert s.read_file(str(plan)).content == plan.read_bytes()
    assert s.read_file(str(plan)).unchanged  # the read was recorded
    assert s.record_read(str(plan), plan.read_text()) == str(plan)
    assert s.check_write(str(plan)).result == WriteCheck.ALLOWED
    plan.write_text("# Plan\n\n1. step\n2. another\n")
    assert b"another" in s.read_file(str(plan)).content

    (plans / "out.md").symlink_to(outside / "secret.txt")
    e = _err(s.read_file, str(plans / "out.md"))
    assert e.code == PD
    for call in (s.read_file, s.check_write):
        e = _err(call, str(outside / "secret.txt"))
        assert (e.code, e.reason) == (PD, "PATH_OUTSIDE_ROOTS")
    e = _err(s.record_write, str(outside / "secret.txt"), "x")
    assert (e.code, e.reason) == (PD, "PATH_OUTSIDE_ROOTS")


def test_set_plan_of_nothing_answers_the_default_plan_file(world: dict[str, Any]) -> None:
    """SetPlan("") goes back to the default plan file and says which file that is: the path
    Compact reads the plan from (docs/claude-code.md §8)."""
    s: Session = world["s"]
    plans = world["plans"]
    default = s.set_plan("")
    assert os.path.dirname(default) == str(plans)
    assert re.fullmatch(r"plan-[0-9a-f]{12}\.md", os.path.basename(default))
    sub = s.start_agent("sub")
    assert sub.set_plan("") == default.removesuffix(".md") + "-agent-sub.md"
    Path(default).write_text("THE-DEFAULT-PLAN\n")
    resp = _compact(s)
    refs = [a.plan_file_reference for a in resp.attachments if a.plan_file_reference is not None]
    assert [(r.plan_file_path, r.plan_content) for r in refs] == [(default, b"THE-DEFAULT-PLAN\n")]


def test_check_write_compares_content_only_inside_the_roots(world: dict[str, Any]) -> None:
    s: Session = world["s"]
    root, outside = world["root"], world["outside"]
    past = int(time.time() * 1000) - 60_000
    # The recorded content equals the outside secret; a.txt then becomes a symlink to it with a
    # newer mtime. Comparing would answer ALLOWED (an equality oracle on a file outside the
    # roots); the daemon does not read it and answers MODIFIED.
    s.record_read("a.txt", "OUTSIDE-SECRET\n", timestamp_ms=past)
    (root / "a.txt").unlink()
    (root / "a.txt").symlink_to(outside / "secret.txt")
    assert s.check_write("a.txt").result == WriteCheck.MODIFIED
    # Same for a file that became a deny-globbed one (a symlink to .env) with the very content
    # that was recorded: its content is not compared either.
    s.record_read("c.txt", "DENIED-SECRET .env\n", timestamp_ms=past)
    (root / "c.txt").symlink_to(root / ".env")
    assert s.check_write("c.txt").result == WriteCheck.MODIFIED
    # The ordinary case still works: same content, newer mtime, inside the roots → ALLOWED.
    s.record_read("b.txt", "beta\n", timestamp_ms=past)
    assert s.check_write("b.txt").result == WriteCheck.ALLOWED


def test_a_fifo_never_blocks_the_daemon(world: dict[str, Any], daemon: RunningDaemon) -> None:
    """CheckWrite used to open() the file to compare contents: a FIFO blocked the event loop, and
    with it every client, forever."""
    s: Session = world["s"]
    fifo = world["root"] / "pipe"
    os.mkfifo(fifo)
    s.record_read("pipe", "x", timestamp_ms=1)
    # Before the fix these calls hung the daemon; pytest's per-test timeout would fail them.
    assert s.check_write("pipe").result == WriteCheck.MODIFIED
    assert s.check_stale().stale_paths == (str(fifo),)
    e = _err(s.read_file, "pipe")
    assert e.reason == "FILE_IS_DEVICE"
    resp = _compact(s)
    assert _outcome(resp, fifo).outcome == Outcome.UNREADABLE
    assert daemon.client.health()


# --- hooks only from the config ------------------------------------------------------------------


def test_request_fields_cannot_carry_commands() -> None:
    """No request field is run: the only `command` field (CheckStale) is matched as text, and a
    transcript is JSON data, parsed, never run."""
    suspicious = set()
    for name, desc in pb.DESCRIPTOR.message_types_by_name.items():
        if not name.endswith("Request"):
            continue
        for f in desc.fields:
            if any(w in f.name for w in ("command", "hook", "exec", "script", "shell")):
                suspicious.add(f"{name}.{f.name}")
    assert suspicious == {
        "CheckStaleRequest.command",
        "ImportTranscriptRequest.transcript",
        "CompactRequest.skip_hooks",
        "PreviewCompactRequest.skip_hooks",
    }


def test_hooks_run_only_from_the_config_and_client_text_is_never_run(
    project: Path,
) -> None:
    marks = short_dir("pcm")
    hook_out = marks / "hook-ran"
    cfg = f"""
[[hooks.session_start]]
command = "touch {hook_out}; printf 'from-the-config-hook'"
timeout_s = 10
"""
    d = start_daemon(config_toml=cfg)
    try:
        s = d.client.open_session(str(project), session_id=new_session_id("hooks"))
        texts = [
            f"$(touch {marks}/m1)",
            f"`touch {marks}/m2`",
            f"; touch {marks}/m3",
            f"' && touch {marks}/m4 && '",
        ]
        s.check_stale(command=f"touch {marks}/m5", started_at_ms=0)
        resp = s.compact(additional_context=texts)
        assert hook_out.exists()
        (ctx,) = [
            a.hook_additional_context
            for a in resp.attachments
            if a.hook_additional_context is not None
        ]
        assert ctx.content == ("from-the-config-hook", *texts)  # verbatim text
        hooks = [dd for dd in resp.decisions if dd.subject == Subject.HOOK]
        assert [(h.name, h.outcome) for h in hooks] == [
            (f"touch {hook_out}; printf 'from-the-config-hook'", Outcome.HOOK_OK)
        ]
        time.sleep(0.2)
        assert sorted(p.name for p in marks.iterdir()) == ["hook-ran"]
        # skip_hooks is the only hook control a client has.
        hook_out.unlink()
        s.compact(skip_hooks=True)
        assert not hook_out.exists()
    finally:
        d.stop()
        shutil.rmtree(d.dir, ignore_errors=True)
        shutil.rmtree(marks, ignore_errors=True)


def test_configured_deny_globs_add_to_the_defaults(project: Path) -> None:
    d = start_daemon(config_toml='deny_globs = ["*.secret", "*/private/*"]\n')
    try:
        (project / "x.secret").write_text("CONFIGURED-SECRET\n")
        (project / "private").mkdir()
        (project / "private" / "notes.md").write_text("CONFIGURED-SECRET\n")
        (project / ".env").write_text("DENIED-SECRET\n")
        s = d.client.open_session(str(project), session_id=new_session_id("cfgdeny"))
        for name in ("x.secret", "private/notes.md", ".env"):
            for call in (s.read_file, lambda n: s.record_read(n, "whatever")):
                e = _err(call, name)
                assert (e.code, e.reason) == (PD, "PATH_DENIED"), name
        # Recorded while ordinary, then a symlink to what a configured glob denies.
        for link in ("l1.md", "l2.md"):
            (project / link).write_text("ordinary\n")
            s.record_read(link, "ordinary\n")
        (project / "l1.md").unlink()
        (project / "l1.md").symlink_to(project / "x.secret")
        (project / "l2.md").unlink()
        (project / "l2.md").symlink_to(project / "private" / "notes.md")
        s.record_read("README.md", "# demo\n\nhello\n")
        resp = _compact(s)
        for name in ("l1.md", "l2.md"):
            assert _outcome(resp, project / name).outcome == Outcome.DENIED
        assert _outcome(resp, project / "README.md").outcome == Outcome.RESTORED
        assert _leaks(resp, "CONFIGURED-SECRET", "DENIED-SECRET") == []
    finally:
        d.stop()
        shutil.rmtree(d.dir, ignore_errors=True)
