"""The TCP listener's front: what a connection must show before it may stay (issue 37 part 3;
docs/security.md, "Connections").

gRPC's one cap on a listener's connections (`grpc.max_allowed_incoming_connections`) counts a
connection that never shows the token like the owner's, and grpc.aio has no hook on a
connection before a stream starts: 64 connections, each holding open one call whose request
never ends (an HTTP/2 HEADERS frame without END_STREAM, PINGs answered), locked every
authenticated call out. So the daemon accepts on the public TCP port itself and forwards each
connection, byte for byte, to the gated gRPC server on a private Unix socket (0600 in the 0700
runtime directory), reading the client's bytes only until a header block shows the token:

- A connection that shows the token (auth.bearer_ok) in a call's headers within
  `AUTH_DEADLINE_S` of connecting is authenticated.
  At most `limits.max_tcp_connections` of them are open; one more is closed. From then on its
  bytes are only copied; every call on it is still checked by auth.TokenGate.
- Any other connection is unauthenticated. It is forwarded all the same (a caller without the
  token gets gRPC's UNAUTHENTICATED answer), but `AUTH_DEADLINE_S` after it was accepted it is
  sent a GOAWAY (a client opens no more calls on it, and reconnects for new ones) and
  `GOAWAY_GRACE_S` later it is closed, with every stream still on it. (Not at its first call:
  gRPC clients share one connection between channels, so a token-less call and the owner's may
  come on the same one.)
- Unauthenticated connections are counted per peer uid (the owner of the peer's socket, which
  the kernel tells for loopback TCP: sock_diag), at most `UNAUTHENTICATED_PER_UID` each and
  `UNAUTHENTICATED_MAX` in all. Another user's connection over its uid's bound is refused at
  once: the bound only ever costs that uid, and refusing costs the daemon least (no gRPC side).
  Over the daemon's own uid's bound (or where the kernel does not tell), or over the bound in
  all, the oldest is closed instead: holding a slot gains nothing, and the owner's new
  connection needs its slot only until its first HEADERS, a millisecond or so.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import socket
import struct
from pathlib import Path

import hpack

from postcompact.auth import AUTH_METADATA_KEY, bearer_ok
from postcompact.connections import KEEPALIVE_TIME_MS, KEEPALIVE_TIMEOUT_MS

__all__ = [
    "AUTH_DEADLINE_S",
    "GOAWAY_GRACE_S",
    "UNAUTHENTICATED_MAX",
    "UNAUTHENTICATED_PER_UID",
    "Frames",
    "TcpFront",
    "TokenSniffer",
    "peer_uid",
]

log = logging.getLogger("postcompact.tcpfront")

AUTH_DEADLINE_S = 2.0  # from accept to the GOAWAY of every unauthenticated connection
GOAWAY_GRACE_S = 1.0  # from that GOAWAY to its close: the calls in flight are answered by then
UNAUTHENTICATED_PER_UID = 16
UNAUTHENTICATED_MAX = 128
# Read, at most, for the token (gRPC's own bound on a call's metadata is 16 KiB too). Small on
# purpose: decoding a header block costs about its size squared (the hpack package copies the
# rest of the block per header), so this bounds what one connection costs the event loop.
FIRST_BYTES_MAX = 16 * 1024
_TABLE_MAX = 64 * 1024  # the largest HPACK table a client may ask for
CLOSE_GRACE_S = 5.0  # for the rest of an answer to a client whose other side closed
# A client that reads nothing of what waits for it for this long is closed: what gRPC's keepalive
# did before the front (its ping now waits, behind the answer, in the front's Unix socket).
STALL_S = (KEEPALIVE_TIME_MS + KEEPALIVE_TIMEOUT_MS) / 1000
_WARN_EVERY_S = 60.0

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
_HEADERS, _CONTINUATION = 0x1, 0x9
_END_HEADERS, _PADDED, _PRIORITY = 0x4, 0x8, 0x20
_AUTH_NAME = AUTH_METADATA_KEY.encode()
# GOAWAY, last stream 2^31-1 (every call sent may still be answered), NO_ERROR: RFC 9113, 6.8.
GOAWAY = bytes([0, 0, 8, 0x7, 0, 0, 0, 0, 0]) + (2**31 - 1).to_bytes(4, "big") + bytes(4)


class TokenSniffer:
    """Reads a client's bytes (the HTTP/2 preface, then frames) up to the end of the first
    header block that shows the token. `feed` answers None while it has not seen one, True when
    a block shows it, False when it never will (the bytes are no HTTP/2, malformed, or past
    FIRST_BYTES_MAX). Every header block is decoded, in order, by one HPACK decoder: a later
    block may name what an earlier one put in the dynamic table."""

    def __init__(self, token: bytes) -> None:
        self._token = token
        self._buf = bytearray()
        self._seen = 0
        self._preface = False
        self._stream = 0  # of the header block being read (0: none begun)
        self._block = bytearray()
        self._decoder = hpack.Decoder(max_header_list_size=FIRST_BYTES_MAX)
        self._decoder.max_allowed_table_size = _TABLE_MAX

    def feed(self, data: bytes) -> bool | None:
        self._seen += len(data)
        if self._seen > FIRST_BYTES_MAX:
            return False
        buf = self._buf
        buf += data
        if not self._preface:
            if len(buf) < len(PREFACE):
                return None if PREFACE.startswith(buf) else False
            if buf[: len(PREFACE)] != PREFACE:
                return False
            del buf[: len(PREFACE)]
            self._preface = True
        while len(buf) >= 9:
            size = int.from_bytes(buf[:3], "big")
            kind, flags = buf[3], buf[4]
            stream = int.from_bytes(buf[5:9], "big") & 0x7FFF_FFFF
            if len(buf) < 9 + size:
                return None
            payload = bytes(buf[9 : 9 + size])
            del buf[: 9 + size]
            if self._stream:  # only its CONTINUATION frames may follow (RFC 9113, section 6.10)
                if kind != _CONTINUATION or stream != self._stream:
                    return False
                self._block += payload
            elif kind == _HEADERS:
                fragment = _fragment(payload, flags)
                if fragment is None or stream == 0:
                    return False
                self._stream = stream
                self._block += fragment
            else:  # SETTINGS, WINDOW_UPDATE, PING, ...: gRPC judges them
                continue
            if flags & _END_HEADERS:
                verdict = self._judge()
                if verdict is not None:
                    return verdict
                self._stream, self._block = 0, bytearray()
        return None

    def _judge(self) -> bool | None:
        try:
            headers = self._decoder.decode(bytes(self._block), raw=True)
        except hpack.HPACKError:
            return False
        for name, value in headers:
            if name == _AUTH_NAME and bearer_ok(bytes(value), self._token):
                return True
        return None


class Frames:
    """Where the frames of one direction of a connection end (a 9-byte header, then its
    payload): a frame of our own goes in only between two."""

    def __init__(self) -> None:
        self._header = bytearray()  # of the frame being read, until it has 9 bytes
        self._left = 0  # payload bytes of that frame still to come

    @property
    def at_boundary(self) -> bool:
        return not self._header and not self._left

    def feed(self, data: bytes) -> int:
        """Takes `data`; the offset just past the first frame that ends in it, or -1."""
        first, i, n = -1, 0, len(data)
        while i < n:
            if self._left:
                step = min(self._left, n - i)
                self._left -= step
                i += step
            else:
                take = min(9 - len(self._header), n - i)
                self._header += data[i : i + take]
                i += take
                if len(self._header) < 9:
                    continue
                self._left = int.from_bytes(self._header[:3], "big")
                self._header.clear()
            if first < 0 and self.at_boundary:
                first = i
        return first


def _fragment(payload: bytes, flags: int) -> bytes | None:
    """The header block fragment of a HEADERS frame's payload (padding and priority off), None
    when malformed."""
    start, pad = 0, 0
    if flags & _PADDED:
        if not payload:
            return None
        pad, start = payload[0], 1
    if flags & _PRIORITY:
        start += 5
    end = len(payload) - pad
    return payload[start:end] if start <= end else None


# --- the peer's uid: the kernel's sock_diag (NETLINK_SOCK_DIAG), one exact lookup ------------
_NETLINK_SOCK_DIAG = 4
_SOCK_DIAG_BY_FAMILY = 20
_NLM_F_REQUEST = 1
_NO_COOKIE = 0xFFFF_FFFF
_UID_AT = 16 + 4 + 48 + 12  # nlmsghdr, inet_diag_msg's four bytes, its sockid, expires..wqueue
_SEQ = itertools.count(1)


def peer_uid(
    diag: socket.socket, family: int, ours: tuple[str, int], peer: tuple[str, int]
) -> int | None:
    """The uid owning the peer's end of a loopback TCP connection (its socket's source is the
    peer's address, its destination ours), or None when the kernel does not say."""
    try:
        src = socket.inet_pton(family, peer[0]).ljust(16, b"\0")
        dst = socket.inet_pton(family, ours[0]).ljust(16, b"\0")
    except (OSError, ValueError):
        return None
    sockid = struct.pack("!HH", peer[1], ours[1]) + src + dst
    sockid += struct.pack("=III", 0, _NO_COOKIE, _NO_COOKIE)
    body = struct.pack("=BBBxI", family, socket.IPPROTO_TCP, 0, 0xFFFF_FFFF) + sockid
    seq = next(_SEQ)
    header = struct.pack("=IHHII", 16 + len(body), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST, seq, 0)
    try:
        diag.send(header + body)
        for _ in range(4):  # past the answer to an earlier question that timed out, if any
            answer = diag.recv(8192)
            if len(answer) >= 16 and struct.unpack_from("=I", answer, 8)[0] == seq:
                break
        else:
            return None
    except OSError:
        return None
    if len(answer) < _UID_AT + 4 or struct.unpack_from("=H", answer, 4)[0] != _SOCK_DIAG_BY_FAMILY:
        return None  # NLMSG_ERROR: no such socket (gone already), or not allowed
    uid: int = struct.unpack_from("=I", answer, _UID_AT)[0]
    return uid


def _diag_socket() -> socket.socket | None:
    try:
        s = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_SOCK_DIAG)
    except (OSError, AttributeError):
        return None
    s.settimeout(1.0)  # the kernel answers at once; never hang the event loop on it
    return s


# --- the connections ----------------------------------------------------------------------------


class _Upstream(asyncio.Protocol):
    """The gRPC side of one connection."""

    def __init__(self, conn: _Client) -> None:
        self.conn = conn

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.conn.connected(transport)

    def data_received(self, data: bytes) -> None:
        self.conn.send_down(data)

    def eof_received(self) -> bool:
        self.conn.close()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.conn.close()

    def pause_writing(self) -> None:  # gRPC reads slower than the client sends
        self.conn.pause_reading()

    def resume_writing(self) -> None:
        self.conn.resume_reading()


class _Client(asyncio.Protocol):
    """The client side of one connection: admitted by the front, forwarded to gRPC."""

    def __init__(self, front: TcpFront) -> None:
        self.front = front
        self.uid: int | None = None
        self.transport: asyncio.Transport | None = None
        self.upstream: asyncio.Transport | None = None
        self.early: list[bytes] = []  # what came before the gRPC side was connected
        self.sniffer: TokenSniffer | None = TokenSniffer(front.token)
        self.authenticated = False
        self.closed = False
        self.deadline: asyncio.TimerHandle | None = None
        self.task: asyncio.Task[None] | None = None
        self.down = Frames()  # gRPC's frames to the client, while unauthenticated
        self.sent_down = False
        self.goaway = False  # due at the next frame boundary
        self.stalled: asyncio.TimerHandle | None = None  # while the client reads nothing

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.front.admit(self)

    def data_received(self, data: bytes) -> None:
        if self.closed:
            return
        if self.upstream is None:
            if self.task is None:  # a connection that never sends costs no gRPC connection
                self.task = asyncio.get_running_loop().create_task(self.front.connect(self))
            self.early.append(data)
            if sum(map(len, self.early)) > FIRST_BYTES_MAX:
                self.pause_reading()  # until the gRPC side is there
        else:
            self.upstream.write(data)
        if self.sniffer is not None:
            verdict = self.sniffer.feed(data)
            if verdict is not None:
                self.sniffer = None
                if verdict:
                    self.front.authenticate(self)

    def eof_received(self) -> bool:
        self.close()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.close()

    def pause_writing(self) -> None:  # the client reads slower than gRPC answers
        if self.upstream is not None:
            self.upstream.pause_reading()
        if self.stalled is None:
            self.stalled = asyncio.get_running_loop().call_later(STALL_S, self.close, True)

    def resume_writing(self) -> None:
        if self.upstream is not None:
            self.upstream.resume_reading()
        if self.stalled is not None:
            self.stalled.cancel()
            self.stalled = None

    # --- called by the front and the gRPC side ---
    def connected(self, upstream: asyncio.Transport) -> None:
        if self.closed:
            upstream.abort()
            return
        self.upstream = upstream
        for data in self.early:
            upstream.write(data)
        self.early.clear()
        self.resume_reading()

    def send_down(self, data: bytes) -> None:
        if self.transport is None or self.closed:
            return
        if not self.authenticated:
            self.sent_down = True
            end = self.down.feed(data)
            if self.goaway and end >= 0:
                self.goaway = False
                data = data[:end] + GOAWAY + data[end:]
        self.transport.write(data)

    def expire(self) -> None:
        """The auth deadline passed: a GOAWAY between two of gRPC's frames (at once if nothing
        was answered yet: no HTTP/2 to speak of), the close GOAWAY_GRACE_S later."""
        if self.closed or self.authenticated or self.transport is None:
            return
        if not self.sent_down:
            self.close()
            return
        if self.down.at_boundary:
            self.transport.write(GOAWAY)
        else:
            self.goaway = True
        self.deadline = asyncio.get_running_loop().call_later(GOAWAY_GRACE_S, self.close)

    def pause_reading(self) -> None:
        if self.transport is not None and self.transport.is_reading():
            self.transport.pause_reading()

    def resume_reading(self) -> None:
        if self.transport is not None and not self.transport.is_reading() and not self.closed:
            self.transport.resume_reading()

    def close(self, abort: bool = False) -> None:
        """Both sides closed. An unauthenticated client is aborted (its unread answers dropped: it
        may never read them); an authenticated one gets the rest of its answers, within
        CLOSE_GRACE_S."""
        if self.closed:
            return
        self.closed = True
        self.front.forget(self)
        if self.deadline is not None:
            self.deadline.cancel()
        if self.stalled is not None:
            self.stalled.cancel()
        if self.task is not None and not self.task.done():
            self.task.cancel()
        if self.upstream is not None:
            self.upstream.abort()
        if self.transport is not None:
            if abort or not self.authenticated:
                self.transport.abort()
            else:
                self.transport.close()
                asyncio.get_running_loop().call_later(CLOSE_GRACE_S, self.transport.abort)


class TcpFront:
    """Accepts on the loopback TCP port, admits and forwards to the gRPC server at `upstream`."""

    def __init__(self, token: str, upstream: Path, max_authenticated: int) -> None:
        self.token = token.encode()
        self.upstream = upstream
        self.max_authenticated = max_authenticated
        self.authenticated: set[_Client] = set()
        self.waiting: dict[_Client, None] = {}  # unauthenticated, oldest first
        self.by_uid: dict[int | None, dict[_Client, None]] = {}
        self._diag = _diag_socket()
        self._own_uid = os.getuid()
        self._server: asyncio.Server | None = None
        self._warned: dict[str, float] = {}

    async def start(self, host: str, port: int) -> int:
        """Listen on `host:port` (loopback, checked by the caller); the port bound."""
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            lambda: _Client(self), host=host, port=port, backlog=256
        )
        bound: int = self._server.sockets[0].getsockname()[1]
        return bound

    def stop_listening(self) -> None:
        if self._server is not None:
            self._server.close()

    def close(self) -> None:
        self.stop_listening()
        for conn in [*self.authenticated, *self.waiting]:
            conn.close(abort=True)
        if self._diag is not None:
            self._diag.close()

    # --- admission ---
    def admit(self, conn: _Client) -> None:
        assert conn.transport is not None
        loop = asyncio.get_running_loop()
        sock = conn.transport.get_extra_info("socket")
        if self._diag is not None and sock is not None:
            try:
                ours, peer = sock.getsockname(), sock.getpeername()
            except OSError:  # reset already: counted under no uid until its loss is seen
                pass
            else:
                conn.uid = peer_uid(self._diag, sock.family, ours[:2], peer[:2])
        mine = self.by_uid.get(conn.uid, {})
        if len(mine) >= UNAUTHENTICATED_PER_UID:
            if conn.uid not in (None, self._own_uid):  # another user's: refused at once
                self._evict(conn, "per uid", UNAUTHENTICATED_PER_UID, conn.uid)
                return
            self._evict(next(iter(mine)), "per uid", UNAUTHENTICATED_PER_UID, conn.uid)
        elif len(self.waiting) >= UNAUTHENTICATED_MAX:
            self._evict(next(iter(self.waiting)), "in all", UNAUTHENTICATED_MAX, conn.uid)
        self.by_uid.setdefault(conn.uid, {})[conn] = None
        self.waiting[conn] = None
        conn.deadline = loop.call_later(AUTH_DEADLINE_S, conn.expire)

    async def connect(self, conn: _Client) -> None:
        loop = asyncio.get_running_loop()
        try:  # _Upstream.connection_made hands the connection over
            await loop.create_unix_connection(lambda: _Upstream(conn), str(self.upstream))
        except OSError as exc:
            self._warn(
                "upstream", "TCP front: the gRPC side refused a connection", {"error": str(exc)}
            )
            conn.close()

    def authenticate(self, conn: _Client) -> None:
        self._unwait(conn)
        if conn.deadline is not None:
            conn.deadline.cancel()
        if len(self.authenticated) >= self.max_authenticated:
            self._warn(
                "authenticated",
                "authenticated TCP connections are at limits.max_tcp_connections: a new one "
                "was closed",
                {"limit": self.max_authenticated},
            )
            conn.close(abort=True)
            return
        conn.authenticated = True
        self.authenticated.add(conn)

    def forget(self, conn: _Client) -> None:
        self._unwait(conn)
        self.authenticated.discard(conn)

    def _unwait(self, conn: _Client) -> None:
        if conn in self.waiting:
            del self.waiting[conn]
            mine = self.by_uid[conn.uid]
            del mine[conn]
            if not mine:
                del self.by_uid[conn.uid]

    def _evict(self, victim: _Client, scope: str, bound: int, uid: int | None) -> None:
        self._warn(
            "unauthenticated",
            f"unauthenticated TCP connections are at their bound ({bound} {scope}): a new one "
            "of another user is refused, else the oldest is closed (each ends "
            f"{AUTH_DEADLINE_S:g} s after it connected anyway; authenticated ones and the Unix "
            "socket are not affected)",
            {"peer_uid": uid, "limit": bound},
        )
        victim.close(abort=True)

    def _warn(self, kind: str, msg: str, extra: dict[str, object]) -> None:
        now = asyncio.get_running_loop().time()
        if now - self._warned.get(kind, -_WARN_EVERY_S) >= _WARN_EVERY_S:
            self._warned[kind] = now
            log.warning(msg, extra=extra)
