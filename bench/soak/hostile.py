"""The soak's hostile client (docs/reliability.md, "The hostile run"): every input of issue 11, and
issue 37's transcripts (bench/soak/imports.py) through ImportTranscript, replay and eval, at
their full size, one after another, against the live daemon the agents are using.

`python -m bench.soak.hostile --address unix:///d.sock --tcp-port N --token-file F --dir DIR
--log FILE --out result.json`. Each attack records what the daemon answered and whether that is
what docs/reliability.md promises (`ok`); the orchestrator meanwhile pings the daemon and samples
its RSS. Every session the attacks open is closed again, so the agents' state checks are not
disturbed. Attacks that need another uid (setpriv) or a lowered descriptor limit run only as root.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import functools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
from postcompact_client import Client, PostcompactError, RetryPolicy
from postcompact_client.types import Subject
from postcompact_client.v1 import postcompact_pb2 as pb
from postcompact_client.v1 import postcompact_pb2_grpc as pb_grpc

from bench.soak import imports

MIB = 1 << 20
REASON = "postcompact-error-reason"


def _state(pid: int) -> str:
    """The process state letter of `pid` ("T": stopped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "?"


class Hostile:
    def __init__(self, args: argparse.Namespace) -> None:
        self.address: str = args.address
        self.tcp_port: int = args.tcp_port
        self.token = Path(args.token_file).read_text().strip() if args.token_file else ""
        self.dir = Path(args.dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.log = Path(args.log)
        # No retries: every answer is the daemon's own, as an attacker sees it.
        self.client = Client(self.address, auto_start=False, timeout=120, retry=RetryPolicy.none())
        self.results: list[dict[str, Any]] = []

    def record(self, attack: str, ok: bool, outcome: str, **detail: Any) -> None:
        self.results.append({"attack": attack, "ok": ok, "outcome": outcome, **detail})
        print(f"hostile: {attack}: {'ok' if ok else 'NOT OK'}: {outcome}", flush=True)

    def run(self, name: str, fn: Callable[[], None]) -> None:
        t0, before = time.monotonic(), len(self.results)
        try:
            fn()
        except Exception as exc:  # an attack's own failure is a result, not a crash
            self.record(name, False, f"the attack failed: {type(exc).__name__}: {exc}"[:300])
        if len(self.results) > before:
            # CLOCK_MONOTONIC is the machine's: the orchestrator matches its pings to these.
            self.results[-1].update(
                seconds=round(time.monotonic() - t0, 1), t0=t0, t1=time.monotonic()
            )

    def session(self, tag: str, **kw: Any) -> Any:
        return self.client.open_session(str(self.dir), session_id=f"hostile-{tag}", **kw)

    def refused(self, call: Callable[[], Any]) -> PostcompactError | None:
        try:
            call()
        except PostcompactError as exc:
            return exc
        return None

    # --- 1. ranged reads, the size cap, max_read_tokens ------------------------------------

    def big_reads(self) -> None:
        big = self.dir / "big400.txt"
        with open(big, "wb") as f:
            for _ in range(40):
                f.write((b"y" * 99 + b"\n") * 100_000)
        self.big = big
        nl = self.dir / "newlines20.txt"
        nl.write_bytes(b"\n" * 20_000_000)
        s = self.session("reads")
        e1 = self.refused(lambda: s.read_file(str(big), offset=1, limit=10**12))
        e2 = self.refused(lambda: s.read_file(str(nl), offset=1, limit=10**12))
        e3 = self.refused(
            lambda: self.client.open_session(
                str(self.dir), session_id="hostile-cap", policy={"max_file_size_bytes": 10**12}
            )
        )
        want = (("RESPONSE_TOO_LARGE", e1), ("RESPONSE_TOO_LARGE", e2), ("INVALID_POLICY", e3))
        ok = all(e is not None and e.reason == r for r, e in want)
        s.close()
        self.record(
            "400 MB ranged read, 20 MB of newlines, size cap 10**12",
            ok,
            ", ".join(e.reason if e else "answered" for e in (e1, e2, e3)),
        )

    # --- 2. stalls -------------------------------------------------------------------------

    def big_truncate(self) -> None:
        text = "word " * (6 * MIB)  # 30 MB
        t0 = time.monotonic()
        r = self.client.truncate_tokens(text, 1000, counter="exact")
        self.record(
            "TruncateTokens of 30 MB, exact counter",
            r.truncated and r.tokens <= 1000,
            f"truncated to {r.tokens} tokens in {time.monotonic() - t0:.1f}s (off the loop)",
        )

    def many_roots(self) -> None:
        e1 = self.refused(lambda: self.session("roots", roots=[f"r{i}" for i in range(100_000)]))
        e2 = self.refused(lambda: self.client.open_session("/" + "c" * MIB))
        e3 = self.refused(lambda: self.session("roots2", roots=[f"r{i}" for i in range(284_000)]))
        ok = (
            e1 is not None
            and e1.reason == "TOO_MANY_ROOTS"
            and e2 is not None
            and e2.reason == "PATH_TOO_LONG"
            and e3 is not None
            and e3.reason in ("TOO_MANY_ROOTS", "MESSAGE_TOO_LARGE")
        )
        self.record(
            "100,000 roots, a 1 MB cwd, 284,000 roots",
            ok,
            ", ".join(e.reason if e else "accepted" for e in (e1, e2, e3)),
        )

    # --- 3. stopped readers ----------------------------------------------------------------

    def stopped_readers(self) -> None:
        """Eight clients that send a ReadFile of a 30 MB answer and stop (SIGSTOP) themselves
        before reading it; resumed after 20 s."""
        s = self.session("stalled")
        reader = textwrap.dedent(
            """
            import os, signal, sys, time, grpc
            from postcompact_client.v1 import postcompact_pb2 as pb, postcompact_pb2_grpc as g
            address, session, agent, path = sys.argv[1:5]
            opts = [("grpc.max_receive_message_length", 1 << 30)]
            ch = grpc.insecure_channel(address, options=opts)
            stub = g.PostcompactServiceStub(ch)
            stub.StartAgent(pb.StartAgentRequest(session_id=session, agent_id=agent), timeout=60)
            fut = stub.ReadFile.future(pb.ReadFileRequest(session_id=session, agent_id=agent,
                path=path, offset=3_800_000, limit=150_000), timeout=600)
            time.sleep(0.02)
            os.kill(os.getpid(), signal.SIGSTOP)
            try:
                r = fut.result()
                print("answered", flush=True)
            except grpc.RpcError as e:
                md = dict(e.trailing_metadata() or ())
                print("failed", e.code().name, md.get("postcompact-error-reason", ""), flush=True)
            """
        )
        procs = []
        for i in range(8):  # one at a time: eight interpreters starting at once load the CPU
            p = subprocess.Popen(
                [sys.executable, "-c", reader, self.address, s.session_id, f"r{i}", str(self.big)],
                stdout=subprocess.PIPE,
                text=True,
            )
            procs.append(p)
            deadline = time.monotonic() + 60
            while _state(p.pid) not in ("T", "t") and time.monotonic() < deadline:
                time.sleep(0.05)
        time.sleep(20)
        held = self.client.stats().answer_bytes_in_flight
        for p in procs:
            p.send_signal(signal.SIGCONT)
        outcomes = collections.Counter(p.communicate(timeout=120)[0].strip() for p in procs)
        s.close()
        self.record(
            "8 stopped clients with 30 MB ReadFile answers",
            held <= 48 * MIB + 32 * MIB,
            f"{held / MIB:.0f} MiB of answers held while stopped; {dict(outcomes)}",
        )

    # --- 4. content ceiling ----------------------------------------------------------------

    def content_push(self) -> None:
        """768 MiB of recorded content: 4 sessions x 8 agents x 2 RecordRead of 12 MiB."""
        accepted = refused = 0
        reasons: collections.Counter[str] = collections.Counter()
        sessions = [self.session(f"push{k}") for k in range(4)]
        for k, s in enumerate(sessions):
            for j in range(8):
                a = s.start_agent(f"a{j}")
                for n in range(2):
                    body = bytes([65 + (j + n + k) % 26]) * (12 * MIB)
                    try:
                        a.record_read(str(self.dir / f"push-{k}-{j}-{n}.txt"), body)
                        accepted += 1
                    except PostcompactError as exc:
                        refused += 1
                        reasons[exc.reason] += 1
        held = self.client.stats().content_bytes
        for s in sessions:
            s.close()
        self.record(
            "768 MiB of RecordRead content (4 sessions x 8 agents x 2 x 12 MiB)",
            held <= 256 * MIB and set(reasons) <= {"CONTENT_LIMIT"},
            f"{accepted} accepted, {refused} refused {dict(reasons)}; {held / MIB:.0f} MiB held",
        )

    # --- 5. hooks ----------------------------------------------------------------------------

    def hooks(self) -> None:
        sessions = [self.session(f"hook{i}") for i in range(300)]
        with ThreadPoolExecutor(64) as pool:
            outs = list(pool.map(lambda s: s.preview_compact(), sessions))
        hook = collections.Counter(
            str(d.outcome) for r in outs for d in r.decisions if d.subject == Subject.HOOK
        )
        for s in sessions:
            s.close()
        self.record(
            "300 concurrent PreviewCompact with a session-start hook",
            sum(hook.values()) == 300,
            f"hook decisions {dict(hook)} (at most 32 processes at once)",
        )

    # --- 6. answers that cannot be sent ----------------------------------------------------

    def big_answers(self) -> None:
        s = self.session("answer")
        small = self.dir / "small.txt"
        small.write_text("small\n")
        s.record_read(str(small), "small\n")
        e1 = self.refused(lambda: s.compact(additional_context=["A" * (17 << 20)]))
        info = next(x for x in self.client.list_sessions() if x.session_id == s.session_id)
        s.close()
        roots = [f"/{i:05d}" + "r" * 4000 for i in range(8200)]  # 32 MiB of roots
        e2 = self.refused(
            lambda: self.client.open_session(str(self.dir), session_id="hostile-open", roots=roots)
        )
        listed = {x.session_id for x in self.client.list_sessions()}
        ok = (
            e1 is not None
            and e1.reason == "RESPONSE_TOO_LARGE"
            and info.compactions == 0
            and e2 is not None
            and e2.reason in ("TOO_MANY_ROOTS", "MESSAGE_TOO_LARGE")
            and "hostile-open" not in listed
        )
        self.record(
            "Compact with 17 MiB of context; OpenSession with 32 MiB of roots",
            ok,
            f"{e1.reason if e1 else 'applied'} (compactions {info.compactions}); "
            f"{e2.reason if e2 else 'created'}",
        )

    # --- 7. listings -----------------------------------------------------------------------

    def listings(self) -> None:
        """540 sessions x 255 agents with 256-byte ids: GetStats, ListSessions and `status`."""
        asyncio.run(self._many_agents(540, 255))
        t0 = time.monotonic()
        stats = self.client.stats()
        sessions = self.client.list_sessions()
        took = time.monotonic() - t0
        status = subprocess.run(
            [sys.executable, "-m", "postcompact", "status", "--socket", self.address[7:]],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        asyncio.run(self._close_many(540))
        self.record(
            "540 sessions x 255 agents with 256-byte ids",
            stats.agents >= 540 * 256 and len(sessions) >= 540 and status.returncode == 0,
            f"GetStats {stats.agents} agents, ListSessions {len(sessions)} sessions in "
            f"{took:.1f}s; status exit {status.returncode} {status.stderr.strip()[:200]}",
        )

    async def _many_agents(self, n_sessions: int, n_agents: int) -> None:
        async with grpc.aio.insecure_channel(self.address) as ch:
            stub = pb_grpc.PostcompactServiceStub(ch)
            gate = asyncio.Semaphore(32)

            async def agent(sid: str, j: int) -> None:
                async with gate:
                    aid = f"{j:03d}-" + "a" * 252
                    await stub.StartAgent(
                        pb.StartAgentRequest(session_id=sid, agent_id=aid), timeout=600
                    )

            for i in range(n_sessions):
                sid = f"hostile-list-{i:03d}-" + "s" * 238
                await stub.OpenSession(pb.OpenSessionRequest(cwd=str(self.dir), session_id=sid))
                await asyncio.gather(*(agent(sid, j) for j in range(n_agents)))

    async def _close_many(self, n_sessions: int) -> None:
        async with grpc.aio.insecure_channel(self.address) as ch:
            stub = pb_grpc.PostcompactServiceStub(ch)
            for i in range(n_sessions):
                sid = f"hostile-list-{i:03d}-" + "s" * 238
                await stub.CloseSession(pb.CloseSessionRequest(session_id=sid), timeout=600)

    # --- 8, 9. connections and the token ---------------------------------------------------

    def idle_connections(self) -> None:
        held: list[socket.socket] = []
        for _ in range(1100):
            u = socket.socket(socket.AF_UNIX)
            u.connect(self.address[len("unix://") :])
            held.append(u)
        other = None
        if self.tcp_port and os.geteuid() == 0 and shutil.which("setpriv"):
            holder = (
                "import socket,sys,time\n"
                "a=('127.0.0.1',int(sys.argv[1]))\n"
                "h=[socket.create_connection(a) for _ in range(1050)]\n"
                "print('held',flush=True);time.sleep(600)\n"
            )
            other = subprocess.Popen(
                ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                 sys.executable, "-c", holder, str(self.tcp_port)],
                stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            assert other.stdout is not None
            other.stdout.readline()
        t0 = time.monotonic()
        fresh = Client(self.address, auto_start=False, timeout=10, retry=RetryPolicy.none())
        try:
            answered = fresh.server_info().pid > 0
        except PostcompactError:
            answered = False
        took = time.monotonic() - t0
        fresh.close()
        for u in held:
            u.close()
        if other is not None:
            other.kill()
            other.communicate()
        self.record(
            "1,100 idle Unix connections"
            + (" and 1,050 idle TCP connections of another uid" if other else ""),
            answered and took <= 10,
            f"a fresh owner connection answered in {took:.2f}s",
        )

    def unauthenticated(self) -> None:
        if not self.tcp_port:
            return
        codes = []
        with grpc.insecure_channel(f"127.0.0.1:{self.tcp_port}") as ch:
            for method in (
                "/postcompact.v1.PostcompactService/GetServerInfo",
                "/postcompact.v1.PostcompactService/NoSuchMethod",
                "/no.Such/Method",
            ):
                fn: Any = ch.unary_unary(method)
                try:
                    fn(b"", timeout=10)
                    codes.append("OK")
                except grpc.RpcError as exc:
                    e: Any = exc
                    reason = dict(e.trailing_metadata() or ()).get(REASON, "")
                    codes.append(f"{e.code().name} {reason}")
        self.record(
            "methods over TCP without the token",
            set(codes) == {"UNAUTHENTICATED UNAUTHENTICATED"},
            ", ".join(codes),
        )

    # --- 10. the log -----------------------------------------------------------------------

    def log_growth(self) -> None:
        before = self._log_bytes()
        roots = [f"{i:03d}" + "r" * 4000 for i in range(256)]  # 1 MB of roots
        s = self.session("log", roots=roots)
        for i in range(200):
            self.refused(lambda: s.read_file(f"/etc/outside-{i}"))  # noqa: B023 (called at once)
        for _ in range(5):
            self.refused(lambda: s.read_file("/" + "p" * 10_000_000))
        s.close()
        grown = self._log_bytes() - before
        self.record(
            "1 MB of roots and 200 failing ReadFiles; five ReadFiles with a 10 MB path",
            grown < 4 * MIB,
            f"the log grew {grown / 1024:.0f} KiB",
        )

    def _log_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.log.parent.glob(self.log.name + "*"))

    # --- issue 37: transcripts ----------------------------------------------------------------

    def transcript(self, inp: imports.Input) -> None:
        """One of issue 37's hostile transcripts, imported at full size."""
        data = inp.make()
        got = imports.run_import(self.client, inp, data, str(self.dir), self.log)
        self.record(
            f"ImportTranscript: {inp.what}",
            got.ok,
            f"{got.answer} in {got.seconds:.1f}s",
        )

    def replay_disk(self) -> None:
        """`replay` of the testers' 2 KB transcript: 4 x "(1.0GB)" and `totalLines` 10**9 wrote
        4 GB and 5 GiB; the budget is 512 MiB a replay, the tree removed after."""
        src = self.dir / "amplifying.jsonl"
        src.write_bytes(imports.amplifying())
        tmp = self.dir / "replay-tmp"
        tmp.mkdir(exist_ok=True)
        proc = subprocess.Popen(
            [sys.executable, "-m", "postcompact", "replay", "--json", str(src)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, "TMPDIR": str(tmp)},
        )
        peak = 0
        while proc.poll() is None:
            peak = max(peak, _allocated(tmp))
            time.sleep(0.01)
        assert proc.stderr is not None
        err = proc.stderr.read().decode(errors="replace")
        left = list(tmp.iterdir())
        self.record(
            "replay of the testers' 2 KB transcript (4 x (1.0GB), totalLines 10**9)",
            proc.returncode == 0 and peak <= 512 * MIB and not left and "Traceback" not in err,
            f"exit {proc.returncode}, at most {peak / MIB:.1f} MiB on disk, temporary tree "
            f"{'LEFT' if left else 'removed'}",
        )

    def replay_refusals(self) -> None:
        """A "(1e400GB)" claim through replay and eval, and an eval no compaction of which can
        be scored (257 agents): each one named refusal, exit 2 (before: tracebacks, a
        TypeError)."""
        bad = self.dir / "claim.jsonl"
        bad.write_bytes(imports.bad_claim())
        unscored = self.dir / "unscored.jsonl"
        unscored.write_bytes(imports.unscored())
        outs = []
        for argv in (
            ["replay", str(bad)],
            ["eval", "--quiet", str(bad)],
            ["eval", "--quiet", str(unscored)],
        ):
            out = subprocess.run(
                [sys.executable, "-m", "postcompact", *argv],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            err = out.stderr.strip().replace(f"{self.dir}/", "")
            outs.append((out.returncode, "Traceback" in err, err.splitlines()[-1:]))
        self.record(
            "replay and eval of a (1e400GB) claim; eval of 257 agents (nothing to score)",
            all(rc == 2 and not tb and last for rc, tb, last in outs),
            "; ".join(
                f"exit {rc}{' (a traceback)' if tb else ''}: {' '.join(last)[:100]}"
                for rc, tb, last in outs
            ),
        )

    # --- 15. overload ----------------------------------------------------------------------

    def flood(self) -> None:
        counts = asyncio.run(self._flood(1500))
        bare = {k: v for k, v in counts.items() if k != "OK" and not k.partition(" ")[2]}
        self.record(
            "1,500 calls in flight at once",
            not bare,
            ", ".join(f"{k.strip()} {v}" for k, v in counts.most_common()),
        )

    async def _flood(self, n: int) -> collections.Counter[str]:
        channels = [grpc.aio.insecure_channel(self.address) for _ in range(4)]
        stubs = [pb_grpc.PostcompactServiceStub(c) for c in channels]
        opened = await stubs[0].OpenSession(
            pb.OpenSessionRequest(cwd=str(self.dir), session_id="hostile-flood")
        )
        sid = opened.session_id

        path = str(self.big)

        async def one(i: int) -> str:
            stub = stubs[i % 4]
            try:
                if i % 2:
                    req = pb.ReadFileRequest(session_id=sid, path=path, offset=1 + i, limit=10)
                    await stub.ReadFile(req, timeout=300)
                else:
                    await stub.TruncateTokens(
                        pb.TruncateTokensRequest(text=b"word " * 20_000, max_tokens=10), timeout=300
                    )
                return "OK"
            except grpc.aio.AioRpcError as exc:
                return f"{exc.code().name} {dict(exc.trailing_metadata() or ()).get(REASON, '')}"

        try:
            return collections.Counter(await asyncio.gather(*(one(i) for i in range(n))))
        finally:
            await stubs[0].CloseSession(pb.CloseSessionRequest(session_id=sid))
            for c in channels:
                await c.close()


def _allocated(root: Path) -> int:
    """The bytes the files under `root` take on disk (a file gone meanwhile: none)."""
    total = 0
    for path in root.rglob("*"):
        with contextlib.suppress(OSError):
            total += path.lstat().st_blocks * 512
    return total


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--address", required=True)
    ap.add_argument("--tcp-port", type=int, default=0)
    ap.add_argument("--token-file", default="")
    ap.add_argument("--dir", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    h = Hostile(args)
    attacks: list[tuple[str, Callable[[], None]]] = [
        ("reads", h.big_reads),
        ("truncate", h.big_truncate),
        ("roots", h.many_roots),
        ("stopped", h.stopped_readers),
        ("content", h.content_push),
        ("hooks", h.hooks),
        ("answers", h.big_answers),
        ("listings", h.listings),
        ("token", h.unauthenticated),
        ("idle", h.idle_connections),
        ("log", h.log_growth),
        ("flood", h.flood),
        *((f"import-{inp.name}", functools.partial(h.transcript, inp)) for inp in imports.INPUTS),
        ("replay-disk", h.replay_disk),
        ("replay-refusals", h.replay_refusals),
    ]
    only = set(filter(None, os.environ.get("SOAK_HOSTILE_ONLY", "").split(",")))
    for name, fn in attacks:
        if not only or name in only or name.split("-")[0] in only:
            h.run(name, fn)
    Path(args.out).write_text(json.dumps(h.results, indent=1))
    shutil.rmtree(h.dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
