"""The hostile transcripts of issue 37 (part 1) at full size (docs/reliability.md,
"Transcripts"): the inputs, what the daemon must answer to each, and a by-hand measurement of the
worst ping while each is imported.

The soak's hostile run (bench/soak/hostile.py) imports them through the live daemon beside the
agents; `--beside ADDRESS` imports while the soak kills the daemon (`beside`).

`python -m bench.soak.imports [--only NAME ...] [--burn N]` starts a daemon of its own on a fresh
socket and state directory, pings it (GetServerInfo every 50 ms, a process and a channel of its
own) and imports each input in turn, printing the answer, the time and the worst ping during it:
the figures docs/reliability.md gives (`--burn 2`: two CPU-bound processes beside it).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from postcompact_client import Client, PostcompactError, RetryPolicy

CWD = "/orig/app"


def _line(record: dict[str, Any]) -> bytes:
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"


def _boundary(uid: str, **meta: Any) -> dict[str, Any]:
    return {
        "type": "system",
        "subtype": "compact_boundary",
        "uuid": uid,
        "timestamp": "2026-03-01T10:00:00.000Z",
        "sessionId": "s-hostile",
        "cwd": CWD,
        "content": "Conversation compacted",
        "compactMetadata": {"trigger": "auto", "preTokens": 170000, **meta},
    }


def uuids(times: int = 1_000_000) -> bytes:
    """A compact_boundary whose preservedMessages lists one uuid `times` times (7 MB at 10**6),
    then an attachment record with that uuid."""
    kept = {
        "type": "attachment",
        "uuid": "kept",
        "timestamp": "2026-03-01T10:00:01.000Z",
        "sessionId": "s-hostile",
        "cwd": CWD,
        "attachment": {"type": "edited_text_file", "filename": f"{CWD}/a.ts", "snippet": ""},
    }
    head = _line(_boundary("b0", preservedMessages={"allUuids": ["kept"]}))
    # Built as bytes: json.dumps of a million-item list would take seconds here.
    listed = b'["kept"' + b',"kept"' * (times - 1) + b"]"
    return head.replace(b'["kept"]', listed) + _line(kept)


def cycle(boundaries: int = 3_000) -> bytes:
    """Two records whose parentUuid point at each other, then `boundaries` compact_boundary
    records whose preservedSegment walks from A towards a head it never reaches (0.9 MB)."""
    records = [
        {"type": "user", "uuid": "A", "parentUuid": "B", "sessionId": "s-hostile", "cwd": CWD},
        {"type": "user", "uuid": "B", "parentUuid": "A", "sessionId": "s-hostile", "cwd": CWD},
    ]
    seg = {"headUuid": "H", "tailUuid": "A", "anchorUuid": "A"}
    out = b"".join(_line(r) for r in records)
    return out + b"".join(
        _line(_boundary(f"b{i}", preservedSegment=seg)) for i in range(boundaries)
    )


def tiny(records: int = 10**7) -> bytes:
    """`records` records of 3 bytes each (30 MB at 10**7)."""
    return b"{}\n" * records


def agents(count: int = 200_000) -> bytes:
    """`count` records, each of its own sidechain agent (33 MB at 200,000)."""
    return b"".join(
        _line(
            {
                "type": "attachment",
                "uuid": f"u{i}",
                "isSidechain": True,
                "agentId": f"a{i}",
                "cwd": CWD,
                "attachment": {"type": "edited_text_file", "filename": f"{CWD}/a.ts"},
            }
        )
        for i in range(count)
    )


def bad_value() -> bytes:
    """A Read whose tool_result text is the number 5 (the testers' 483 bytes)."""
    use = {
        "type": "assistant",
        "uuid": "u1",
        "cwd": CWD,
        "message": {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/a"}}
            ],
        },
    }
    result = {
        "type": "user",
        "uuid": "u2",
        "cwd": CWD,
        "message": {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": [{"type": "text", "text": 5}],
                }
            ],
        },
    }
    return _line(use) + _line(result)


def _read_pair(uid: str, path: str, tur: Any, *, content: Any = None, error: bool = False) -> bytes:
    use = {
        "type": "assistant",
        "uuid": f"{uid}-use",
        "cwd": CWD,
        "message": {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": uid, "name": "Read", "input": {"file_path": path}}
            ],
        },
    }
    block = {
        "type": "tool_result",
        "tool_use_id": uid,
        "content": content or "ok",
        "is_error": error,
    }
    result = {
        "type": "user",
        "uuid": f"{uid}-result",
        "cwd": CWD,
        "message": {"role": "user", "content": [block]},
        "toolUseResult": tur,
    }
    return _line(use) + _line(result)


def _claim(uid: str, path: str, size: str) -> bytes:
    text = f"File content ({size}) exceeds maximum allowed size (256KB)."
    return _read_pair(uid, path, text, content=text, error=True)


def amplifying() -> bytes:
    """The testers' 2 KB transcript for `replay`: a ranged Read claiming `totalLines` 10**9 and
    four "(1.0GB)" size claims, then a compaction (replay would write 5 GiB and 4 GB)."""
    line = "y" * 40
    ranged = {
        "type": "text",
        "file": {
            "filePath": f"{CWD}/long.txt",
            "content": f"{line}\n{line}",
            "numLines": 2,
            "startLine": 1,
            "totalLines": 10**9,
        },
    }
    out = _read_pair("r0", f"{CWD}/long.txt", ranged)
    for i in range(4):
        out += _claim(f"r{i + 1}", f"{CWD}/big{i}.bin", "1.0GB")
    return out + _line(_boundary("b0"))


def bad_claim() -> bytes:
    """A size claim no number spells: "(1e400GB)" (replay and eval: a traceback before)."""
    return _claim("r1", f"{CWD}/big.bin", "1e400GB") + _line(_boundary("b0"))


def unscored() -> bytes:
    """257 sidechain agents, a compaction and a read: `eval` can score no compaction of it
    (replay refuses TOO_MANY_AGENTS); it crashed with a TypeError."""
    file = {"filePath": f"{CWD}/a.ts", "content": "a", "numLines": 1, "startLine": 1}
    read = _read_pair("t9", f"{CWD}/a.ts", {"type": "text", "file": {**file, "totalLines": 1}})
    return agents(257) + _line(_boundary("b0")) + read


@dataclass(frozen=True)
class Input:
    name: str
    what: str  # how docs/reliability.md names it
    make: Callable[[], bytes]
    want: str  # the answer docs/reliability.md promises
    deadline_s: float | None = None


INPUTS = [
    Input(
        "uuids",
        "a boundary listing one uuid 1,000,000 times (7 MB), then that record",
        uuids,
        "OK, at most 2 events, 1 preserved message",
    ),
    Input(
        "cycle",
        "3,000 boundaries over a parentUuid cycle (0.9 MB)",
        cycle,
        "RESOURCE_EXHAUSTED TRANSCRIPT_TOO_LARGE max_transcript_boundaries, line 1003",
    ),
    Input(
        "cycle-5s",
        "the same with a 5 s deadline",
        cycle,
        "TRANSCRIPT_TOO_LARGE, or DEADLINE_EXCEEDED and the import stopped",
        deadline_s=5.0,
    ),
    Input(
        "tiny",
        "10**7 tiny records (30 MB)",
        tiny,
        "RESOURCE_EXHAUSTED TRANSCRIPT_TOO_LARGE max_transcript_records, line 0",
    ),
    Input(
        "agents",
        "200,000 sidechain agents (33 MB)",
        agents,
        "RESOURCE_EXHAUSTED TOO_MANY_AGENTS max_agents_per_session",
    ),
    Input(
        "bad-value",
        "a tool_result text that is the number 5",
        bad_value,
        "INVALID_ARGUMENT BAD_TRANSCRIPT, line 2, field message.content[0].content[0].text",
    ),
]


@dataclass
class Outcome:
    ok: bool  # as docs/reliability.md promises
    answer: str
    seconds: float


def run_import(client: Client, inp: Input, data: bytes, cwd: str, log: Path | None) -> Outcome:
    """Import `data` and judge the answer against `inp.want`. `log`: the daemon's log, in which
    a stopped import says so."""
    sid = f"hostile-import-{inp.name}-{os.getpid()}-{time.monotonic_ns()}"
    t0 = time.monotonic()
    err: PostcompactError | None = None
    resp: Any = None
    logged = log.stat().st_size if log is not None and log.exists() else 0
    try:
        if inp.deadline_s is None:
            resp = client.import_transcript(data, cwd=cwd, session_id=sid)
        else:
            req = _request(data, cwd, sid)
            resp = client.stub.ImportTranscript(req, timeout=inp.deadline_s)
    except PostcompactError as exc:
        err = exc
    except grpc.RpcError as exc:
        err = PostcompactError.from_rpc_error(exc)
    took = time.monotonic() - t0
    if resp is not None:
        with contextlib.suppress(PostcompactError):
            client.session(resp.session_id).close()
        answer = (
            f"OK: {resp.records} records, {resp.events} events, {len(resp.boundaries)} boundaries"
        )
        if inp.name == "uuids":
            kept = resp.boundaries[0].preserved_messages if resp.boundaries else -1
            return Outcome(resp.events <= 2 and kept == 1, answer, took)
        return Outcome(False, answer, took)
    assert err is not None
    md = err.metadata
    answer = f"{err.code.name} {err.reason}"
    for key in ("limit", "line", "field"):
        if md.get(key):
            answer += f" {key}={md[key]}"
    code, reason = err.code.name, err.reason
    if inp.name == "cycle":
        ok = (code, reason, md.get("limit"), md.get("line")) == (
            "RESOURCE_EXHAUSTED",
            "TRANSCRIPT_TOO_LARGE",
            "max_transcript_boundaries",
            "1003",
        )
    elif inp.name == "cycle-5s":
        ok = reason == "TRANSCRIPT_TOO_LARGE" or (
            code == "DEADLINE_EXCEEDED" and _stopped(log, logged)
        )
    elif inp.name == "tiny":
        ok = (code, reason, md.get("limit"), md.get("line", "0")) == (
            "RESOURCE_EXHAUSTED",
            "TRANSCRIPT_TOO_LARGE",
            "max_transcript_records",
            "0",
        )
    elif inp.name == "agents":
        ok = (code, reason, md.get("limit")) == (
            "RESOURCE_EXHAUSTED",
            "TOO_MANY_AGENTS",
            "max_agents_per_session",
        )
    elif inp.name == "bad-value":
        ok = (code, reason, md.get("line"), md.get("field")) == (
            "INVALID_ARGUMENT",
            "BAD_TRANSCRIPT",
            "2",
            "message.content[0].content[0].text",
        )
    else:
        ok = False
    return Outcome(ok, answer, took)


def _request(data: bytes, cwd: str, sid: str) -> Any:
    from postcompact_client.v1 import postcompact_pb2 as pb

    return pb.ImportTranscriptRequest(transcript=data, cwd=cwd, session_id=sid)


def _stopped(log: Path | None, offset: int, wait_s: float = 10.0) -> bool:
    """Whether the daemon's log says, past `offset`, that an import stopped (within `wait_s`)."""
    if log is None:
        return False
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        with open(log, "rb") as f:
            f.seek(offset)
            if b"import stopped" in f.read():
                return True
        time.sleep(0.05)
    return False


# --- beside the kills -----------------------------------------------------------------------------


def small() -> bytes:
    """A transcript that imports: two reads, a compaction, a read after it."""
    out = b""
    for i, name in enumerate(("a.ts", "b.ts", "a.ts")):
        file = {"filePath": f"{CWD}/{name}", "content": f"{name}\n", "numLines": 1, "startLine": 1}
        tur = {"type": "text", "file": {**file, "totalLines": 1}}
        out += _read_pair(f"t{i}", f"{CWD}/{name}", tur)
        if i == 1:
            out += _line(_boundary("b0"))
    return out


def beside(address: str, seconds: float, cwd: str, out: Path) -> None:
    """Import while the soak kills the daemon (phase 2): in turn a transcript that imports, the
    1,000,000-uuid one (which imports too) and the parentUuid cycle (refused), each under a
    session id of its own, until `seconds` pass. What was acknowledged must be there after the
    restarts, what was refused must not; `out` gets the ids (the orchestrator checks them)."""
    client = Client(address, auto_start=False, timeout=120)
    inputs = [("small", small(), True), ("uuids", uuids(), True), ("cycle", cycle(), False)]
    acknowledged: list[str] = []
    refused: list[str] = []
    unexpected: list[str] = []
    failed: dict[str, int] = {}
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        name, data, imports_ok = inputs[n % len(inputs)]
        sid = f"soak-import-{n:04d}-{name}"
        n += 1
        try:
            client.import_transcript(data, cwd=cwd, session_id=sid)
        except PostcompactError as exc:
            if not imports_ok and exc.reason == "TRANSCRIPT_TOO_LARGE":
                refused.append(sid)
            elif exc.transport or exc.code.name in ("UNAVAILABLE", "CANCELLED"):
                key = f"{exc.code.name} {exc.reason}".strip()
                failed[key] = failed.get(key, 0) + 1  # caught by a kill: not acknowledged
            else:
                unexpected.append(f"{sid}: {exc.code.name} {exc.reason}")
        else:
            (acknowledged if imports_ok else unexpected).append(sid)
        time.sleep(1.0)
    client.close()
    out.write_text(
        json.dumps(
            {
                "acknowledged": acknowledged,
                "refused": refused,
                "failed": failed,
                "unexpected": unexpected,
            }
        )
    )


# --- by hand: a daemon of its own, a pinger process, each input ----------------------------------

_PINGER = """
import sys, time, grpc
from postcompact_client.v1 import postcompact_pb2 as pb, postcompact_pb2_grpc as g
address, every = sys.argv[1], float(sys.argv[2])
with grpc.insecure_channel(address) as ch:
    stub = g.PostcompactServiceStub(ch)
    while True:
        t0 = time.monotonic()
        try:
            stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=30)
            ok = 1
        except grpc.RpcError:
            ok = 0
        print(f"{t0:.6f} {time.monotonic() - t0:.6f} {ok}", flush=True)
        time.sleep(every)
"""


def _pings(path: Path, start: float, end: float) -> list[float]:
    out = []
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 3 and start <= float(parts[0]) < end:
            out.append(float(parts[1]))
    return out


def main() -> int:
    if sys.argv[1:2] == ["--beside"]:
        ap = argparse.ArgumentParser()
        ap.add_argument("--beside", required=True, help="the daemon's address")
        ap.add_argument("--seconds", type=float, required=True)
        ap.add_argument("--cwd", required=True)
        ap.add_argument("--out", required=True)
        a = ap.parse_args()
        beside(a.beside, a.seconds, a.cwd, Path(a.out))
        return 0
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--only", nargs="*", default=[], help="input names (default: all)")
    ap.add_argument("--every", type=float, default=0.05, help="seconds between pings")
    ap.add_argument("--rounds", type=int, default=1, help="imports of each input")
    ap.add_argument(
        "--burn", type=int, default=0, help="CPU-bound processes kept running meanwhile (load)"
    )
    ap.add_argument("--slow", type=float, default=0, help="list the pings slower than this")
    ap.add_argument("--idle", type=float, default=10, help="seconds of pings before the imports")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="pcimp-", dir="/tmp"))
    socket = base / "d.sock"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("POSTCOMPACT_")},
        "XDG_RUNTIME_DIR": str(base / "run"),
        "XDG_CONFIG_HOME": str(base / "config"),
        "XDG_STATE_HOME": str(base / "state"),
    }
    (base / "run").mkdir(mode=0o700)
    (base / "app").mkdir()
    log = base / "daemon.log"
    with open(log, "wb") as f:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "postcompact", "serve", "--socket", str(socket)],
            stdin=subprocess.DEVNULL,
            stdout=f,
            stderr=f,
            env=env,
        )
    address = f"unix://{socket}"
    client = Client(address, auto_start=False, timeout=300, retry=RetryPolicy.none())
    pings = base / "pings.txt"
    pinger = None
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.burn)
    ]
    try:
        client.wait_for_health(60)
        with open(pings, "wb") as out:
            pinger = subprocess.Popen(
                [sys.executable, "-c", _PINGER, address, str(args.every)], stdout=out
            )
        time.sleep(2)  # the pinger's interpreter up and its channel connected
        t0 = time.monotonic()
        time.sleep(args.idle)
        idle = _pings(pings, t0, time.monotonic())
        print(
            f"daemon pid {daemon.pid}; idle for {args.idle:g} s: worst ping "
            f"{max(idle, default=0):.3f} s over {len(idle)} pings",
            flush=True,
        )
        for inp in INPUTS:
            if args.only and inp.name not in args.only:
                continue
            data = inp.make()
            for _ in range(args.rounds):
                time.sleep(1)
                t0 = time.monotonic()
                got = run_import(client, inp, data, str(base / "app"), log)
                time.sleep(0.5)  # a ping in flight at the end is counted
                window = _pings(pings, t0, time.monotonic())
                if args.slow:
                    slow = [
                        f"{float(p[0]) - t0:.2f}s:{float(p[1]) * 1000:.0f}ms"
                        for p in (x.split() for x in pings.read_text().splitlines())
                        if len(p) == 3 and float(p[0]) >= t0 and float(p[1]) > args.slow
                    ]
                    print("  slow pings (offset:latency):", " ".join(slow))
                print(
                    f"{inp.name}: {len(data) / 1e6:.1f} MB, {got.seconds:.2f} s, "
                    f"{'as documented' if got.ok else 'NOT AS DOCUMENTED'}: {got.answer}; "
                    f"worst ping {max(window, default=0):.3f} s over {len(window)} pings",
                    flush=True,
                )
    finally:
        for p in [*burners, *([pinger] if pinger is not None else [])]:
            p.kill()
            p.wait()
        client.close()
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(30)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
        if os.environ.get("KEEP"):
            print(f"kept {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
