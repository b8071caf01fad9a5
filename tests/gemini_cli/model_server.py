"""A scripted Gemini API on 127.0.0.1, for running the real Gemini CLI offline
(tests/gemini_cli/session.py).

Gemini CLI, given `GOOGLE_GEMINI_BASE_URL` and an API key, sends
`POST /v1beta/models/<model>:streamGenerateContent?alt=sse` for the agent's turns (server-sent
events, `data: {GenerateContentResponse}` each) and `:generateContent` for its utility calls,
among them the compression: a request whose system instruction asks for a `<state_snapshot>`
(twice: the summary, then its verification). Every request is logged, in order, with the kind
the server took it for:

- `compress`: answered with SNAPSHOT;
- `main`: the agent's turns. The prompt is the last user message of plain text (`STEP n`); the
  k-th request of it (k model answers after the prompt so far) gets the k-th answer of the
  step's script: function calls, or a line of text when the script has run out. An answer may
  report a prompt token count: a large one makes Gemini CLI compress before its next request;
- `other`: anything else (counted tokens, ...), answered with a neutral figure or text.
"""

from __future__ import annotations

import http.server
import json
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.offline import serve_loopback, stop_serving

__all__ = ["DONE_TEXT", "SNAPSHOT", "Answer", "Call", "Logged", "ModelServer"]

SNAPSHOT = (
    "<state_snapshot>\n"
    "    <overall_goal>SCRIPTED-SNAPSHOT: refactor the project.</overall_goal>\n"
    "    <key_knowledge>Files were read and one was edited.</key_knowledge>\n"
    "</state_snapshot>"
)
DONE_TEXT = "Done."
STEP = re.compile(r"^GEMINI-STEP (\d+)\b")
_SMALL_USAGE = 1_200


@dataclass(frozen=True, slots=True)
class Call:
    name: str
    args: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Answer:
    calls: Sequence[Call] = ()
    prompt_tokens: int = _SMALL_USAGE  # reported as usageMetadata.promptTokenCount


@dataclass(slots=True)
class Logged:
    kind: str  # "main", "compress", "other"
    step: int  # the prompt's STEP n (0 when not a main request)
    path: str
    body: dict[str, Any]


def texts(content: Mapping[str, Any]) -> str:
    """The text parts of one content, joined (as Gemini CLI's hooks see a message)."""
    parts = content.get("parts") or []
    return "".join(str(p["text"]) for p in parts if isinstance(p, dict) and "text" in p)


def is_prompt(content: Mapping[str, Any]) -> bool:
    """A user message of plain text (no function response)."""
    parts = content.get("parts") or []
    return content.get("role") == "user" and not any(
        isinstance(p, dict) and "functionResponse" in p for p in parts
    )


def response(parts: list[dict[str, Any]], prompt_tokens: int) -> dict[str, Any]:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": prompt_tokens,
            "candidatesTokenCount": 20,
            "totalTokenCount": prompt_tokens + 20,
        },
        "modelVersion": "gemini-2.5-flash",
    }


@dataclass
class ModelServer:
    script: Mapping[int, Sequence[Answer]]  # STEP n -> its answers, in order
    log: list[Logged] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __enter__(self) -> ModelServer:
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: object) -> None:
                pass

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                kind, step, answer = server.answer(self.path, body)
                with server._lock:
                    server.log.append(Logged(kind, step, self.path, body))
                if ":streamGenerateContent" in self.path:
                    data = f"data: {json.dumps(answer)}\r\n\r\n".encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                else:
                    data = json.dumps(answer).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                data = b"{}"
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = serve_loopback(Handler)
        return self

    def __exit__(self, *_: object) -> None:
        stop_serving(self._httpd)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def answer(self, path: str, body: Mapping[str, Any]) -> tuple[str, int, dict[str, Any]]:
        if ":countTokens" in path:
            return "other", 0, {"totalTokens": _SMALL_USAGE}
        system = texts(body.get("systemInstruction") or {})
        if "<state_snapshot>" in system:
            return "compress", 0, response([{"text": SNAPSHOT}], _SMALL_USAGE)
        contents = body.get("contents") or []
        at = next((i for i in range(len(contents) - 1, -1, -1) if is_prompt(contents[i])), -1)
        # The prompt is the content's last text part (Gemini CLI sends the session context and
        # the first prompt as two parts of one user message).
        parts = [p for p in contents[at].get("parts") or [] if "text" in p] if at >= 0 else []
        m = STEP.match(str(parts[-1]["text"])) if parts else None
        if m is None or ":streamGenerateContent" not in path:
            return "other", 0, response([{"text": DONE_TEXT}], _SMALL_USAGE)
        step = int(m.group(1))
        k = sum(1 for c in contents[at + 1 :] if c.get("role") == "model")
        answers = self.script.get(step, ())
        if k >= len(answers):
            return "main", step, response([{"text": DONE_TEXT}], _SMALL_USAGE)
        a = answers[k]
        parts = [{"functionCall": {"name": c.name, "args": dict(c.args)}} for c in a.calls]
        return "main", step, response(parts, a.prompt_tokens)
