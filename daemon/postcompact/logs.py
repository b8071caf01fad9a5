"""Structured logging: one JSON object per line when stderr is not a TTY, readable text when it is.

Extra fields passed with `log.info("msg", extra={...})` are kept as top-level JSON keys.

Bounded (docs/reliability.md): clients choose much of what is logged (paths, ids, messages that
name them), so every value is cut to `MAX_VALUE_CHARS` (head and tail around a marker that says
how much was left out), lists to `MAX_LIST_ITEMS`, the message to `MAX_MESSAGE_CHARS` and a
traceback to `MAX_TRACEBACK_CHARS`. A log file rotates at `log_max_bytes` keeping `log_backups`
old files (each 0600), so the log can never fill the state directory it lives in.
"""

from __future__ import annotations

import io
import json
import logging
import logging.handlers
import os
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from postcompact.lifecycle import make_private_dirs

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}

MAX_VALUE_CHARS = 1000
MAX_LIST_ITEMS = 20
MAX_MESSAGE_CHARS = 4000
MAX_TRACEBACK_CHARS = 20_000
DEFAULT_MAX_BYTES = 10 * 1024 * 1024
DEFAULT_BACKUPS = 3


def bounded(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    """`text`, or its head and tail around `…[N chars]…` within about `limit` characters."""
    if len(text) <= limit:
        return text
    keep = max(1, (limit - 24) // 2)
    return f"{text[:keep]}…[{len(text) - 2 * keep} chars]…{text[-keep:]}"


def _value(v: Any) -> Any:
    if isinstance(v, bool | int | float) or v is None:
        return v
    if isinstance(v, list | tuple | set | frozenset):
        items = [_value(x) for x in list(v)[:MAX_LIST_ITEMS]]
        if len(v) > MAX_LIST_ITEMS:
            items.append(f"…[{len(v) - MAX_LIST_ITEMS} more]")
        return items
    return bounded(v if isinstance(v, str) else str(v))


def _extras(record: logging.LogRecord) -> dict[str, Any]:
    return {
        k: _value(v)
        for k, v in record.__dict__.items()
        if k not in _STANDARD and not k.startswith("_")
    }


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": bounded(record.getMessage(), MAX_MESSAGE_CHARS),
        }
        out.update(_extras(record))
        if record.exc_info:
            out["exc"] = bounded(self.formatException(record.exc_info), MAX_TRACEBACK_CHARS)
        return json.dumps(out, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        ts = time.strftime("%H:%M:%S", time.localtime(record.created))
        extras = " ".join(f"{k}={v}" for k, v in _extras(record).items())
        line = (
            f"{ts} {record.levelname.lower():7} {bounded(record.getMessage(), MAX_MESSAGE_CHARS)}"
        )
        if extras:
            line += f"  {extras}"
        if record.exc_info:
            line += "\n" + bounded(self.formatException(record.exc_info), MAX_TRACEBACK_CHARS)
        return line


def open_private_log(path: Path) -> io.TextIOWrapper:
    """Open `path` for appending, readable by the current user only: a directory we create is
    0700, the file is created 0600 and an existing one is made 0600 (logs name paths, sessions and
    errors; like the runtime directory and the state database they are the user's alone)."""
    if not path.parent.exists():
        make_private_dirs(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        return os.fdopen(fd, "a", encoding="utf-8", buffering=1)
    except BaseException:
        os.close(fd)
        raise


class PrivateFileHandler(logging.handlers.RotatingFileHandler):
    """A rotating file handler whose files are opened by `open_private_log` (0600; a rotated
    file keeps its mode). Once it `owns_stderr`, file descriptor 2 is the current log file too,
    pointed again at each new file after a rotation."""

    owns_stderr = False

    def _open(self) -> io.TextIOWrapper:
        stream = open_private_log(Path(self.baseFilename))
        if self.owns_stderr:
            os.dup2(stream.fileno(), 2)
        return stream

    def adopt_stderr(self) -> None:
        self.owns_stderr = True
        if self.stream is not None:
            self.stream.flush()
            os.dup2(self.stream.fileno(), 2)


def log_file_handler() -> PrivateFileHandler | None:
    """The log file's handler, when the daemon logs to a file (setup_logging with a log_file)."""
    for handler in logging.getLogger("postcompact").handlers:
        if isinstance(handler, PrivateFileHandler):
            return handler
    return None


def adopt_stderr() -> bool:
    """Send what is written to stderr (gRPC's own messages, a crash's traceback: lines that are
    not JSON) to the log file from now on, and away from whatever stderr was: a daemon started
    in the background by a client's auto-start or `postcompact start` (cli.py, `--detached`)
    writes to stderr only until it serves, where the starter reads why it could not start. The
    file still rotates at log_max_bytes (each record checks the file's size, these lines
    included). False, and nothing changes, without a log file."""
    handler = log_file_handler()
    if handler is None:
        return False
    sys.stderr.flush()
    handler.adopt_stderr()
    return True


def stderr_adopted() -> bool:
    handler = log_file_handler()
    return handler is not None and handler.owns_stderr


def setup_logging(
    level: str = "info",
    log_file: Path | None = None,
    stream: TextIO | None = None,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    backups: int = DEFAULT_BACKUPS,
) -> None:
    root = logging.getLogger("postcompact")
    for old in root.handlers:
        old.close()
    root.handlers.clear()
    root.setLevel(level.upper())
    root.propagate = False
    handler: logging.Handler
    if log_file is not None:
        handler = PrivateFileHandler(log_file, maxBytes=max_bytes, backupCount=backups)
        handler.setFormatter(JsonFormatter())
    else:
        s = stream or sys.stderr
        handler = logging.StreamHandler(s)
        handler.setFormatter(TextFormatter() if s.isatty() else JsonFormatter())
    root.addHandler(handler)
