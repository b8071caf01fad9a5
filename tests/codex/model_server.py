"""A scripted OpenAI Responses API server on 127.0.0.1, streamed, for running the real Codex CLI
offline (tests/codex/run_e2e.py).

Codex, given a model provider with `wire_api = "responses"` and this server's base URL, sends
`POST /v1/responses` with `stream: true` and reads server-sent events: `response.created`, one
`response.output_item.done` per output item (an assistant message, a `function_call` such as
`exec_command`, or a `custom_tool_call` such as `apply_patch`), then `response.completed` with
the token usage. Every request body is logged, in order, with the kind the server took it for:

- `compaction`: Codex's own summary request (its prompt opens `You are performing a CONTEXT
  CHECKPOINT COMPACTION`), answered with SUMMARY;
- `main`: every other request, answered with the next step of the script. The server counts the
  steps itself (after a compaction the history no longer holds the calls, so counting them there
  would start the script over). A step may report a large input usage: that is what makes Codex
  compact on its own (`model_auto_compact_token_limit`), before its next request.
"""

from __future__ import annotations

import http.server
import itertools
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.offline import serve_loopback, stop_serving

__all__ = ["COMPACTION_MARK", "SUMMARY", "Call", "Logged", "ModelServer", "Step"]

SUMMARY = "SCRIPTED-SUMMARY: the agent read the project's files and edited one."
COMPACTION_MARK = "CONTEXT CHECKPOINT COMPACTION"
DONE_TEXT = "Done."
SMALL_USAGE = 200


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call: `exec_command` (a function, JSON arguments) or `apply_patch` (a custom tool,
    its input the patch text)."""

    name: str
    args: dict[str, Any] | None = None
    text: str | None = None


@dataclass(frozen=True, slots=True)
class Step:
    """The answer to one main request: its calls (none: the text DONE_TEXT, which ends the turn)
    and the input tokens it reports."""

    calls: Sequence[Call] = ()
    input_tokens: int = SMALL_USAGE


@dataclass(slots=True)
class Logged:
    kind: str  # "main", "compaction", "other"
    step: int  # the main step served (-1 otherwise)
    body: dict[str, Any]


def input_text(body: dict[str, Any]) -> str:
    """Every text of a request (instructions and input items), joined: what the model read."""
    out = [str(body.get("instructions") or "")]
    for item in body.get("input") or []:
        if not isinstance(item, dict):
            continue
        content = item.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out += [str(c.get("text", "")) for c in content if isinstance(c, dict)]
        for key in ("output", "input", "arguments"):
            if isinstance(item.get(key), str):
                out.append(item[key])
    return "\n".join(out)


@dataclass
class ModelServer:
    steps: Sequence[Step]
    log: list[Logged] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _next: int = 0
    _ids: itertools.count[int] = field(default_factory=itertools.count)

    def __enter__(self) -> ModelServer:
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: object) -> None:
                pass

            def do_GET(self) -> None:
                server._record(Logged("other", -1, {"GET": self.path}))
                self._send_json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(size) or b"{}")
                except ValueError:
                    body = {}
                if not self.path.endswith("/responses") or not isinstance(body, dict):
                    server._record(Logged("other", -1, {"POST": self.path}))
                    self._send_json(404, {"error": {"message": "not found"}})
                    return
                kind, step, answer = server._decide(body)
                server._record(Logged(kind, step, body))
                self._stream(answer)

            def _send_json(self, status: int, obj: object) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, answer: Step | str) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                n = next(server._ids)
                rid = f"resp_{n}"

                def event(kind: str, **data: Any) -> None:
                    payload = json.dumps({"type": kind, **data})
                    self.wfile.write(f"event: {kind}\ndata: {payload}\n\n".encode())

                event("response.created", response={"id": rid})
                items: list[dict[str, Any]] = []
                if isinstance(answer, str) or not answer.calls:
                    text = answer if isinstance(answer, str) else DONE_TEXT
                    items.append(
                        {
                            "type": "message",
                            "role": "assistant",
                            "id": f"msg_{n}",
                            "content": [{"type": "output_text", "text": text}],
                        }
                    )
                else:
                    for i, call in enumerate(answer.calls):
                        cid = f"call_{n}_{i}"
                        if call.text is not None:
                            items.append(
                                {"type": "custom_tool_call", "id": f"ctc_{n}_{i}",
                                 "call_id": cid, "name": call.name, "input": call.text}
                            )  # fmt: skip
                        else:
                            items.append(
                                {"type": "function_call", "id": f"fc_{n}_{i}", "call_id": cid,
                                 "name": call.name, "arguments": json.dumps(call.args or {})}
                            )  # fmt: skip
                for i, item in enumerate(items):
                    event("response.output_item.done", output_index=i, item=item)
                tokens = SMALL_USAGE if isinstance(answer, str) else answer.input_tokens
                usage = {
                    "input_tokens": tokens,
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": 20,
                    "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": tokens + 20,
                }
                event("response.completed", response={"id": rid, "usage": usage})
                self.wfile.flush()
                self.close_connection = True

        self._httpd = serve_loopback(Handler)
        return self

    def __exit__(self, *_: object) -> None:
        stop_serving(self._httpd)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def _record(self, entry: Logged) -> None:
        with self._lock:
            self.log.append(entry)

    def _decide(self, body: dict[str, Any]) -> tuple[str, int, Step | str]:
        if COMPACTION_MARK in input_text(body):
            return "compaction", -1, SUMMARY
        with self._lock:
            step = self._next
            self._next += 1
        if step < len(self.steps):
            return "main", step, self.steps[step]
        return "main", step, Step()
