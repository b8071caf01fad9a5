"""Claude Code transcripts (JSONL) into events (docs/transcripts.md).

A transcript is one JSON object a line. `parse` reads them all first: a line that is not a JSON
object (a bad or truncated line) is a `TranscriptError` naming its line, and nothing is
returned, so an import either sees the whole transcript or nothing of it.

The events are what postcompact's state is built from, in record order, each with the agent it
belongs to ("" for the main thread; a sidechain record's `agentId` otherwise) and its record's
time:

- a Read's result (`FileRead`: the range and the text read; `FileUnchanged` for the dedup stub;
  `FileReadFailed` for an error, which tells the replay's disk what it knows: missing, too large);
- a successful Edit, MultiEdit or Write (`FileWritten`, with the text after it when it can be
  known: a Write's content, an Edit applied to its `originalFile`; and the lines it added or
  changed when its `structuredPatch` has hunks);
- a file the harness saw change on disk (`edited_text_file`: `FileChanged`);
- a skill invoked by the Skill tool or by a slash command (`SkillInvoked`);
- the permission mode (`ModeChanged`) and the plan file (`PlanFile`);
- background tasks: shells and agents started in the background, stopped, finished, read
  (`TaskChanged`);
- catalogue announcements (`Announced`: deferred tools, agent types, MCP instructions, skill
  listing, from attachment records);
- a resumed process (`Resumed`: a `SessionStart:resume` hook record);
- a compaction (`Boundary`: the compact_boundary record, its preserved segment and the
  attachments Claude Code recorded after it, 2.1.92 on).
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from postcompact import failpoints
from postcompact.config import Config
from postcompact.state.model import MAX_ID_LEN, MAX_PATH_BYTES

__all__ = [
    "Announced",
    "Boundary",
    "Budget",
    "Event",
    "FileChanged",
    "FileRead",
    "FileReadFailed",
    "FileUnchanged",
    "FileWritten",
    "ModeChanged",
    "PlanFile",
    "PlanSlug",
    "Record",
    "RecordedItem",
    "Resumed",
    "ShellRan",
    "SkillInvoked",
    "TaskChanged",
    "Transcript",
    "TranscriptError",
    "parse",
]

MAX_LINE_BYTES = 64 * 1024 * 1024
# A line number, offset, count or line total a record may give (int32: no file has more lines,
# and every sum of two stays within the int64 the state database stores).
MAX_LINE_NUMBER = 2**31 - 1
# A size claim ("File content (3.1MB) exceeds ...") or a token count (4,300 digits would be
# Python's own refusal; 2**53 is far past any file and still exact).
MAX_CLAIM = 2**53
# The checks of the stop callback (deadline, cancel) and of the budgets: every this many records.
CHECK_EVERY = 1024
_COUNT_STEP = 1 << 20


class TranscriptError(ValueError):
    """The transcript cannot be read; `line` is the 1-based line at fault (0: the whole), `field`
    the value at fault. `reason` is what the import answers: BAD_TRANSCRIPT for a bad value, a
    live call's own reason for a value over its limit (PATH_TOO_LONG, BAD_AGENT_ID), and
    TRANSCRIPT_TOO_LARGE, with the `limit` it passed, for a transcript over its budget."""

    def __init__(
        self,
        line: int,
        message: str,
        *,
        field: str = "",
        reason: str = "BAD_TRANSCRIPT",
        limit: str = "",
    ) -> None:
        where = f"line {line}: " if line else ""
        what = f"{field}: " if field else ""
        super().__init__(f"{where}{what}{message}")
        self.line = line
        self.message = message
        self.field = field
        self.reason = reason
        self.limit = limit


@dataclass(frozen=True, slots=True)
class Budget:
    """What one transcript may make the parser and the builder do, refused by name
    (TRANSCRIPT_TOO_LARGE naming the limit) before the work where the count is known first
    (records), else as soon as it is passed (events, boundaries): the daemon's limits."""

    max_records: int
    max_events: int
    max_boundaries: int

    @classmethod
    def of(cls, config: Config) -> Budget:
        return cls(
            config.max_transcript_records,
            config.max_transcript_events,
            config.max_transcript_boundaries,
        )


def too_large(line: int, what: str, limit: str, value: int) -> TranscriptError:
    return TranscriptError(
        line,
        f"the transcript has more than {value} {what} (limits.{limit})",
        reason="TRANSCRIPT_TOO_LARGE",
        limit=limit,
    )


Stop = Callable[[], None]  # raises when the work must stop (the caller's deadline, a cancel)


def no_stop() -> None:
    return None


def _has_surrogate(value: str) -> bool:
    if value.isascii():
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def check_text(value: str, line: int, field: str) -> str:
    """`value`, which goes into a string of the state (an id, a name, a path): refused when it
    holds a lone surrogate (no UTF-8 spells it: the answer and the database cannot hold it)."""
    if _has_surrogate(value):
        raise TranscriptError(line, "holds a lone surrogate (not valid Unicode)", field=field)
    return value


def check_path(value: str, line: int, field: str) -> str:
    """A path a record names: no NUL, no lone surrogate, within PATH_MAX as OpenSession holds
    every path (an import must never store what the next start would quarantine)."""
    if "\x00" in value:
        raise TranscriptError(line, "holds a NUL byte", field=field)
    check_text(value, line, field)
    size = len(value.encode("utf-8"))
    if size > MAX_PATH_BYTES:
        raise TranscriptError(
            line,
            f"is {size} bytes, over the {MAX_PATH_BYTES}-byte path limit (PATH_MAX)",
            field=field,
            reason="PATH_TOO_LONG",
            limit=str(MAX_PATH_BYTES),
        )
    return value


def check_id_text(value: str, line: int, field: str) -> str:
    """An id the state keys by (an agent id): as a live call must send it (`check_id`)."""
    check_text(value, line, field)
    if len(value) > MAX_ID_LEN or any(ord(c) < 0x20 or c == "\x7f" for c in value):
        raise TranscriptError(
            line,
            f"is not an id (at most {MAX_ID_LEN} characters, none a control)",
            field=field,
            reason="BAD_AGENT_ID",
        )
    return value


@dataclass(frozen=True, slots=True)
class Record:
    line: int
    data: Mapping[str, Any]

    @property
    def type(self) -> str:
        t = self.data.get("type")
        return t if isinstance(t, str) else ""

    @property
    def uuid(self) -> str:
        u = self.data.get("uuid")
        return u if isinstance(u, str) else ""

    @property
    def agent(self) -> str:
        """ "" for the main thread; the sidechain's agent id (or "sidechain") otherwise."""
        if self.data.get("isSidechain") is True:
            aid = self.data.get("agentId")
            return aid if isinstance(aid, str) and aid else "sidechain"
        return ""

    @property
    def time_ms(self) -> int:
        return _time_ms(self.data.get("timestamp"))


def _time_ms(value: Any) -> int:
    if not isinstance(value, str) or not value:
        return 0
    try:
        t = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return 0
    if t.tzinfo is None:
        t = t.replace(tzinfo=datetime.UTC)
    return int(t.timestamp() * 1000)


# --- events -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Event:
    line: int
    time_ms: int
    agent: str


@dataclass(frozen=True, slots=True)
class FileRead(Event):
    path: str
    offset: int | None  # as requested (None: the default, line 1)
    limit: int | None
    content: str  # the text of the range read, without numbering
    start_line: int
    num_lines: int
    total_lines: int


@dataclass(frozen=True, slots=True)
class FileUnchanged(Event):
    path: str
    offset: int | None
    limit: int | None


@dataclass(frozen=True, slots=True)
class FileReadFailed(Event):
    path: str
    missing: bool  # "File does not exist"
    tokens: int | None  # "File content (N tokens) exceeds maximum allowed tokens"
    size_bytes: int | None  # "File content (3.1MB) exceeds maximum allowed size"


@dataclass(frozen=True, slots=True)
class Edit:
    old: str
    new: str
    replace_all: bool


@dataclass(frozen=True, slots=True)
class FileWritten(Event):
    path: str
    tool: str  # "Edit", "MultiEdit", "Write", "NotebookEdit"
    content: str | None  # the whole text after the write, when the record tells it
    original: str | None  # the whole text before it, when the record tells it
    edits: tuple[Edit, ...] = ()
    # The lines of `content` it added or changed, from its hunks (`patch_lines`); None: the
    # record has none (a new file's Write), () : it only deleted lines.
    changed: tuple[tuple[int, int], ...] | None = None


@dataclass(frozen=True, slots=True)
class FileChanged(Event):
    path: str


@dataclass(frozen=True, slots=True)
class ShellRan(Event):
    """A shell command finished (its result's time): it may have changed files unseen."""


@dataclass(frozen=True, slots=True)
class SkillInvoked(Event):
    name: str
    path: str
    content: str


@dataclass(frozen=True, slots=True)
class ModeChanged(Event):
    mode: str  # Claude Code's permission mode: "plan", "default", "acceptEdits", ...


@dataclass(frozen=True, slots=True)
class PlanFile(Event):
    path: str


@dataclass(frozen=True, slots=True)
class PlanSlug(Event):
    """The session's plan-file slug (records carry it): the plan file is
    `~/.claude/plans/<slug>.md` from here on."""

    slug: str


@dataclass(frozen=True, slots=True)
class TaskChanged(Event):
    task_id: str
    task_type: str  # "local_bash" or "local_agent"
    status: str | None = None  # "running", "completed", "failed", "killed"
    description: str | None = None
    command: str | None = None
    output_file_path: str | None = None
    retrieved: bool | None = None
    summary: str | None = None


@dataclass(frozen=True, slots=True)
class Announced(Event):
    kind: str  # "deferred_tools", "agent_types", "mcp", "skill_listing"
    added: tuple[str, ...] = ()
    added_lines: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Resumed(Event):
    pass


@dataclass(frozen=True, slots=True)
class RecordedItem:
    kind: str  # "file" or "reference"
    path: str


@dataclass(frozen=True, slots=True)
class Boundary(Event):
    uuid: str
    trigger: str
    preserved: tuple[Record, ...]  # the kept messages, in order
    recorded_types: tuple[str, ...]  # attachment types Claude Code recorded after it
    recorded: tuple[RecordedItem, ...]  # its files and too-large notes, in order

    @property
    def has_recorded_restore(self) -> bool:
        return bool(self.recorded_types)


@dataclass(slots=True)
class Transcript:
    records: list[Record]
    events: Sequence[Event]  # a list; the daemon's import: parser_process.Events
    cwd: str  # the working directory of the first record that names one
    session_id: str
    slug: str  # the plan-file slug, when the records carry it
    versions: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # Every file path the events name, in first-seen order, when known already (the parser
    # process sends it: session.transcript_paths); None: found from the events.
    touched: Sequence[str] | None = None

    @property
    def boundaries(self) -> list[Boundary]:
        return [e for e in self.events if isinstance(e, Boundary)]


# --- reading ----------------------------------------------------------------------------------


def check_lines(data: bytes | memoryview, budget: Budget) -> None:
    """TRANSCRIPT_TOO_LARGE when `data` has more lines (blank ones too) than the budget's
    records: counted before anything is split or decoded (10**7 tiny records would take
    gigabytes as dicts, 32 MiB of newlines a gigabyte as empty lines), `_COUNT_STEP` bytes at a
    time (one `bytes.count` holds the GIL throughout: 43 ms for 30 MB here)."""
    lines = 0
    view = memoryview(data)
    for at in range(0, len(view), _COUNT_STEP):
        lines += bytes(view[at : at + _COUNT_STEP]).count(b"\n")
        if lines > budget.max_records:
            raise too_large(0, "lines", "max_transcript_records", budget.max_records)


def _records(data: bytes, budget: Budget, stop: Stop) -> list[Record]:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    check_lines(data, budget)
    out: list[Record] = []
    lines = data.split(b"\n")
    for n, raw in enumerate(lines, start=1):
        if n % CHECK_EVERY == 0:
            stop()
        if not raw.strip():
            continue
        if len(raw) > MAX_LINE_BYTES:
            raise TranscriptError(n, f"the line is over {MAX_LINE_BYTES} bytes")
        failpoints.hit("import.decode")
        try:
            value = json.loads(raw)
        except UnicodeDecodeError as exc:
            raise TranscriptError(n, f"not UTF-8 (byte {exc.start})") from None
        except (ValueError, RecursionError) as exc:
            last = n == len(lines) or (n == len(lines) - 1 and not lines[-1])
            what = "truncated" if last and not raw.rstrip().endswith(b"}") else "not valid JSON"
            raise TranscriptError(n, f"{what}: {exc}") from None
        if not isinstance(value, dict):
            raise TranscriptError(n, f"a record is a JSON object, not {type(value).__name__}")
        out.append(Record(n, value))
    if not out:
        raise TranscriptError(0, "the transcript holds no records")
    return out


def _check_record(r: Record) -> None:
    """The values of `r` that become ids, names and paths of the state, or whose type the
    events and the kept messages rely on: a bad one is refused naming its line and field."""
    d, line = r.data, r.line
    for key in ("uuid", "parentUuid", "sessionId", "slug", "version", "type", "subtype"):
        v = d.get(key)
        if isinstance(v, str):
            check_text(v, line, key)
    cwd = d.get("cwd")
    if isinstance(cwd, str):
        check_path(cwd, line, "cwd")
    slug = d.get("slug")
    if isinstance(slug, str) and ("/" in slug or "\\" in slug or "\x00" in slug or len(slug) > 255):
        raise TranscriptError(line, "is not a file name", field="slug")
    if d.get("isSidechain") is True and isinstance(d.get("agentId"), str):
        check_id_text(d["agentId"], line, "agentId")
    msg = d.get("message")
    blocks = msg.get("content") if isinstance(msg, dict) else None
    for i, b in enumerate(blocks if isinstance(blocks, list) else []):
        if not isinstance(b, dict):
            continue
        where = f"message.content[{i}]"
        kind = b.get("type")
        if kind == "text" and "text" in b and not isinstance(b["text"], str):
            raise TranscriptError(line, "is not a string", field=f"{where}.text")
        for key in ("id", "name", "tool_use_id"):
            v = b.get(key)
            if isinstance(v, str):
                check_text(v, line, f"{where}.{key}")
        if kind == "tool_result":
            content = b.get("content")
            for j, x in enumerate(content if isinstance(content, list) else []):
                if isinstance(x, dict) and "text" in x and not isinstance(x["text"], str):
                    raise TranscriptError(
                        line, "is not a string", field=f"{where}.content[{j}].text"
                    )
    a = d.get("attachment")
    if isinstance(a, dict):
        _check_attachment(a, line)


def _check_attachment(a: Mapping[str, Any], line: int) -> None:
    for key in ("filename", "planFilePath"):
        v = a.get(key)
        if isinstance(v, str):
            check_path(v, line, f"attachment.{key}")
    for key in ("addedNames", "addedTypes", "removedNames", "removedTypes", "names"):
        values = a.get(key)
        for i, v in enumerate(values if isinstance(values, list) else []):
            if isinstance(v, str):
                check_text(v, line, f"attachment.{key}[{i}]")
    if a.get("type") == "invoked_skills":
        skills = a.get("skills")
        if skills is not None and not isinstance(skills, list):
            raise TranscriptError(line, "is not a list", field="attachment.skills")
        for i, sk in enumerate(skills or []):
            if not isinstance(sk, dict):
                raise TranscriptError(line, "is not an object", field=f"attachment.skills[{i}]")
            for key in ("name", "path", "content"):
                v = sk.get(key)
                if v is not None and not isinstance(v, str):
                    raise TranscriptError(
                        line, "is not a string", field=f"attachment.skills[{i}].{key}"
                    )
                if key != "content" and isinstance(v, str):
                    check_text(v, line, f"attachment.skills[{i}].{key}")


def _content(message: Any) -> list[Any]:
    if not isinstance(message, dict):
        return []
    c = message.get("content")
    if isinstance(c, list):
        return c
    if isinstance(c, str):
        return [{"type": "text", "text": c}]
    return []


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            t
            for b in content
            if isinstance(b, dict)
            and b.get("type") == "text"
            and isinstance(t := b.get("text", ""), str)
        )
    return ""


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _line_number(value: Any, line: int, field: str, minimum: int = 0) -> int | None:
    """An offset, count or line total a record gives: None when absent (or not an integer, as
    before), refused when out of [minimum, MAX_LINE_NUMBER]."""
    n = _int(value)
    if n is not None and not minimum <= n <= MAX_LINE_NUMBER:
        shown = str(n) if abs(n) <= 2**64 else f"{'-' if n < 0 else ''}about 2**{n.bit_length()}"
        raise TranscriptError(line, f"is {shown}, not in {minimum}..{MAX_LINE_NUMBER}", field=field)
    return n


# The numbers are caught loosely and checked strictly (`_claim`): "(1.2.3MB)" or a 5,000-digit
# count is a bad value named as such, never a float or int conversion failing.
_TOKENS_OVER = re.compile(r"File content \((\S+) tokens\) exceeds maximum allowed tokens")
_SIZE_OVER = re.compile(r"File content \(([^\s()]+?)\s*(B|KB|MB|GB)\) exceeds maximum allowed size")
_NUMBER = re.compile(r"\A\d{1,16}(?:\.\d{1,16})?\Z")
_UNITS = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3}
_BG_SHELL = re.compile(r"running in background with ID: (\w+)")
# The sentence ends with a full stop after the path (`...tasks/b1.output. You will be...`).
_BG_OUTPUT = re.compile(r"Output is being written to: (\S+?)\.?(?:\s|$)")
_TASK_NOTE = re.compile(r"<task-notification>(.*?)</task-notification>", re.DOTALL)
_COMMAND = re.compile(r"<command-name>/?([^<]+)</command-name>")
_SKILL_BASE = re.compile(r"\ABase directory for this skill: ([^\n]+)")
_TASK_STATUSES = {"running", "completed", "failed", "killed"}
# Delta attachment type -> (Announced.kind, its added, added-lines and removed keys).
_DELTAS = {
    "deferred_tools_delta": ("deferred_tools", "addedNames", "addedLines", "removedNames"),
    "agent_listing_delta": ("agent_types", "addedTypes", "addedLines", "removedTypes"),
    "mcp_instructions_delta": ("mcp", "addedNames", "addedBlocks", "removedNames"),
}


def _claim(text: str, unit: int, line: int, field: str) -> int:
    """A size or token count a refused Read's text claims, in bytes (or tokens): a decimal
    number, at most MAX_CLAIM once scaled; anything else is refused naming the field."""
    if not _NUMBER.match(text):
        raise TranscriptError(
            line, f"{text[:40]!r} is not a decimal number (at most 16 digits)", field=field
        )
    whole, _, frac = text.partition(".")
    scale: int = 10 ** len(frac)
    value = (int(whole) * scale + int(frac or "0")) * unit // scale  # exact: no float
    if value > MAX_CLAIM:
        raise TranscriptError(line, f"{text} claims over {MAX_CLAIM} bytes", field=field)
    return value


def _tag(text: str, name: str) -> str | None:
    m = re.search(rf"<{name}>(.*?)</{name}>", text, re.DOTALL)
    return m.group(1).strip() if m else None


def patch_lines(patch: Any) -> tuple[tuple[int, int], ...] | None:
    """The lines of the new text an Edit or Write added or changed, as ranges, from its
    `structuredPatch` hunks (`{newStart, lines: [" ctx", "-old", "+new"]}`): each hunk's " " and
    "+" lines counted from `newStart`, the "+" ones marked. A hunk that only deletes marks no
    line (what the write left there was seen already). None when the record has no hunks or
    they are not of that shape."""
    if not isinstance(patch, list) or not patch:
        return None
    marked: list[tuple[int, int]] = []
    for hunk in patch:
        start = _int(hunk.get("newStart")) if isinstance(hunk, dict) else None
        if start is not None and not 0 <= start <= MAX_LINE_NUMBER:
            return None  # not hunks of a text: the diff decides, as for any other shape
        lines = hunk.get("lines") if isinstance(hunk, dict) else None
        if start is None or not isinstance(lines, list):
            return None
        at = start
        for line in lines:
            tag = line[:1] if isinstance(line, str) else ""
            if tag == "+":
                if marked and marked[-1][1] == at - 1:
                    marked[-1] = (marked[-1][0], at)
                else:
                    marked.append((at, at))
                at += 1
            elif tag == " ":
                at += 1
            # "-" lines and "\\ No newline at end of file" are no line of the new text.
    return tuple(marked)


def apply_edits(text: str, edits: Iterable[Edit]) -> str | None:
    """`text` after `edits` (each replaces its first occurrence, or all), None when one of them
    does not apply (the old text is not there) or the text would pass MAX_LINE_BYTES."""
    for e in edits:
        if e.old == "":
            text = e.new + text if text == "" else text
            continue
        if e.old not in text:
            return None
        times = text.count(e.old) if e.replace_all else 1
        if len(text) + times * (len(e.new) - len(e.old)) > MAX_LINE_BYTES:
            return None  # edits that multiply a text past any line's size: not a file's text
        text = text.replace(e.old, e.new) if e.replace_all else text.replace(e.old, e.new, 1)
    return text


class _Builder:
    def __init__(self, records: list[Record], budget: Budget) -> None:
        self.records = records
        self.budget = budget
        self.boundaries = 0
        self.events: list[Event] = []
        self.uses: dict[str, tuple[str, Mapping[str, Any], Record]] = {}
        self.warnings: list[str] = []
        self.by_uuid = {r.uuid: r for r in records if r.uuid}
        self.done_results: set[str] = set()
        self.pending_command: tuple[str, Record] | None = None
        self.resumed_at = -(10**15)
        self.slugs: dict[str, str] = {}
        self.modes: dict[str, str] = {}  # per agent, the last mode recorded

    def add(self, event: Event) -> None:
        if len(self.events) >= self.budget.max_events:
            raise too_large(event.line, "events", "max_transcript_events", self.budget.max_events)
        _check_event(event)
        self.events.append(event)

    def warn(self, line: int, message: str) -> None:
        if len(self.warnings) < 200:
            self.warnings.append(f"line {line}: {message}")

    # --- records ---

    def slug(self, r: Record) -> None:
        slug = r.data.get("slug")
        if isinstance(slug, str) and slug and slug != self.slugs.get(r.agent):
            self.slugs[r.agent] = slug
            self.add(PlanSlug(r.line, r.time_ms, r.agent, slug))

    def record(self, r: Record) -> None:
        self.slug(r)
        t = r.type
        if t == "assistant":
            for block in _content(r.data.get("message")):
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    uid, name = block.get("id"), block.get("name")  # checked (_check_record)
                    inp = block.get("input")
                    if isinstance(uid, str) and isinstance(name, str) and isinstance(inp, dict):
                        self.uses[uid] = (name, inp, r)
        elif t == "user":
            # Today's Claude Code records the mode on each prompt (`permissionMode`), older ones
            # in `permission-mode` records: a change either way is the agent's mode from then.
            self.mode(r)
            self.user(r)
        elif t == "attachment":
            self.attachment(r)
        elif t == "permission-mode":
            self.mode(r)

    def mode(self, r: Record) -> None:
        mode = _str(r.data.get("permissionMode"))
        if mode and mode != self.modes.get(r.agent):
            self.modes[r.agent] = mode
            self.add(ModeChanged(r.line, r.time_ms, r.agent, mode))

    def user(self, r: Record) -> None:
        msg = r.data.get("message")
        blocks = _content(msg)
        tur = r.data.get("toolUseResult")
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                uid = block.get("tool_use_id")
                if not isinstance(uid, str) or uid in self.done_results:
                    continue
                self.done_results.add(uid)
                use = self.uses.get(uid)
                if use is None:
                    continue
                self.tool_result(r, use[0], use[1], block, tur)
            elif block.get("type") == "text":
                self.user_text(r, block.get("text", ""))

    def user_text(self, r: Record, text: Any) -> None:
        if not isinstance(text, str):
            return
        if r.data.get("isMeta") is True:
            source = _str(r.data.get("sourceToolUseID"))
            name = None
            if source is not None and source in self.uses:
                use = self.uses[source]
                if use[0] == "Skill":
                    name = _str(use[1].get("skill")) or _str(use[1].get("command"))
            elif self.pending_command is not None:
                name = self.pending_command[0]
            self.pending_command = None
            if name:
                base = _SKILL_BASE.match(text)
                cwd = _str(r.data.get("cwd")) or ""
                path = _skill_path(name, base.group(1).strip(), cwd) if base else name
                self.add(SkillInvoked(r.line, r.time_ms, r.agent, name, path, text))
            return
        m = _COMMAND.search(text)
        self.pending_command = (m.group(1).strip(), r) if m else None
        for note in _TASK_NOTE.findall(text):
            task_id = _tag(note, "task-id")
            status = _tag(note, "status")
            if task_id and status in _TASK_STATUSES:
                self.add(
                    TaskChanged(
                        r.line,
                        r.time_ms,
                        r.agent,
                        task_id,
                        "",
                        status=status,
                        summary=_tag(note, "summary"),
                        output_file_path=_tag(note, "output-file"),
                    )
                )

    def tool_result(
        self,
        r: Record,
        name: str,
        inp: Mapping[str, Any],
        block: Mapping[str, Any],
        tur: Any,
    ) -> None:
        error = block.get("is_error") is True or isinstance(tur, str)
        text = _text_of(block.get("content"))
        agent, at, line = r.agent, r.time_ms, r.line
        if name == "Read":
            path = _str(inp.get("file_path"))
            if path is None:
                return
            check_path(path, line, "input.file_path")
            offset = _line_number(inp.get("offset"), line, "input.offset")
            limit = _line_number(inp.get("limit"), line, "input.limit")
            if error:
                blob = text if text else (tur if isinstance(tur, str) else "")
                tokens = _TOKENS_OVER.search(blob)
                size = _SIZE_OVER.search(blob)
                missing = "File does not exist" in blob
                if missing or tokens or size:
                    where = "tool_result content"
                    size_bytes = (
                        _claim(size.group(1), _UNITS[size.group(2)], line, f"{where} (size)")
                        if size
                        else None
                    )
                    count = (
                        _claim(tokens.group(1), 1, line, f"{where} (tokens)") if tokens else None
                    )
                    self.add(FileReadFailed(line, at, agent, path, missing, count, size_bytes))
                return
            if not isinstance(tur, dict):
                return
            kind = tur.get("type")
            if kind == "file_unchanged":
                self.add(FileUnchanged(line, at, agent, path, offset, limit))
                return
            f = tur.get("file")
            if kind != "text" or not isinstance(f, dict) or not isinstance(f.get("content"), str):
                return  # images, PDFs, notebooks: not kept as file state
            start = _line_number(f.get("startLine"), line, "toolUseResult.file.startLine") or 1
            content = f["content"]
            num = _line_number(f.get("numLines"), line, "toolUseResult.file.numLines")
            total = _line_number(f.get("totalLines"), line, "toolUseResult.file.totalLines")
            if num is None:
                num = content.count("\n") + 1 if content else 0
            self.add(
                FileRead(
                    line,
                    at,
                    agent,
                    path,
                    offset,
                    limit,
                    content,
                    start,
                    num,
                    total if total is not None else start + num - 1,
                )
            )
        elif name in ("Edit", "MultiEdit", "Write", "NotebookEdit"):
            if error:
                return
            path = _str(inp.get("file_path")) or _str(inp.get("notebook_path"))
            if path is None:
                return
            t = tur if isinstance(tur, dict) else {}
            original = _str(t.get("originalFile"))
            changed = patch_lines(t.get("structuredPatch"))
            if name == "Write":
                content = _str(inp.get("content"))
                if content is None:
                    content = _str(t.get("content"))
                self.add(FileWritten(line, at, agent, path, name, content, original, (), changed))
            elif name == "NotebookEdit":
                self.add(FileWritten(line, at, agent, path, name, None, original))
            else:
                raw = inp.get("edits") if name == "MultiEdit" else [inp]
                edits = tuple(
                    Edit(
                        _str(e.get("old_string")) or "",
                        _str(e.get("new_string")) or "",
                        e.get("replace_all") is True,
                    )
                    for e in (raw if isinstance(raw, list) else [])
                    if isinstance(e, dict)
                )
                after = apply_edits(original, edits) if original is not None else None
                self.add(FileWritten(line, at, agent, path, name, after, original, edits, changed))
        elif name == "Skill":
            pass  # the skill's text comes in the isMeta record that follows (user_text)
        elif name in ("Bash", "PowerShell") and inp.get("run_in_background") is not True:
            self.add(ShellRan(line, at, agent))
        elif name in ("Bash", "PowerShell"):
            t = tur if isinstance(tur, dict) else {}
            task_id = _str(t.get("backgroundTaskId"))
            m = _BG_SHELL.search(text)
            if task_id is None and m:
                task_id = m.group(1)
            if task_id and not error:
                out = _BG_OUTPUT.search(text)
                self.add(
                    TaskChanged(
                        line,
                        at,
                        agent,
                        task_id,
                        "local_bash",
                        status="running",
                        description=_str(inp.get("description")) or "",
                        command=_str(inp.get("command")) or "",
                        output_file_path=out.group(1) if out else "",
                    )
                )
        elif name in ("Agent", "Task") and isinstance(tur, dict) and not error:
            if tur.get("status") == "async_launched" or tur.get("isAsync") is True:
                task_id = _str(tur.get("agentId"))
                if task_id:
                    self.add(
                        TaskChanged(
                            line,
                            at,
                            agent,
                            task_id,
                            "local_agent",
                            status="running",
                            description=_str(tur.get("description"))
                            or _str(inp.get("description"))
                            or "",
                            output_file_path=_str(tur.get("outputFile")) or "",
                        )
                    )
        elif name in ("TaskOutput", "BashOutput", "AgentOutputTool") and isinstance(tur, dict):
            task = tur.get("task")
            if isinstance(task, dict) and isinstance(task.get("task_id"), str):
                status = _str(task.get("status"))
                done = status in ("completed", "failed", "killed")
                self.add(
                    TaskChanged(
                        line,
                        at,
                        agent,
                        task["task_id"],
                        _str(task.get("task_type")) or "",
                        status=status if status in _TASK_STATUSES else None,
                        description=_str(task.get("description")),
                        retrieved=True if done else None,
                    )
                )
        elif name in ("TaskStop", "KillShell", "KillBash") and isinstance(tur, dict) and not error:
            task_id = (
                _str(tur.get("task_id")) or _str(inp.get("task_id")) or _str(inp.get("shell_id"))
            )
            if task_id:
                self.add(
                    TaskChanged(
                        line,
                        at,
                        agent,
                        task_id,
                        _str(tur.get("task_type")) or "",
                        status="killed",
                    )
                )
        elif name == "ExitPlanMode" and isinstance(tur, dict) and not error:
            plan = _str(tur.get("filePath"))
            if plan:
                self.add(PlanFile(line, at, agent, plan))

    def attachment(self, r: Record) -> None:
        a = r.data.get("attachment")
        if not isinstance(a, dict):
            return
        kind = a.get("type")
        agent, at, line = r.agent, r.time_ms, r.line
        if kind == "edited_text_file":
            path = _str(a.get("filename"))
            if path:
                self.add(FileChanged(line, at, agent, path))
        elif kind in ("plan_mode", "plan_mode_exit", "plan_mode_reentry", "plan_file_reference"):
            path = _str(a.get("planFilePath"))
            if path:
                self.add(PlanFile(line, at, agent, path))
        elif isinstance(kind, str) and kind in _DELTAS:
            what, added, added_lines, removed = _DELTAS[kind]
            self.add(
                Announced(
                    line,
                    at,
                    agent,
                    what,
                    _strs(a.get(added)),
                    _strs(a.get(added_lines)),
                    _strs(a.get(removed)),
                )
            )
        elif kind == "skill_listing":
            listed = _skill_entries(_str(a.get("content")) or "", _strs(a.get("names")))
            self.add(Announced(line, at, agent, "skill_listing", (), listed, ()))
        elif kind in ("hook_success", "hook_additional_context", "hook_system_message"):
            hook = _str(a.get("hookName")) or ""
            # One resume writes a record per hook: count them once.
            if hook.startswith("SessionStart:resume") and at - self.resumed_at > 60_000:
                self.resumed_at = at
                self.add(Resumed(line, at, agent))

    # --- boundaries ---

    def preserved_uuids(self, meta: Mapping[str, Any]) -> list[str]:
        """The kept records' uuids, in order: `preservedMessages` when recorded, else the
        `preservedSegment` chain walked from its tail back to its head by `parentUuid`."""
        kept = meta.get("preservedMessages")
        if isinstance(kept, dict):
            # Each uuid once: a list naming one record 1,000,000 times keeps it once.
            return list(
                dict.fromkeys(u for u in _strs(kept.get("allUuids") or kept.get("uuids")) if u)
            )
        seg = meta.get("preservedSegment")
        if not isinstance(seg, dict):
            return []
        head, tail = _str(seg.get("headUuid")), _str(seg.get("tailUuid"))
        chain: dict[str, None] = {}
        at = tail
        while at and at in self.by_uuid:
            if at in chain:  # a parentUuid cycle: the walk would never reach the head
                break
            chain[at] = None
            if at == head:
                return list(chain)[::-1]
            at = _str(self.by_uuid[at].data.get("parentUuid"))
        return [u for u in dict.fromkeys((head, tail)) if u]

    def boundary(self, index: int, r: Record) -> set[str]:
        """The Boundary event for records[index]; returns the uuids it consumed (the preserved
        records and the restoration Claude Code recorded), which the caller then skips."""
        self.boundaries += 1
        if self.boundaries > self.budget.max_boundaries:
            limit = self.budget.max_boundaries
            raise too_large(r.line, "compactions", "max_transcript_boundaries", limit)
        meta = r.data.get("compactMetadata")
        meta = meta if isinstance(meta, dict) else {}
        uuids = self.preserved_uuids(meta)
        wanted = set(uuids)
        preserved = tuple(self.by_uuid[u] for u in uuids if u in self.by_uuid)
        for kept in preserved:  # they become the kept messages of the pipeline's request
            _check_record(kept)
        # Claude Code's restoration follows the summary (and the preserved records written
        # after it): attachment records up to the first assistant record or user prompt.
        types: list[str] = []
        recorded: list[RecordedItem] = []
        consumed: set[str] = set()
        for k in range(index + 1, len(self.records)):  # no copy of the tail per boundary
            later = self.records[k]
            if later.uuid in wanted:
                continue
            if later.type == "user" and later.data.get("isCompactSummary") is True:
                continue
            if later.type == "attachment":
                a = later.data.get("attachment")
                kind = a.get("type") if isinstance(a, dict) else None
                if isinstance(kind, str):
                    types.append(kind)
                    path = _str(a.get("filename")) if isinstance(a, dict) else None
                    if kind == "file" and path:
                        recorded.append(RecordedItem("file", path))
                    elif kind == "compact_file_reference" and path:
                        recorded.append(RecordedItem("reference", path))
                consumed.add(later.uuid)
                continue
            if later.type == "assistant":
                break
            if later.type == "user" and not _is_meta_user(later):
                break
            if later.type == "system" and later.data.get("subtype") == "compact_boundary":
                break
        trigger = check_text(_str(meta.get("trigger")) or "auto", r.line, "compactMetadata.trigger")
        self.add(
            Boundary(
                r.line,
                r.time_ms,
                r.agent,
                r.uuid,
                trigger,
                preserved,
                tuple(types),
                tuple(recorded),
            )
        )
        return consumed


# Event fields that are file or skill text (kept as bytes, lone surrogates and all, as read);
# every other string of an event becomes a string of the state and is checked (`_check_event`).
_TEXT_FIELDS = frozenset({"content", "original", "edits", "preserved"})
_PATH_FIELDS = frozenset({"path", "output_file_path"})
_CHECKED: dict[type, tuple[str, ...]] = {}


def _check_event(e: Event) -> None:
    names = _CHECKED.get(type(e))
    if names is None:
        names = tuple(f.name for f in fields(e) if f.name not in _TEXT_FIELDS)
        _CHECKED[type(e)] = names
    for name in names:
        v = getattr(e, name)
        if isinstance(v, str):
            if name in _PATH_FIELDS:
                check_path(v, e.line, name)
            else:
                check_text(v, e.line, name)
        elif isinstance(v, tuple):
            for x in v:
                if isinstance(x, str):
                    check_text(x, e.line, name)
                elif isinstance(x, RecordedItem):
                    check_path(x.path, e.line, f"{name}[].filename")
    if isinstance(e, TaskChanged) and not e.task_id:
        raise TranscriptError(e.line, "is empty", field="task_id")


def _is_meta_user(r: Record) -> bool:
    """A user record that is not a prompt: tool results, meta and local-command records."""
    if r.data.get("isMeta") is True:
        return True
    blocks = _content(r.data.get("message"))
    if blocks and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks):
        return True
    text = _text_of(
        r.data.get("message", {}).get("content") if isinstance(r.data.get("message"), dict) else ""
    )
    return text.startswith(("<local-command", "<command-name>", "<command-message>"))


_HOME_LIKE = re.compile(r"\A(?:/home/[^/]+|/root|/Users/[^/]+|[A-Za-z]:\\Users\\[^\\]+)\Z")


def _skill_path(name: str, base: str, cwd: str) -> str:
    """A skill's path as Claude Code names it in `invoked_skills` (`{source}:{name}`): a skill
    of a `.claude/skills` folder in the project (its cwd or above) is `projectSettings:{name}`,
    one of the user's home `userSettings:{name}`; any other (a plugin's) is its SKILL.md."""
    for sep in ("/", "\\"):
        marker = f"{sep}.claude{sep}skills{sep}"
        if marker in base:
            owner = base[: base.index(marker)]
            if _HOME_LIKE.match(owner):
                return f"userSettings:{name}"
            if cwd and (cwd == owner or cwd.startswith(owner + sep)):
                return f"projectSettings:{name}"
    return f"{base}/SKILL.md"


def _skill_entries(content: str, names: tuple[str, ...]) -> tuple[str, ...]:
    """The `- {name}: {description}` entries of a skill listing. A description may run over
    several lines (Claude Code 2.1.328's own skills do), so an entry goes on to the line that
    starts the next: `- {name}` of one of the record's `names`, or, when it has none, any line
    starting with `- `."""
    heads = {f"- {n}" for n in names}

    def starts(line: str) -> bool:
        if not heads:
            return line.startswith("- ")
        # A name may hold a colon itself (`plugin:skill`).
        return any(line == h or line.startswith(h + ":") for h in heads)

    entries: list[str] = []
    for line in content.split("\n"):
        if starts(line):
            entries.append(line)
        elif entries:
            entries[-1] += "\n" + line
    return tuple(entries)


def _strs(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(v for v in value if isinstance(v, str))


def _first(records: Sequence[Record], key: str) -> str:
    for r in records:
        v = r.data.get(key)
        if isinstance(v, str) and v:
            return v
    return ""


def parse(data: bytes, budget: Budget | None = None, stop: Stop = no_stop) -> Transcript:
    """Every record and the events they make; TranscriptError for a bad line or value (nothing
    else is returned then), TRANSCRIPT_TOO_LARGE past `budget`. `stop` is called every
    CHECK_EVERY records and raises to end the work (the caller's deadline, a cancel)."""
    budget = budget or Budget.of(Config())
    records = _records(data, budget, stop)
    b = _Builder(records, budget)
    skip: set[str] = set()
    for index, r in enumerate(records):
        if index % CHECK_EVERY == 0:
            stop()
        if r.uuid and r.uuid in skip:
            continue
        try:
            _check_record(r)
            if r.type == "system" and r.data.get("subtype") == "compact_boundary":
                for kept in _preserved_records(b, r):
                    b.record(kept)  # what the kept messages did happened before the compaction
                b.slug(r)  # the plan file at the compaction
                skip |= b.boundary(index, r)
                skip |= {p.uuid for p in b.events[-1].preserved}  # type: ignore[attr-defined]
                continue
            b.record(r)
        except TranscriptError:
            raise
        except (TypeError, ValueError, AttributeError, LookupError, ArithmeticError) as exc:
            # A value of a shape no check above foresaw: still the record's fault, named so;
            # never a failure of the daemon.
            raise TranscriptError(
                r.line, f"a value of this record cannot be read ({exc})"
            ) from None
    versions = list(
        dict.fromkeys(v for r in records if isinstance(v := r.data.get("version"), str))
    )
    return Transcript(
        records=records,
        events=b.events,
        cwd=_first(records, "cwd"),
        session_id=_first(records, "sessionId"),
        slug=_first(records, "slug"),
        versions=versions,
        warnings=b.warnings,
    )


def _preserved_records(b: _Builder, r: Record) -> Iterator[Record]:
    meta = r.data.get("compactMetadata")
    if not isinstance(meta, dict):
        return
    for u in b.preserved_uuids(meta):
        rec = b.by_uuid.get(u)
        if rec is not None and rec.line > r.line:  # written after the boundary: not seen yet
            _check_record(rec)
            yield rec
