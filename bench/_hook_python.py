"""B8's Python equivalent of the plugin's hook command (bench/b8_hooks.py): one PostToolUse
payload of a Read on stdin, the same report through the Python client (RecordRead; the session
opened when the daemon does not hold it), exit 0. What the hook would cost as a Python program.

    python bench/_hook_python.py < payload.json   (POSTCOMPACT_ADDRESS names the daemon)
"""

from __future__ import annotations

import json
import os
import sys
import time

from postcompact_client import Client, PostcompactError


def main() -> int:
    p = json.load(sys.stdin)
    f = p["tool_response"]["file"]
    client = Client(os.environ["POSTCOMPACT_ADDRESS"], auto_start=False)
    session = client.session("claude-code-" + p["session_id"])
    now = int(time.time() * 1000)
    try:
        try:
            session.record_read(f["filePath"], f["content"], timestamp_ms=now)
        except PostcompactError as exc:
            if exc.reason != "SESSION_NOT_FOUND":
                raise
            cwd = os.environ.get("CLAUDE_PROJECT_DIR") or p["cwd"]
            session = client.open_session(
                cwd, session_id=session.session_id, policy={"complement": "claude_code"}
            )
            session.record_read(f["filePath"], f["content"], timestamp_ms=now)
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
