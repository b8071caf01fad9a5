"""A scripted Anthropic Messages API on 127.0.0.1, for running the real Claude Code offline
(docs/parity.md, "Against the running Claude Code").

It answers `POST /v1/messages` streamed as the API streams (`message_start`, a
`content_block_start` whose tool_use block has an empty input, `input_json_delta` chunks,
`message_delta` with the stop reason, `message_stop`), `POST /v1/messages/count_tokens`, and any
other request with an empty JSON object. Every request is logged whole, in order, with the kind
the server took it for.

What it answers comes from the scenario's script: the user prompt `PARITY-STEP <k>` starts step
k, each tool_result of the step asks for its next tool call, and after the last the step ends
with a line of text. The compaction request (Claude Code's summary prompt) is answered with a
summary; requests without the Read tool (titles, side questions) with a line of text; a
sub-agent whose prompt holds `PARITY-AGENT` with a line of text once the run ends, so it is still
running at the compaction. `{plan_file}` in a call's input is the plan file the request names
(plan mode's reminder), `{saved_result}` the file Claude Code saved the last tool result too
large to send to (`Full output saved to: …`). A step may
ask for the context to look full (`report_input_tokens`): its last answer then reports that many
input tokens, which is what makes Claude Code compact on its own.
"""

from __future__ import annotations

import http.server
import itertools
import json
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PLAN_FILE", "SAVED_RESULT", "SUMMARY", "ModelServer", "Step", "ToolCall"]

SUMMARY = (
    "<summary>\nThe scripted session so far: files read and edited for the parity run.\n</summary>"
)
_STEP = re.compile(r"PARITY-STEP (\d+)")
# Claude Code's compaction prompt opens with this (2.1.88 and 2.1.328 alike).
_COMPACT_PROMPT = "create a detailed summary of the conversation"
_JSON_CHUNK = 24  # input_json_delta piece size: several pieces per call, as the API sends
AGENT_HOLD_S = 120  # the longest a sub-agent's answer waits for `release`


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    input: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Step:
    calls: Sequence[ToolCall] = ()
    report_input_tokens: int = 0  # 0: a small figure


@dataclass(slots=True)
class Logged:
    path: str
    kind: str  # "main", "compact", "side", "agent", "count_tokens", "other"
    step: int | None
    body: Any


def _texts(message: Mapping[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]


def _has_tool_result(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def count_tokens(body: Any) -> int:
    """The count the server gives for the messages' text: Math.round(UTF-16 units / 3).

    Claude Code asks the API to count a file whose rough estimate is over a quarter of the
    per-file cap, and the count decides whether the file comes back whole or as a too-large
    note. postcompact has no API: its claude-code profiles estimate that count as UTF-16 units
    / 3 (docs/claude-code.md §2). The server counts the same way, so what is compared is the
    rest; what a real count changes is said in docs/parity.md.
    """
    messages = body.get("messages") if isinstance(body, dict) else None
    texts = [t for m in messages or [] if isinstance(m, dict) for t in _texts(m)]
    units = sum(len(t.encode("utf-16-le", "surrogatepass")) // 2 for t in texts)
    return (2 * units + 3) // 6  # Math.round(units / 3)


# The plan file Claude Code names in plan mode's reminder (under its plans directory).
_PLAN_FILE = re.compile(r"(/[^\s\"'`]*/\.claude/plans/[^\s\"'`]+\.md)")
PLAN_FILE = "{plan_file}"  # in a tool call's input: the plan file the request names
AGENT_MARK = "PARITY-AGENT"  # in a sub-agent's prompt: its answer waits for the run's end


# Where Claude Code saved a tool result too large to send (`<persisted-output>`, a file of its
# `tool-results` folder), as the tool_result says.
_SAVED_RESULT = re.compile(r"Full output saved to: (\S+)")
SAVED_RESULT = "{saved_result}"  # in a tool call's input: the last tool result saved to a file


def _plan_file(body: Mapping[str, Any]) -> str:
    found = _PLAN_FILE.findall(json.dumps(body, ensure_ascii=False))
    return found[-1] if found else ""


def _tool_result_texts(body: Mapping[str, Any]) -> Iterator[str]:
    for m in body.get("messages") or []:
        content = m.get("content") if isinstance(m, dict) else None
        for b in content if isinstance(content, list) else []:
            if not isinstance(b, dict) or b.get("type") != "tool_result":
                continue
            inner = b.get("content")
            if isinstance(inner, str):
                yield inner
            elif isinstance(inner, list):
                yield from (x.get("text", "") for x in inner if isinstance(x, dict))


def _saved_result(body: Mapping[str, Any]) -> str:
    found = [p for t in _tool_result_texts(body) for p in _SAVED_RESULT.findall(t)]
    return found[-1] if found else ""


def _fill(value: Any, plan_file: str, saved_result: str = "") -> Any:
    if isinstance(value, str):
        return value.replace(PLAN_FILE, plan_file).replace(SAVED_RESULT, saved_result)
    if isinstance(value, dict):
        return {k: _fill(v, plan_file, saved_result) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, plan_file, saved_result) for v in value]
    return value


@dataclass(slots=True)
class _Reply:
    kind: str
    step: int | None
    text: str = ""
    call: ToolCall | None = None
    input_tokens: int = 100


def _decide(script: Mapping[int, Step], body: Mapping[str, Any]) -> _Reply:
    messages = body.get("messages") or []
    # Claude Code may append a system-role note after the prompt: the last user message asks.
    last_user: Mapping[str, Any] = next(
        (m for m in reversed(messages) if m.get("role") == "user"), {}
    )
    if any(_COMPACT_PROMPT in t for t in _texts(last_user)):
        return _Reply("compact", None, text=SUMMARY)
    if any(AGENT_MARK in t for m in messages[:1] for t in _texts(m)):
        return _Reply("agent", None, text="Agent done.")
    if "Read" not in {t.get("name") for t in body.get("tools") or []}:
        return _Reply("side", None, text="Scripted.")
    results = 0
    for m in reversed(messages):
        if m.get("role") != "user":
            continue
        found = _STEP.search("\n".join(_texts(m)))
        if found:
            k = int(found.group(1))
            step = script.get(k, Step())
            if results < len(step.calls):
                call = step.calls[results]
                filled = ToolCall(
                    call.name, _fill(dict(call.input), _plan_file(body), _saved_result(body))
                )
                return _Reply("main", k, call=filled)
            tokens = step.report_input_tokens or 100
            return _Reply("main", k, text=f"Step {k} done.", input_tokens=tokens)
        if _has_tool_result(m):
            results += 1
    return _Reply("main", None, text="Nothing to do.")


def _events(reply: _Reply, model: str, msg_id: str, tool_id: str) -> Iterator[tuple[str, Any]]:
    usage = {"input_tokens": reply.input_tokens, "output_tokens": 1}
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage,
            },
        },
    )
    if reply.call is None:
        block: dict[str, Any] = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": reply.text}]
        stop = "end_turn"
    else:
        block = {"type": "tool_use", "id": tool_id, "name": reply.call.name, "input": {}}
        raw = json.dumps(dict(reply.call.input))
        deltas = [
            {"type": "input_json_delta", "partial_json": raw[i : i + _JSON_CHUNK]}
            for i in range(0, len(raw), _JSON_CHUNK)
        ]
        stop = "tool_use"
    yield "content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}
    for d in deltas:
        yield "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": d}
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 16},
        },
    )
    yield "message_stop", {"type": "message_stop"}


@dataclass
class ModelServer:
    """`with ModelServer(script) as srv:` serves on `srv.url` until the block ends."""

    script: Mapping[int, Step]
    log: list[Logged] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.release = threading.Event()  # set: held sub-agent answers go
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _json(self, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                server._record(Logged(self.path, "other", None, None))
                self._json({})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                path = self.path.split("?", 1)[0]
                if path.endswith("/count_tokens"):
                    server._record(Logged(self.path, "count_tokens", None, body))
                    self._json({"input_tokens": count_tokens(body)})
                    return
                if path != "/v1/messages" or not isinstance(body, dict):
                    server._record(Logged(self.path, "other", None, body))
                    self._json({})
                    return
                reply = _decide(server.script, body)
                server._record(Logged(self.path, reply.kind, reply.step, body))
                if reply.kind == "agent":  # a background agent stays running until the end
                    server.release.wait(AGENT_HOLD_S)
                n = next(server._ids)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                events = _events(
                    reply, str(body.get("model", "")), f"msg_{n:04d}", f"toolu_{n:04d}"
                )
                try:
                    for name, data in events:
                        chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):  # Claude Code left first
                    return

        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def _record(self, entry: Logged) -> None:
        with self._lock:
            self.log.append(entry)

    def __enter__(self) -> ModelServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()
