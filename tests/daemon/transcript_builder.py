"""Claude Code transcripts written record by record, for tests (the fields the importer and
`postcompact eval` read): tool calls with their results, compactions."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

CWD = "/home/dev/proj"
_ids = itertools.count(1)


class Transcript:
    """A Claude Code transcript written record by record (the fields the importer reads)."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.t = 0

    def _add(self, record: dict[str, Any]) -> None:
        self.t += 1000
        sec = self.t // 1000
        record.update(
            uuid=f"u{next(_ids)}",
            sessionId="s-eval",
            cwd=CWD,
            version="2.1.300",
            timestamp=f"2026-01-01T00:{sec // 60:02d}:{sec % 60:02d}.000Z",
        )
        self.records.append(record)

    def call(
        self,
        name: str,
        inp: dict[str, Any],
        result: Any,
        *,
        error: bool = False,
        content: str = "ok",
    ) -> None:
        uid = f"toolu_{next(_ids)}"
        self._add(
            {
                "type": "assistant",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": uid, "name": name, "input": inp}],
                },
            }
        )
        block = {"type": "tool_result", "tool_use_id": uid, "content": content, "is_error": error}
        self._add(
            {
                "type": "user",
                "message": {"role": "user", "content": [block]},
                "toolUseResult": result,
            }
        )

    def read(
        self, rel: str, text: str, offset: int | None = None, limit: int | None = None
    ) -> None:
        lines = text.split("\n")
        first = offset or 1
        shown = lines[first - 1 : first - 1 + limit] if limit else lines[first - 1 :]
        inp: dict[str, Any] = {"file_path": f"{CWD}/{rel}"}
        if offset:
            inp["offset"] = offset
        if limit:
            inp["limit"] = limit
        file = {
            "filePath": f"{CWD}/{rel}",
            "content": "\n".join(shown),
            "numLines": len(shown),
            "startLine": first,
            "totalLines": len(lines),
        }
        self.call("Read", inp, {"type": "text", "file": file}, content=numbered(shown, first))

    def edit(
        self,
        rel: str,
        before: str,
        old: str,
        new: str,
        patch: list[dict[str, Any]] | None = None,
    ) -> None:
        """An Edit of `old` into `new` in `before`; `patch`: its structuredPatch hunks."""
        inp = {"file_path": f"{CWD}/{rel}", "old_string": old, "new_string": new}
        result: dict[str, Any] = {"filePath": f"{CWD}/{rel}", "originalFile": before}
        if patch is not None:
            result["structuredPatch"] = patch
        self.call("Edit", inp, result)

    def write(self, rel: str, text: str) -> None:
        inp = {"file_path": f"{CWD}/{rel}", "content": text}
        self.call("Write", inp, {"type": "create", "filePath": f"{CWD}/{rel}", "content": text})

    def bash(self) -> None:
        self.call("Bash", {"command": "true"}, {"stdout": "", "stderr": ""})

    def compact(self) -> None:
        self._add(
            {
                "type": "system",
                "subtype": "compact_boundary",
                "content": "Conversation compacted",
                "compactMetadata": {"trigger": "auto", "preTokens": 100000},
            }
        )
        self._add(
            {
                "type": "user",
                "isCompactSummary": True,
                "message": {"role": "user", "content": "This session is being continued..."},
            }
        )

    def save(self, path: Path) -> Path:
        path.write_text("".join(json.dumps(r) + "\n" for r in self.records))
        return path


def numbered(lines: list[str], first: int) -> str:
    """A Read's result as Claude Code returns it: each line after its number and an arrow."""
    return "\n".join(f"{n:>6}\u2192{line}" for n, line in enumerate(lines, start=first))
