"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for running the real
OpenCode offline (tests/opencode/run_e2e.py).

OpenCode, given a provider with `@ai-sdk/openai-compatible` and this server's base URL, sends
`POST /v1/chat/completions` with `stream: true` and reads server-sent events: `data: {chunk}`
lines (the assistant's text, or its tool calls with their JSON arguments), a last chunk with the
finish reason and the token usage, then `data: [DONE]`. Every request body is logged, in order,
with the kind the server took it for:

- `title`: OpenCode's title generator (its system prompt says so), answered with a title;
- `compaction`: OpenCode's summarisation agent (no tools, a system prompt about summarising),
  answered with `SUMMARY`;
- `main`: the agent's own turns. Before the summary is in the history, the k-th request (k tool
  results so far) gets the k-th call of `before`, the last one reporting `context_tokens` of
  input: more than the model's context leaves room for, which is what makes OpenCode compact on
  its own. After it, the same with `after`, then a line of text.

`ready`, when given, is called once before the first answer (with a bound of its own): a run
whose plugin starts the daemon waits there until it serves, so that the script's timing does
not depend on how long a daemon takes to start.
"""

from __future__ import annotations

import http.server
import itertools
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.offline import serve_loopback, stop_serving

__all__ = ["SUMMARY", "Logged", "ModelServer", "ToolCall"]

SUMMARY = "## Goal\n- SCRIPTED-SUMMARY: refactor the project (files read and edited so far).\n"
DONE_TEXT = "Done."
_SMALL_USAGE = 120


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    args: Mapping[str, Any]


@dataclass(slots=True)
class Logged:
    kind: str  # "title", "compaction", "main", "other"
    phase: str  # "before" / "after" the summary ("" for title and compaction)
    body: dict[str, Any]


def text_of(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


@dataclass
class ModelServer:
    before: Sequence[ToolCall]
    after: Sequence[ToolCall] = ()
    context_tokens: int = 0  # reported by the last call of `before`; 0: a small figure
    ready: Callable[[], None] | None = None  # called once, before the first answer
    log: list[Logged] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _ready_lock: threading.Lock = field(default_factory=threading.Lock)
    _ids: itertools.count[int] = field(default_factory=itertools.count)

    def __enter__(self) -> ModelServer:
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: object) -> None:
                pass

            def do_GET(self) -> None:
                server._record(Logged("other", "", {"GET": self.path}))
                self._send_json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(size) or b"{}")
                except ValueError:
                    body = {}
                if not self.path.endswith("/chat/completions") or not isinstance(body, dict):
                    server._record(Logged("other", "", {"POST": self.path}))
                    self._send_json(404, {"error": {"message": "not found"}})
                    return
                server._wait_ready()
                kind, phase, answer = server._decide(body)
                server._record(Logged(kind, phase, body))
                self._stream(answer, body.get("model", "scripted"))

            def _send_json(self, status: int, obj: object) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, answer: dict[str, Any], model: str) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                n = next(server._ids)
                base = {
                    "id": f"chatcmpl-{n}",
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": model,
                }

                def event(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> None:
                    chunk = {
                        **base,
                        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                    }
                    chunk.update(extra)
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")

                call: ToolCall | None = answer.get("call")
                if call is not None:
                    args = json.dumps(call.args)
                    head = {"index": 0, "id": f"call_{n}", "type": "function"}
                    event(
                        {
                            "role": "assistant",
                            "tool_calls": [
                                {**head, "function": {"name": call.name, "arguments": ""}}
                            ],
                        }
                    )
                    for i in range(0, len(args), 32):  # the arguments in pieces, as APIs send them
                        event(
                            {
                                "tool_calls": [
                                    {"index": 0, "function": {"arguments": args[i : i + 32]}}
                                ]
                            }
                        )
                    finish = "tool_calls"
                else:
                    event({"role": "assistant", "content": answer["text"]})
                    finish = "stop"
                prompt = int(answer.get("usage", _SMALL_USAGE))
                usage = {
                    "prompt_tokens": prompt,
                    "completion_tokens": 8,
                    "total_tokens": prompt + 8,
                }
                event({}, finish, usage=usage)
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        self._httpd = serve_loopback(Handler)
        return self

    def __exit__(self, *_: object) -> None:
        stop_serving(self._httpd)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def _wait_ready(self) -> None:
        with self._ready_lock:  # every request waits for the first one's call
            if self.ready is not None:
                self.ready()
                self.ready = None

    def _record(self, entry: Logged) -> None:
        with self._lock:
            self.log.append(entry)

    def _decide(self, body: Mapping[str, Any]) -> tuple[str, str, dict[str, Any]]:
        messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
        system = "\n".join(text_of(m) for m in messages if m.get("role") == "system")
        if "title generator" in system:
            return "title", "", {"text": "Scripted session"}
        if not body.get("tools") and "summar" in system.lower():
            return "compaction", "", {"text": SUMMARY}
        # Where the summary is, if it is: the calls answered since then pick the next one.
        start = next(
            (
                i
                for i, m in enumerate(messages)
                if m.get("role") == "assistant" and SUMMARY.strip() in text_of(m)
            ),
            None,
        )
        phase, script = ("before", self.before) if start is None else ("after", self.after)
        done = sum(1 for m in messages[(start or 0) :] if m.get("role") == "tool")
        if done < len(script):
            last = phase == "before" and done == len(script) - 1
            usage = self.context_tokens if last and self.context_tokens else _SMALL_USAGE
            return "main", phase, {"call": script[done], "usage": usage}
        return "main", phase, {"text": DONE_TEXT}
