"""Structured logging: one JSON object per line when stderr is not a TTY, readable text when it is.

Extra fields passed with `log.info("msg", extra={...})` are kept as top-level JSON keys.
"""

from __future__ import annotations

import io
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from postcompact.lifecycle import make_private_dirs

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}


def _extras(record: logging.LogRecord) -> dict[str, Any]:
    return {
        k: v for k, v in record.__dict__.items() if k not in _STANDARD and not k.startswith("_")
    }


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        out.update(_extras(record))
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        ts = time.strftime("%H:%M:%S", time.localtime(record.created))
        extras = " ".join(f"{k}={v}" for k, v in _extras(record).items())
        line = f"{ts} {record.levelname.lower():7} {record.getMessage()}"
        if extras:
            line += f"  {extras}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
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


class PrivateFileHandler(logging.FileHandler):
    """A FileHandler whose file is opened by `open_private_log` (0600)."""

    def _open(self) -> io.TextIOWrapper:
        return open_private_log(Path(self.baseFilename))


def setup_logging(
    level: str = "info", log_file: Path | None = None, stream: TextIO | None = None
) -> None:
    root = logging.getLogger("postcompact")
    for old in root.handlers:
        old.close()
    root.handlers.clear()
    root.setLevel(level.upper())
    root.propagate = False
    handler: logging.Handler
    if log_file is not None:
        handler = PrivateFileHandler(log_file)
        handler.setFormatter(JsonFormatter())
    else:
        s = stream or sys.stderr
        handler = logging.StreamHandler(s)
        handler.setFormatter(TextFormatter() if s.isatty() else JsonFormatter())
    root.addHandler(handler)
