"""TCP: no lock-out without the token (issue 37 part 3; docs/security.md, "Connections").

The attack: connections that each speak HTTP/2 (the preface, SETTINGS and one HEADERS frame
without END_STREAM: a call whose request never ends) and answer every PING held all of the TCP
listener's slots, and every authenticated call of the owner failed. Here an attacker holds more
such connections than `limits.max_tcp_connections` (lowered to 8), opening a new one whenever one
is closed, while the owner's authenticated calls, each on a fresh connection, must succeed.

As root (CI) the attacker runs as another uid (65534, via setpriv), as in the issue; otherwise
as the same user, which the bounds must withstand too."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import hpack
import pytest
from postcompact.tcpfront import (
    FIRST_BYTES_MAX,
    PREFACE,
    UNAUTHENTICATED_PER_UID,
    Frames,
    TokenSniffer,
    peer_uid,
)
from postcompact_client import Client

from tests.daemon.conftest import RunningDaemon, serve_once, short_dir, start_daemon

CAP = 8  # limits.max_tcp_connections of the daemon under attack
NOBODY = 65534
METHOD = "/postcompact.v1.PostcompactService/GetServerInfo"

# Raw sockets speaking just enough HTTP/2 (RFC 9113, header block per RFC 7541, hand-encoded):
# each connection sends the preface, SETTINGS and a HEADERS frame without END_STREAM, then
# acknowledges the server's SETTINGS and answers its PINGs, so that neither the handshake nor the
# keepalive timeout nor the idle timeout closes it. A closed connection is replaced at once.
# `held`: connections open that the server answered (its SETTINGS came); `reset`: such
# connections the server closed later.
ATTACKER = textwrap.dedent(
    r"""
    import os, selectors, socket, sys
    port, n, path, status = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]

    def frame(kind, flags, stream, payload=b""):
        return (len(payload).to_bytes(3, "big") + bytes([kind, flags])
                + stream.to_bytes(4, "big") + payload)

    def literal(index, value):  # literal without indexing, indexed name (index < 15)
        return bytes([index, len(value)]) + value

    block = (
        b"\x83\x86"  # :method POST, :scheme http (static table 3 and 6)
        + literal(4, path.encode())  # :path
        + literal(1, f"127.0.0.1:{port}".encode())  # :authority
        + b"\x0f\x10" + bytes([16]) + b"application/grpc"  # content-type (static 31)
        + b"\x00\x02te\x08trailers"
    )
    HELLO = (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0)
             + frame(1, 0x4, 1, block))  # END_HEADERS, no END_STREAM: the request never ends
    sel = selectors.DefaultSelector()
    state = {}  # socket -> [buffer, answered]
    counts = {"held": 0, "reset": 0, "opened": 0}
    last = None

    def open_one():
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(HELLO)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
        state[s] = [b"", False]
        counts["opened"] += 1

    def lost(s):
        sel.unregister(s)
        s.close()
        if state.pop(s)[1]:
            counts["held"] -= 1
            counts["reset"] += 1
        open_one()

    for _ in range(n):
        open_one()
    while True:
        for key, _ in sel.select(0.2):
            s = key.fileobj
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            if not data:
                lost(s)
                continue
            buf = state[s][0] + data
            while len(buf) >= 9 and len(buf) >= 9 + int.from_bytes(buf[:3], "big"):
                size, kind, flags = int.from_bytes(buf[:3], "big"), buf[3], buf[4]
                payload, buf = buf[9 : 9 + size], buf[9 + size :]
                try:
                    if kind == 4 and not flags & 1:  # SETTINGS: acknowledge
                        s.sendall(frame(4, 1, 0))
                        if not state[s][1]:
                            state[s][1] = True
                            counts["held"] += 1
                    elif kind == 6 and not flags & 1:  # PING: answer
                        s.sendall(frame(6, 1, 0, payload))
                except OSError:
                    pass
            if s in state:
                state[s][0] = buf
        now = (counts["held"], counts["reset"], counts["opened"])
        if now != last:
            last = now
            with open(status + ".tmp", "w") as f:
                f.write(" ".join(map(str, now)))
            os.replace(status + ".tmp", status)
    """
)


def _attacker_prefix() -> tuple[list[str], str]:
    """How to run the attacker: as uid 65534 when root (with the system's Python: the test's
    may sit under a home directory that uid cannot enter), else as this user."""
    if os.geteuid() == 0 and shutil.which("setpriv") and Path("/usr/bin/python3").exists():
        setpriv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        return setpriv, "/usr/bin/python3"
    return [], sys.executable


class Attacker:
    def __init__(self, port: int, n: int) -> None:
        self.dir = short_dir("pca")
        self.status = self.dir / "status"
        prefix, python = _attacker_prefix()
        if prefix:  # the attacker's uid writes its status here
            os.chown(self.dir, NOBODY, NOBODY)
        self.proc = subprocess.Popen(
            [*prefix, python, "-c", ATTACKER, str(port), str(n), METHOD, str(self.status)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )

    def counts(self) -> tuple[int, int, int]:
        """(held, reset, opened): see ATTACKER."""
        assert self.proc.poll() is None, self.proc.stderr.read() if self.proc.stderr else ""
        try:
            held, reset, opened = map(int, self.status.read_text().split())
        except (FileNotFoundError, ValueError):
            return 0, 0, 0
        return held, reset, opened

    def wait(self, what: str, cond: Callable[[int, int, int], bool], timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not cond(*self.counts()):
            assert time.monotonic() < deadline, f"{what}: {self.counts()}"
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def attacked() -> Iterator[tuple[RunningDaemon, int, str]]:
    base = short_dir("pct")
    d = start_daemon(
        ["--tcp-port", "0"],
        config_toml=f"[limits]\nmax_tcp_connections = {CAP}\n",
        runtime_dir=base,
    )
    info = json.loads(d.server_json.read_text())
    token = Path(info["token_file"]).read_text().strip()
    try:
        yield d, info["tcp_port"], token
    finally:
        d.stop()
        shutil.rmtree(base, ignore_errors=True)


def _owner_call(port: int, token: str) -> int:
    """GetServerInfo with the token on a fresh TCP connection: the daemon's pid."""
    c = Client(f"127.0.0.1:{port}", token=token, auto_start=False, timeout=10.0)
    try:
        return c.server_info().pid
    finally:
        c.close()


def _tokenless_call(port: int) -> Any:
    """The error of a call without the token (a grpc.Call and RpcError)."""
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        fn: Any = ch.unary_unary(METHOD, request_serializer=None, response_deserializer=None)
        with pytest.raises(grpc.RpcError) as exc:
            fn(b"", timeout=10)
    return exc.value


FOREIGN = os.geteuid() == 0 and shutil.which("setpriv") is not None


@pytest.mark.parametrize(
    "attackers",
    [
        pytest.param(CAP + 4, id="over-the-cap"),
        # Three times the per-uid bound, from another uid: the ones over it are refused at
        # once; the owner's connections are counted apart.
        pytest.param(
            3 * UNAUTHENTICATED_PER_UID,
            id="over-the-uid-bound",
            marks=pytest.mark.skipif(not FOREIGN, reason="needs root and setpriv (another uid)"),
        ),
    ],
)
def test_connections_without_the_token_cannot_lock_the_owner_out(
    attacked: tuple[RunningDaemon, int, str], attackers: int
) -> None:
    """More never-ending unauthenticated calls than the TCP listener has slots, each on its own
    connection, answering PINGs and replaced when closed: the owner's authenticated calls on
    fresh connections succeed while the attacker holds its connections; a caller without the
    token is still told UNAUTHENTICATED; and the held connections are reset (the auth deadline)
    and replaced, round after round, without the owner noticing (before: every owner call
    failed UNAVAILABLE while the attacker held the slots)."""
    d, port, token = attacked
    attacker = Attacker(port, attackers)
    try:
        attacker.wait("the attacker never held the slots", lambda h, r, o: h >= CAP)
        assert _owner_call(port, token) == d.proc.pid
        err = _tokenless_call(port)
        assert err.code() == grpc.StatusCode.UNAUTHENTICATED, err
        # Rounds of the attack: the held connections are reset and replaced, and the owner's
        # calls go on succeeding throughout.
        _, first, _ = attacker.counts()
        deadline = time.monotonic() + 60
        while attacker.counts()[1] < first + 3 * CAP:
            assert time.monotonic() < deadline, f"held connections never reset: {attacker.counts()}"
            assert _owner_call(port, token) == d.proc.pid
            time.sleep(0.1)
        assert _owner_call(port, token) == d.proc.pid
        assert d.client.server_info().pid == d.proc.pid  # the Unix socket as well
    finally:
        attacker.stop()


def test_a_tcp_port_in_use_is_refused_by_name() -> None:
    """The front binds the port after the gRPC servers started: they are stopped again and the
    daemon exits with the one-line start-up error."""
    base = short_dir("pct")
    try:
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            r = serve_once(base, "--tcp-port", str(port))
        assert r.returncode != 0
        assert f"cannot listen on 127.0.0.1:{port} (in use?)" in r.stderr, r.stderr
    finally:
        shutil.rmtree(base, ignore_errors=True)


# --- what the front reads of a connection ---------------------------------------------------

TOKEN = b"s3cret-token"


def _frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return (
        len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload
    )


def _headers(auth: str | None) -> list[tuple[str, str]]:
    headers = [
        (":method", "POST"),
        (":scheme", "http"),
        (":path", METHOD),
        (":authority", "127.0.0.1:1"),
        ("content-type", "application/grpc"),
        ("te", "trailers"),
    ]
    if auth is not None:
        headers.append(("authorization", auth))
    return headers


def _block(auth: str | None, huffman: bool = True, encoder: hpack.Encoder | None = None) -> bytes:
    return bytes((encoder or hpack.Encoder()).encode(_headers(auth), huffman=huffman))


def _hello(block: bytes, *, split: int = 0, stream: int = 1) -> bytes:
    """The preface, SETTINGS, a WINDOW_UPDATE and the header block (in a HEADERS frame and, past
    `split`, a CONTINUATION)."""
    out = PREFACE + _frame(4, 0, 0) + _frame(8, 0, 0, (1 << 20).to_bytes(4, "big"))
    return out + _call(block, split=split, stream=stream)


def _call(block: bytes, *, split: int = 0, stream: int = 1) -> bytes:
    """A call's header block (split into HEADERS and CONTINUATION past `split`) and its DATA."""
    if split:
        out = _frame(1, 0, stream, block[:split]) + _frame(9, 0x4, stream, block[split:])
    else:
        out = _frame(1, 0x4, stream, block)
    return out + _frame(0, 0x1, stream, bytes(5))


def _verdict(data: bytes, step: int = 0) -> bool | None:
    sniffer = TokenSniffer(TOKEN)
    if not step:
        return sniffer.feed(data)
    verdict = None
    for i in range(0, len(data), step):
        verdict = sniffer.feed(data[i : i + step])
        if verdict is not None:
            return verdict
    return verdict


@pytest.mark.parametrize("huffman", [True, False])
@pytest.mark.parametrize("step", [0, 1, 7])
def test_a_header_block_with_the_token_authenticates(huffman: bool, step: int) -> None:
    assert _verdict(_hello(_block("Bearer s3cret-token", huffman)), step) is True
    assert _verdict(_hello(_block("bearer s3cret-token", huffman), split=5), step) is True


def test_a_later_call_with_the_token_authenticates() -> None:
    """gRPC clients share a connection between channels: a call without the token may come
    first. The later block names entries the first put in the dynamic table."""
    enc = hpack.Encoder()
    sniffer = TokenSniffer(TOKEN)
    assert sniffer.feed(_hello(_block(None, encoder=enc))) is None
    assert sniffer.feed(_call(_block("Bearer s3cret-tokeX", encoder=enc), stream=3)) is None
    assert sniffer.feed(_call(_block("Bearer s3cret-token", encoder=enc), stream=5)) is True


def test_padding_and_priority_are_skipped() -> None:
    block = _block("Bearer s3cret-token")
    payload = bytes([3]) + bytes(5) + block + bytes(3)  # pad length, priority, block, padding
    data = PREFACE + _frame(4, 0, 0) + _frame(1, 0x4 | 0x8 | 0x20, 1, payload)
    assert _verdict(data) is True


@pytest.mark.parametrize(
    "auth",
    [None, "Bearer s3cret-tokeX", "Bearer s3cret-toke", "Basic s3cret-token", "Bearer"],
)
def test_a_call_without_the_token_does_not_authenticate(auth: str | None) -> None:
    assert _verdict(_hello(_block(auth))) is None


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", id="http1"),
        pytest.param(PREFACE + _frame(1, 0x4, 1, b"\xff\xff\xff\xff\xff"), id="bad-hpack"),
        pytest.param(PREFACE + _frame(1, 0x4, 0, _block(None)), id="stream-0"),
        pytest.param(PREFACE + _frame(1, 0x4 | 0x8, 1, b"\x09abc"), id="bad-padding"),
        pytest.param(
            PREFACE + _frame(1, 0, 1, _block(None)[:4]) + _frame(4, 0, 0), id="interleaved"
        ),
    ],
)
def test_what_never_shows_the_token_is_unauthenticated(data: bytes) -> None:
    assert _verdict(data) is False


def test_the_bytes_read_for_the_token_are_bounded() -> None:
    sniffer = TokenSniffer(TOKEN)
    assert sniffer.feed(PREFACE + _frame(4, 0, 0) + _frame(1, 0, 1, b"\x83")) is None
    verdict = None
    sent = 0
    while verdict is None and sent <= FIRST_BYTES_MAX:
        verdict = sniffer.feed(_frame(9, 0, 1, b"\x83" * 1000))  # headers that never end
        sent += 1009
    assert verdict is False


def test_peer_uid_is_the_owner_of_the_peer_socket() -> None:
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen()
        with socket.create_connection(srv.getsockname()) as c:
            a, _ = srv.accept()
            with a, socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 4) as diag:
                uid = peer_uid(diag, socket.AF_INET, a.getsockname(), a.getpeername())
                assert uid == os.getuid()
                c.close()
                assert peer_uid(diag, socket.AF_INET, ("127.0.0.1", 1), ("127.0.0.1", 2)) is None


def test_frames_tell_where_a_frame_of_our_own_may_go() -> None:
    settings, ping = _frame(4, 0, 0, bytes(6)), _frame(6, 0, 0, bytes(8))
    frames = Frames()
    assert frames.at_boundary
    assert frames.feed(settings[:5]) == -1
    assert not frames.at_boundary
    assert frames.feed(settings[5:] + ping[:3]) == len(settings) - 5
    assert frames.feed(ping[3:12]) == -1
    assert frames.feed(ping[12:]) == len(ping) - 12
    assert frames.at_boundary
    assert frames.feed(_frame(4, 1, 0) + ping) == 9  # an empty frame ends with its header
