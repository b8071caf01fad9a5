"""Generate the Python client's synchronous module from its asyncio one.

`clients/python/src/postcompact_client/_aio.py` is the one definition of both clients (every
method, signature, request and docstring); `_client.py` is derived from it by the fixed
rewrites below, then formatted with ruff. `make unasync` writes it; `--check` (run by
`make lint`) exits 1 when the committed file differs from what would be generated.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "clients" / "python" / "src" / "postcompact_client"
SOURCE, TARGET = PKG / "_aio.py", PKG / "_client.py"

HEADER = '''"""The synchronous client.

Generated from _aio.py by scripts/unasync.py (`make unasync`): edit _aio.py, not this file.
"""
'''

# (pattern, replacement), applied in order as regular expressions.
REWRITES: tuple[tuple[str, str], ...] = (
    (r"^import asyncio\n", ""),
    (r"\basync def ", "def "),
    (r"\basync with ", "with "),
    (r"\bawait ", ""),
    (r"\b__aenter__\b", "__enter__"),
    (r"\b__aexit__\b", "__exit__"),
    (r"\bgrpc\.aio\.insecure_channel\b", "grpc.insecure_channel"),
    (r"\bgrpc\.aio\.AioRpcError\b", "grpc.RpcError"),
    (r"\basyncio\.sleep\(", "time.sleep("),
    (r"  # noqa: ASYNC109", ""),
    (r"\bAsyncClient\b", "Client"),
    (r"\bAsyncSession\b", "Session"),
    (
        r"A connection to the daemon, for asyncio code: create it inside a running event loop\.",
        "A connection to the daemon. Thread-safe; use one per process.",
    ),
)

# Nothing of asyncio may survive the rewrites.
LEFTOVER = re.compile(r"\b(async|await|asyncio|aio)\b|(?<!\w)(__aenter__|__aexit__)")


def generate() -> str:
    text = SOURCE.read_text()
    doc = re.match(r'"""(?:.|\n)*?"""\n', text)
    if doc is None:
        raise SystemExit(f"{SOURCE}: no module docstring to replace")
    text = HEADER + text[doc.end() :]
    for pattern, replacement in REWRITES:
        text = re.sub(pattern, replacement, text, flags=re.MULTILINE)
    left = [
        f"{SOURCE.name}→{TARGET.name}:{n}: {line.strip()}"
        for n, line in enumerate(text.splitlines(), 1)
        if LEFTOVER.search(line)
    ]
    if left:
        raise SystemExit("asyncio left after the rewrites:\n" + "\n".join(left))
    formatted = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", str(TARGET), "-"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
    )
    if formatted.returncode != 0:
        raise SystemExit(f"ruff format failed:\n{formatted.stderr}")
    return formatted.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true", help="fail if the committed file is stale")
    args = ap.parse_args()
    text = generate()
    if args.check:
        if TARGET.read_text() != text:
            print(f"{TARGET} is stale: run 'make unasync' and commit the result", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text)
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
