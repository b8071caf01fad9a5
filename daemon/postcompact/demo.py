"""`postcompact demo`: the design chapter's worked example, a refactoring session, through the
running daemon.

A refactoring session reads src/utils/format.ts, tests/unit/format.test.ts, src/types/index.ts and
README.md (the 4-file session: all four come back), then also src/config/default.ts,
src/utils/validation.ts, CONTRIBUTING.md and .eslintrc.js (the 8-file session: only the 5 most
recent come back — not format.ts, the file being refactored). Re-reading format.ts and compacting
again brings it back first, the restored files following in their order (README.md, the last,
drops out). Real files in a temporary directory; the daemon does the reads.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

import grpc

from postcompact.v1 import postcompact_pb2 as pb
from postcompact.v1 import postcompact_pb2_grpc as pb_grpc

FIRST_FOUR = ["src/utils/format.ts", "tests/unit/format.test.ts", "src/types/index.ts", "README.md"]
NEXT_FOUR = ["src/config/default.ts", "src/utils/validation.ts", "CONTRIBUTING.md", ".eslintrc.js"]

FILES = {
    "src/utils/format.ts": """\
        import type { Money, DateInput } from "../types";

        /** Formats an amount of money for display, e.g. "$1,234.50". */
        export function formatCurrency(value: Money, locale = "en-US"): string {
          return new Intl.NumberFormat(locale, {
            style: "currency",
            currency: value.currency,
          }).format(value.amount);
        }

        /** Formats a date as YYYY-MM-DD. */
        export function formatDate(input: DateInput): string {
          const d = input instanceof Date ? input : new Date(input);
          return d.toISOString().slice(0, 10);
        }
        """,
    "tests/unit/format.test.ts": """\
        import { formatCurrency, formatDate } from "../../src/utils/format";

        test("formatCurrency", () => {
          expect(formatCurrency({ amount: 1234.5, currency: "USD" })).toBe("$1,234.50");
        });

        test("formatDate", () => {
          expect(formatDate("2024-03-01T12:00:00Z")).toBe("2024-03-01");
        });
        """,
    "src/types/index.ts": """\
        export interface Money {
          amount: number;
          currency: string;
        }

        export type DateInput = Date | string | number;
        """,
    "README.md": """\
        # format-utils

        Small, dependency-free formatting helpers for money and dates.

        Run the tests with `npm test`.
        """,
    "src/config/default.ts": """\
        export const defaultConfig = {
          locale: "en-US",
          currency: "USD",
          dateFormat: "YYYY-MM-DD",
        };
        """,
    "src/utils/validation.ts": """\
        export function isValidAmount(value: unknown): value is number {
          return typeof value === "number" && Number.isFinite(value);
        }
        """,
    "CONTRIBUTING.md": """\
        # Contributing

        1. Write a failing test first.
        2. Keep functions pure; no I/O in src/utils.
        """,
    ".eslintrc.js": """\
        module.exports = {
          root: true,
          extends: ["eslint:recommended"],
          rules: { "no-unused-vars": "error" },
        };
        """,
}

PREVIEW_LINES = 4
_WRAPPERS = ("<system-reminder>", "</system-reminder>")


def _outcome(o: pb.Outcome.ValueType) -> str:
    return pb.Outcome.Name(o).removeprefix("OUTCOME_").lower()


def _kind(k: pb.AttachmentKind.ValueType) -> str:
    return pb.AttachmentKind.Name(k).removeprefix("ATTACHMENT_KIND_").lower()


class Demo:
    def __init__(self, socket: Path, out: list[str] | None = None):
        self.channel = grpc.insecure_channel(f"unix://{socket}")
        self.stub = pb_grpc.PostcompactServiceStub(self.channel)
        self.root = Path(tempfile.mkdtemp(prefix="postcompact-demo-"))
        self._last_ms = 0
        self.out = out

    def say(self, line: str = "") -> None:
        if self.out is not None:
            self.out.append(line)
        print(line, flush=True)

    def close(self) -> None:
        self.channel.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def write_project(self) -> None:
        for rel, text in FILES.items():
            p = self.root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(textwrap.dedent(text))

    def open_session(self, label: str) -> str:
        sid = f"demo-{label}-{uuid.uuid4().hex[:8]}"
        # Claude Code's file rule, as in the chapter: the five most recently used, 50K tokens
        # (the default profile's own ranks the lines seen of up to 20 files by value per token,
        # docs/eval.md).
        rule = pb.RestorePolicy(
            max_files=5,
            file_token_budget=50_000,
            max_tokens_per_file=5_000,
            ranking=pb.FILE_RANKING_RECENCY,
        )
        req = pb.OpenSessionRequest(session_id=sid, cwd=str(self.root), policy=rule)
        self.stub.OpenSession(req)
        return sid

    def read(self, sid: str, rel: str, turn: int) -> None:
        # The default profile stores the read time: keep each read in a later millisecond so
        # the order is unambiguous (ties would still follow recency).
        while time.time_ns() // 1_000_000 <= self._last_ms:
            time.sleep(0.001)
        r = self.stub.ReadFile(pb.ReadFileRequest(session_id=sid, path=rel))
        self._last_ms = r.timestamp_ms
        self.say(f"  turn {turn:>2}  Read {rel:<28} {r.total_lines:>3} lines  ts={r.timestamp_ms}")

    def compact(self, sid: str, title: str) -> list[str]:
        r = self.stub.Compact(pb.CompactRequest(session_id=sid, kind=pb.COMPACT_KIND_FULL))
        self.say()
        self.say(f"  Compact #{r.compaction}: {title}")
        self.say(f"    {'rank':>4}  {'file':<28} {'decision':<20} {'tokens':>6}")
        for d in r.decisions:
            if d.subject != pb.SUBJECT_FILE:
                continue
            name = (
                os.path.relpath(d.name, self.root) if d.name.startswith(str(self.root)) else d.name
            )
            rank = str(d.rank) if d.rank else "-"
            self.say(f"    {rank:>4}  {name:<28} {_outcome(d.outcome):<20} {d.tokens:>6}")
        restored = [
            a.file.display_path or os.path.relpath(a.file.path, self.root)
            for a in r.attachments
            if a.WhichOneof("payload") == "file"
        ]
        self.say(f"  Restored (in order): {', '.join(restored)}")
        self.say()
        self.say("  Attachments that would be injected:")
        for a in r.attachments:
            self.say(f"    [{_kind(a.kind)}] {a.tokens} tokens")
            lines = [ln for ln in "\n".join(a.blocks).split("\n") if ln not in _WRAPPERS]
            for line in lines[:PREVIEW_LINES]:
                self.say(f"      | {line[:88]}")
            if len(lines) > PREVIEW_LINES:
                self.say(f"      | … ({len(lines) - PREVIEW_LINES} more lines)")
        return restored

    def run(self) -> int:
        self.write_project()
        self.say("postcompact demo — docs/profiles.md, a refactoring session")
        self.say(f"project: {self.root}")
        self.say()
        self.say("1) Four files read, then compaction: all four fit (5 files, 50K tokens).")
        sid = self.open_session("four")
        for i, rel in enumerate(FIRST_FOUR, 1):
            self.read(sid, rel, i)
        self.compact(sid, "the 4-file session")
        self.stub.CloseSession(pb.CloseSessionRequest(session_id=sid))

        self.say()
        self.say("2) Eight files read: only the 5 most recent come back — format.ts does not.")
        sid = self.open_session("eight")
        for i, rel in enumerate(FIRST_FOUR + NEXT_FOUR, 1):
            self.read(sid, rel, i if i <= 4 else i + 7)
        self.compact(sid, "the 8-file session")

        self.say()
        self.say(
            "3) Re-read src/utils/format.ts before the next compaction: it comes back first, "
            "the rest in their order."
        )
        self.read(sid, "src/utils/format.ts", 25)
        self.compact(sid, "after re-reading format.ts")
        self.stub.CloseSession(pb.CloseSessionRequest(session_id=sid))
        return 0


def run_demo(socket: Path) -> int:
    demo = Demo(socket)
    try:
        return demo.run()
    except grpc.RpcError as exc:
        code = exc.code() if hasattr(exc, "code") else None
        details = exc.details() if hasattr(exc, "details") else str(exc)
        print(f"postcompact demo: the daemon answered {code}: {details}")
        return 1
    finally:
        demo.close()
