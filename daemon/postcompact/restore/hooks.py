"""Session-start hooks run at Compact (docs/claude-code.md §9). Commands come from the daemon's
config only.

Each hook runs as `/bin/sh -c <command>` in the session's cwd, in its own process group, with this
JSON on stdin:

    {"hook_event_name": "SessionStart", "source": "compact", "session_id": ..., "cwd": ...,
     "agent_id": ...}            (plus "preview": true for PreviewCompact)

Its additional context is taken from stdout (exit status 0 only), in this order of preference:
1. JSON `{"hookSpecificOutput": {"additionalContext": "..."}}` (Claude Code's hook output);
2. JSON with a top-level `"additionalContext"` string;
3. any other stdout that is not JSON, stripped, as plain text (Claude Code adds a SessionStart
   hook's plain stdout as context too). A JSON object without either field adds nothing.
A non-zero exit is OUTCOME_HOOK_FAILED (stderr in the detail); a hook still running after its
timeout has its whole process group killed and is OUTCOME_HOOK_TIMED_OUT. Neither ever fails the
Compact. Hooks run concurrently; their contexts keep the configured order.

At most `limits.max_hooks_running` hook processes run at once across the daemon (`HookSlots`):
a hook waits for a slot within its own timeout (the wait counts against it), and one that gets
none in time is OUTCOME_HOOK_TIMED_OUT without having started, its detail naming the limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass

from postcompact.v1 import postcompact_pb2 as pb

__all__ = ["HookResult", "HookSlots", "HookSpec", "parse_hook_output", "run_hooks"]

_MAX_OUTPUT = 1 << 20  # stdout kept per hook (1 MiB)
_DETAIL_CHARS = 500


@dataclass(frozen=True, slots=True)
class HookSpec:
    command: str
    timeout_s: float = 10.0


@dataclass(frozen=True, slots=True)
class HookResult:
    spec: HookSpec
    outcome: pb.Outcome.ValueType
    context: str | None  # the additional context, if any
    detail: str


class HookSlots:
    """At most `limit` hook processes at once, daemon-wide."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._free = asyncio.Semaphore(limit)

    async def acquire(self, timeout_s: float) -> bool:
        try:
            await asyncio.wait_for(self._free.acquire(), timeout=timeout_s)
        except TimeoutError:
            return False
        return True

    def release(self) -> None:
        self._free.release()


def parse_hook_output(stdout: str) -> str | None:
    """The additional context in a hook's stdout (see the module docstring), or None."""
    text = stdout.strip()
    if not text:
        return None
    if text.startswith("{"):
        try:
            obj = json.loads(text)
        except ValueError:
            return text
        if isinstance(obj, dict):
            specific = obj.get("hookSpecificOutput")
            if isinstance(specific, dict):
                ctx = specific.get("additionalContext")
                if isinstance(ctx, str) and ctx:
                    return ctx
            ctx = obj.get("additionalContext")
            if isinstance(ctx, str) and ctx:
                return ctx
            return None
    return text


def _short(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _DETAIL_CHARS else text[:_DETAIL_CHARS] + "…"


async def _read_bounded(stream: asyncio.StreamReader | None, limit: int) -> bytes:
    """Everything `stream` gives until EOF, keeping at most `limit` bytes: the rest is read and
    dropped, so a hook writing gigabytes neither fills the daemon's memory nor blocks."""
    kept = bytearray()
    if stream is None:
        return b""
    while chunk := await stream.read(1 << 16):
        if len(kept) < limit:
            kept += chunk[: limit - len(kept)]
    return bytes(kept)


async def _feed(stdin: asyncio.StreamWriter | None, payload: bytes) -> None:
    if stdin is None:
        return
    try:
        stdin.write(payload)
        await stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the hook does not read its stdin: fine
    finally:
        stdin.close()


def _close_pipes(proc: asyncio.subprocess.Process) -> None:
    # A killed hook's detached children may still hold its stdout/stderr open: the pipes would
    # only close at their EOF. Closing the transport releases the daemon's ends now.
    transport = getattr(proc, "_transport", None)
    if transport is not None:
        transport.close()


async def _run_one(
    spec: HookSpec, payload: bytes, cwd: str | None, slots: HookSlots | None
) -> HookResult:
    if slots is None:
        return await _run_process(spec, payload, cwd, spec.timeout_s)
    loop = asyncio.get_running_loop()
    start = loop.time()
    if not await slots.acquire(spec.timeout_s):
        return HookResult(
            spec,
            pb.OUTCOME_HOOK_TIMED_OUT,
            None,
            f"not started: {slots.limit} hooks were running for its whole {spec.timeout_s:g}s "
            "timeout (limits.max_hooks_running)",
        )
    try:
        remaining = max(0.0, spec.timeout_s - (loop.time() - start))
        return await _run_process(spec, payload, cwd, remaining)
    finally:
        slots.release()


async def _run_process(
    spec: HookSpec, payload: bytes, cwd: str | None, timeout_s: float
) -> HookResult:
    try:
        proc = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            spec.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            start_new_session=True,
        )
    except OSError as exc:
        return HookResult(spec, pb.OUTCOME_HOOK_FAILED, None, f"could not start: {exc}")
    io = asyncio.gather(
        _feed(proc.stdin, payload),
        _read_bounded(proc.stdout, _MAX_OUTPUT),
        _read_bounded(proc.stderr, _MAX_OUTPUT),
        proc.wait(),
    )
    try:
        _, out, err, _ = await asyncio.wait_for(io, timeout=timeout_s)
    except (TimeoutError, asyncio.CancelledError) as exc:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        _close_pipes(proc)
        if isinstance(exc, asyncio.CancelledError):
            raise
        await proc.wait()
        return HookResult(
            spec, pb.OUTCOME_HOOK_TIMED_OUT, None, f"timed out after {spec.timeout_s:g}s; killed"
        )
    if proc.returncode != 0:
        stderr = err.decode("utf-8", "replace")
        detail = f"exit status {proc.returncode}"
        if stderr.strip():
            detail += f": {_short(stderr)}"
        return HookResult(spec, pb.OUTCOME_HOOK_FAILED, None, detail)
    context = parse_hook_output(out.decode("utf-8", "replace"))
    detail = "no additional context" if context is None else f"{len(context)} characters of context"
    return HookResult(spec, pb.OUTCOME_HOOK_OK, context, detail)


async def run_hooks(
    hooks: Sequence[HookSpec],
    *,
    session_id: str,
    cwd: str,
    agent_id: str,
    preview: bool = False,
    slots: HookSlots | None = None,
) -> list[HookResult]:
    """Run every hook concurrently (within `slots`); results in the configured order."""
    if not hooks:
        return []
    message: dict[str, object] = {
        "hook_event_name": "SessionStart",
        "source": "compact",
        "session_id": session_id,
        "cwd": cwd,
        "agent_id": agent_id,
    }
    if preview:
        message["preview"] = True
    payload = json.dumps(message).encode()
    workdir = cwd if await asyncio.to_thread(os.path.isdir, cwd) else None
    return list(await asyncio.gather(*(_run_one(h, payload, workdir, slots) for h in hooks)))
