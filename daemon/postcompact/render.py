"""Every model-facing template and string postcompact produces, in one place.

The templates default to Claude Code's text (docs/claude-code.md), byte for byte: `Templates()` has
Claude Code 2.1.88's strings, and `CLAUDE_CODE_TEMPLATES` today's (2.1.336) where they differ. The
exceptions are postcompact's own wording, marked as such: the long plan-mode instructions and the
TRUNCATE_HEAD file marker.

Templates are `str.format` strings with named placeholders; values are substituted once and never
re-parsed, so user content containing braces is safe. `Templates` is a frozen dataclass: the
daemon configuration and each session may take a preset (`neutral`: no Claude Code tool named)
and replace any field (`templates_with`), and every template is checked at construction against
the placeholders it may use.

The render functions return an attachment's *bodies*, unwrapped: a restored file is the Read call
and the Read result (and a note when its text had to be escaped), every other attachment one body.
`blocks` turns bodies into the attachment's text blocks for its placement: each wrapped in
`<system-reminder>` when user-placed, one unwrapped section when system-placed.

Safety (every profile): no text inserted into a reminder can close it. Each closing
`</system-reminder` in inserted text (any case, with or without spaces) is written with `&lt;`
for its `<` (`escape_reminder_tags`); hook text has its opening tags escaped too. This applies to
file text, plan and skill content, skill names and paths, hook context, MCP instructions, task
fields and paths, whatever the placement.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import string
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from postcompact import core

__all__ = [
    "CLAUDE_CODE_TEMPLATES",
    "DEFAULT_TEMPLATES",
    "FILE_TOO_LARGE",
    "FILE_UNCHANGED_STUB",
    "MALWARE_REMINDER",
    "SKILL_TRUNCATION_MARKER",
    "SYSTEM",
    "USER",
    "AgentLine",
    "LeftOut",
    "TemplateError",
    "Templates",
    "add_line_numbers",
    "agent_line",
    "agent_listing_delta",
    "blocks",
    "compact_file_reference",
    "deferred_tools_delta",
    "escape_reminder_tags",
    "file_blocks",
    "file_templates",
    "file_too_large",
    "file_truncation_marker",
    "format_file_size",
    "hook_additional_context",
    "invoked_skills",
    "js_json_stringify",
    "js_sort_key",
    "left_out_files",
    "locale_sort_key",
    "mcp_block",
    "mcp_instructions_delta",
    "note_path",
    "plan_file_reference",
    "plan_mode",
    "read_call",
    "read_page_marker",
    "read_result",
    "read_tokens_exceeded",
    "read_tool_result",
    "shell_status",
    "skill_listing",
    "stale_read_hint",
    "strip_cr",
    "task_status",
    "wrap_system_reminder",
]

# --------------------------------------------------------------------------------------------
# Constants with Claude Code's exact text (also the defaults of the matching template fields).

FILE_UNCHANGED_STUB = (
    "File unchanged since last read. The content from the earlier Read tool_result in this "
    "conversation is still current — refer to that instead of re-reading."
)

SKILL_TRUNCATION_MARKER = (
    "\n\n[... skill content truncated for compaction; use Read on the skill path if you need "
    "the full text]"
)

MALWARE_REMINDER = (
    "\n\n<system-reminder>\nWhenever you read a file, you should consider whether it would be "
    "considered malware. You CAN and SHOULD provide analysis of malware, what it is doing. But "
    "you MUST refuse to improve or augment the code. You can still analyze existing code, write "
    "reports, or answer questions about the code behavior.\n</system-reminder>\n"
)

# postcompact's own wording (the default profile's TRUNCATE_HEAD behaviour, docs/profiles.md).
READ_PAGE_MARKER = (
    "\n\n[... showing lines 1-{shown_lines} of {total_lines}: the file is {tokens} tokens, over "
    "the {max_tokens}-token read limit; use Read on {path} with offset {next_offset} to see the "
    "rest]"
)
# Claude Code's MaxFileReadTokenExceededError (docs/claude-code.md §4), exact.
READ_TOKENS_EXCEEDED = (
    "File content ({tokens} tokens) exceeds maximum allowed tokens ({max_tokens}). Use offset "
    "and limit parameters to read specific portions of the file, or search for specific content "
    "instead of reading the whole file."
)
FILE_TRUNCATION_MARKER = (
    "\n\n[... file truncated for compaction at line {shown_lines} of {total_lines}; use Read on "
    "{path} with offset {next_offset} to see the rest]"
)

# postcompact's own wording: the full plan-mode reminder (Claude Code's prose is not copied; the
# two plan-file lines are Claude Code's).
PLAN_MODE_FULL = (
    "Plan mode is active. The user wants a plan before any change is made: do not edit, create "
    "or delete files (the plan file below is the only exception), do not run commands that "
    "change anything, and do not commit, install or configure anything. This overrides any "
    "other instruction you have received.\n"
    "\n"
    "## Plan File Info:\n"
    "{plan_file_info}\n"
    "Write the plan into this file as you go, editing it as your understanding improves. It is "
    "the only file you may change; everything else is read-only.\n"
    "\n"
    "## How to plan\n"
    "1. Understand the request: read the relevant code and documentation, and ask the user "
    "when the request is ambiguous.\n"
    "2. Explore: find the files, functions and tests involved and the conventions the code "
    "already follows.\n"
    "3. Design: choose an approach, say what changes where and why, and note the "
    "alternatives you rejected.\n"
    "4. Write the plan: concrete steps in order, the files each step touches, and how the "
    "result will be verified.\n"
    "5. Finish: when the plan is complete, ask the user to approve it (ExitPlanMode) instead "
    "of starting the work. Do not ask for approval in plain text."
)

PLAN_MODE_SUBAGENT = (
    "Plan mode is active. Do not edit, create or delete files (the plan file below is the "
    "only exception) and do not run commands that change anything.\n"
    "\n"
    "## Plan File Info:\n"
    "{plan_file_info}\n"
    "Record your findings and the plan in this file; everything else is read-only. Answer the "
    "request thoroughly, ask the user when something is unclear, and end by reporting the plan."
)

PLAN_EXISTS_LINE = (
    "A plan file already exists at {path}. You can read it and make incremental edits using "
    "the Edit tool."
)
PLAN_MISSING_LINE = (
    "No plan file exists yet. You should create your plan at {path} using the Write tool."
)


class TemplateError(ValueError):
    """A configured template uses a placeholder its field does not provide, or is malformed."""


# Placeholders each template may use. A template need not use all of them.
_PLACEHOLDERS: dict[str, frozenset[str]] = {
    "read_tool_name": frozenset(),
    "read_path_key": frozenset(),
    "system_reminder": frozenset({"content"}),
    "read_call": frozenset({"input_json"}),
    "read_result": frozenset({"result"}),
    "malware_reminder": frozenset(),
    "empty_file_warning": frozenset(),
    "offset_beyond_end_warning": frozenset({"start_line", "total_lines"}),
    "file_unchanged_stub": frozenset(),
    "write_not_read": frozenset(),
    "write_modified": frozenset(),
    "file_unexpectedly_modified": frozenset(),
    "stale_read_hint": frozenset({"count", "noun", "paths", "more"}),
    "stale_read_more": frozenset({"count"}),
    "stale_read_noun_one": frozenset(),
    "stale_read_noun_many": frozenset(),
    "compact_file_reference": frozenset({"path"}),
    "left_out_files": frozenset({"files"}),
    "left_out_file": frozenset({"path", "lines", "edited"}),
    "left_out_lines": frozenset({"first_line", "last_line"}),
    "left_out_edited": frozenset(),
    "left_out_more": frozenset({"count"}),
    "file_truncation_marker": frozenset({"path", "shown_lines", "total_lines", "next_offset"}),
    "read_page_marker": frozenset(
        {"path", "shown_lines", "total_lines", "next_offset", "tokens", "max_tokens"}
    ),
    "read_tokens_exceeded": frozenset({"tokens", "max_tokens"}),
    "skills_header": frozenset({"skills"}),
    "skill_block": frozenset({"name", "path", "content"}),
    "skill_separator": frozenset(),
    "skill_truncation_marker": frozenset(),
    "plan_file_reference": frozenset({"path", "content"}),
    "plan_mode_full": frozenset({"plan_file_info", "path"}),
    "plan_mode_subagent": frozenset({"plan_file_info", "path"}),
    "plan_exists_line": frozenset({"path"}),
    "plan_missing_line": frozenset({"path"}),
    "task_killed": frozenset({"description", "task_id"}),
    "task_running": frozenset({"description", "task_id"}),
    "task_running_progress": frozenset({"summary"}),
    "task_running_output": frozenset({"output_file_path"}),
    "task_running_no_output": frozenset(),
    "task_done_head": frozenset({"task_id", "task_type", "status", "description"}),
    "task_done_delta": frozenset({"summary"}),
    "task_done_output": frozenset({"output_file_path"}),
    "task_done_no_output": frozenset(),
    "shell_running": frozenset({"task_id", "description", "command"}),
    "monitor_running": frozenset({"task_id", "description", "command"}),
    "shell_output": frozenset({"output_file_path"}),
    "escaped_note": frozenset({"path"}),
    "removal_note": frozenset(),
    "deferred_tools_added": frozenset({"lines"}),
    "deferred_tools_removed": frozenset({"names"}),
    "agent_listing_initial_header": frozenset(),
    "agent_listing_new_header": frozenset(),
    "agent_listing_removed": frozenset({"lines"}),
    "agent_listing_removed_line": frozenset({"agent_type"}),
    "agent_line": frozenset({"agent_type", "when_to_use", "tools"}),
    "agent_all_tools": frozenset(),
    "agent_concurrency_note": frozenset(),
    "mcp_added": frozenset({"blocks"}),
    "mcp_block": frozenset({"name", "instructions"}),
    "mcp_removed": frozenset({"names"}),
    "hook_additional_context": frozenset({"context"}),
    "skill_listing": frozenset({"lines"}),
    "skill_listing_line": frozenset({"name", "description"}),
    "skill_listing_line_bare": frozenset({"name"}),
}


@dataclass(frozen=True, slots=True)
class Templates:
    """Every model-facing template. Defaults are Claude Code's exact text."""

    # The harness's read tool: its name and the key of its path argument, as a kept tail's
    # tool_use blocks carry them (a Read still visible there is not restored again) and as a
    # restored file's Read call shows them.
    read_tool_name: str = "Read"
    read_path_key: str = "file_path"

    # Wrapper (utils/messages.ts wrapInSystemReminder).
    system_reminder: str = "<system-reminder>\n{content}\n</system-reminder>"

    # Restored file = two user messages (docs/claude-code.md §3).
    read_call: str = "Called the Read tool with the following input: {input_json}"
    read_result: str = "Result of calling the Read tool:\n{result}"
    malware_reminder: str = MALWARE_REMINDER
    empty_file_warning: str = (
        "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
    )
    offset_beyond_end_warning: str = (
        "<system-reminder>Warning: the file exists but is shorter than the provided offset "
        "({start_line}). The file has {total_lines} lines.</system-reminder>"
    )

    # Read dedup and the Edit/Write preconditions (docs/claude-code.md §4).
    file_unchanged_stub: str = FILE_UNCHANGED_STUB
    write_not_read: str = "File has not been read yet. Read it first before writing to it."
    write_modified: str = (
        "File has been modified since read, either by the user or by a linter. Read it again "
        "before attempting to write it."
    )
    file_unexpectedly_modified: str = (
        "File has been unexpectedly modified. Read it again before attempting to write it."
    )

    # Stale-read hint (docs/claude-code.md §4).
    stale_read_hint: str = (
        "[This command modified {count} {noun} you've previously read: {paths}{more}. "
        "Call Read before editing.]"
    )
    stale_read_more: str = " and {count} more"
    stale_read_noun_one: str = "file"
    stale_read_noun_many: str = "files"

    # Oversize files (docs/claude-code.md §3; the TRUNCATE_HEAD marker is postcompact's own).
    compact_file_reference: str = (
        "Note: {path} was read before the last conversation was summarized, but the contents "
        "are too large to include. Use Read tool if you need to access it."
    )
    file_truncation_marker: str = FILE_TRUNCATION_MARKER
    # The index of files left out (RestorePolicy.left_out_index; postcompact's own words).
    left_out_files: str = (
        "Files you worked on before the conversation was summarized that were not restored "
        "(read them again if you need them):\n{files}"
    )
    left_out_file: str = "- {path}{lines}{edited}"
    left_out_lines: str = " (lines {first_line}-{last_line} seen)"
    left_out_edited: str = ", edited"
    left_out_more: str = "and {count} more"
    # A whole ReadFile over max_read_tokens answered with its first page (postcompact's words;
    # Claude Code marks the page partial without text, so its profile has none).
    read_page_marker: str = READ_PAGE_MARKER
    read_tokens_exceeded: str = READ_TOKENS_EXCEEDED

    # Invoked skills (docs/claude-code.md §5).
    skills_header: str = (
        "The following skills were invoked in this session. Continue to follow these "
        "guidelines:\n\n{skills}"
    )
    skill_block: str = "### Skill: {name}\nPath: {path}\n\n{content}"
    skill_separator: str = "\n\n---\n\n"
    skill_truncation_marker: str = SKILL_TRUNCATION_MARKER

    # Plan and plan mode (docs/claude-code.md §8; the long instructions are postcompact's own).
    plan_file_reference: str = (
        "A plan file exists from plan mode at: {path}\n\nPlan contents:\n\n{content}\n\n"
        "If this plan is relevant to the current work and not already complete, continue "
        "working on it."
    )
    plan_mode_full: str = PLAN_MODE_FULL
    plan_mode_subagent: str = PLAN_MODE_SUBAGENT
    plan_exists_line: str = PLAN_EXISTS_LINE
    plan_missing_line: str = PLAN_MISSING_LINE

    # Background tasks (docs/claude-code.md §6); parts are joined with a space.
    task_killed: str = 'Task "{description}" ({task_id}) was stopped by the user.'
    task_running: str = 'Background agent "{description}" ({task_id}) is still running.'
    task_running_progress: str = "Progress: {summary}"
    task_running_output: str = (
        "Do NOT spawn a duplicate. You will be notified when it completes. You can read partial "
        "output at {output_file_path} or send it a message with SendMessage."
    )
    task_running_no_output: str = (
        "Do NOT spawn a duplicate. You will be notified when it completes. You can check its "
        "progress with the TaskOutput tool or send it a message with SendMessage."
    )
    task_done_head: str = (
        "Task {task_id} (type: {task_type}) (status: {status}) (description: {description})"
    )
    task_done_delta: str = "Delta: {summary}"
    task_done_output: str = "Read the output file to retrieve the result: {output_file_path}"
    task_done_no_output: str = "You can check its output using the TaskOutput tool."

    # Running background shells (Claude Code 2.1.328; docs/claude-code.md §6): 2.1.88 has no
    # such line, the default and claude-code profiles use these. `{command}` is on one line.
    shell_running: str = (
        'Background shell {task_id} ("{description}") is still running (command, shown on one '
        "line: `{command}`). Do not start it again; to restart it, stop it with TaskStop first."
    )
    monitor_running: str = (
        'Background monitor {task_id} ("{description}") is still running (command, shown on one '
        "line: `{command}`). Do not start it again; to restart it, stop it with TaskStop first."
    )
    shell_output: str = "You can read its output at {output_file_path}."

    # The note after a restored file whose text had closing reminder tags escaped (every
    # profile; the text is Claude Code 2.1.328's, docs/claude-code.md §2).
    escaped_note: str = (
        "Note: {path} is not shown exactly as it is on disk. Each closing system-reminder tag in "
        "it starts with `<` on disk and is shown above with `&lt;` instead, so that it cannot end "
        "the reminder around the text."
    )
    # Appended (after "\n") to each removal notice of the catalogue deltas; 2.1.88 has none.
    removal_note: str = ""

    # Catalogue deltas (docs/claude-code.md §7); parts are joined with "\n\n".
    deferred_tools_added: str = (
        "The following deferred tools are now available via ToolSearch:\n{lines}"
    )
    deferred_tools_removed: str = (
        "The following deferred tools are no longer available (their MCP server disconnected). "
        "Do not search for them — ToolSearch will return no match:\n{names}"
    )
    agent_listing_initial_header: str = "Available agent types for the Agent tool:"
    agent_listing_new_header: str = "New agent types are now available for the Agent tool:"
    agent_listing_removed: str = "The following agent types are no longer available:\n{lines}"
    agent_listing_removed_line: str = "- {agent_type}"
    agent_line: str = "- {agent_type}: {when_to_use} (Tools: {tools})"
    agent_all_tools: str = "All tools"
    agent_concurrency_note: str = (
        "Launch multiple agents concurrently whenever possible, to maximize performance; to do "
        "that, use a single message with multiple tool uses."
    )
    mcp_added: str = (
        "# MCP Server Instructions\n\nThe following MCP servers have provided instructions for "
        "how to use their tools and resources:\n\n{blocks}"
    )
    mcp_block: str = "## {name}\n{instructions}"
    mcp_removed: str = (
        "The following MCP servers have disconnected. Their instructions above no longer "
        "apply:\n{names}"
    )

    # Session-start hooks (docs/claude-code.md §9).
    hook_additional_context: str = "SessionStart hook additional context: {context}"

    # Skill listing (Claude Code's header and lines; 2.1.88 never re-sends it after compaction,
    # 2.1.328 does: docs/claude-code.md §5).
    skill_listing: str = (
        "The following skills are available for use with the Skill tool:\n\n{lines}"
    )
    skill_listing_line: str = "- {name}: {description}"
    skill_listing_line_bare: str = "- {name}"

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, str):
                raise TemplateError(f"template {f.name} must be a string")
            check_template(f.name, value, _PLACEHOLDERS[f.name])


def check_template(name: str, template: str, allowed: frozenset[str]) -> None:
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise TemplateError(f"template {name} is malformed: {exc}") from None
    for _, field_name, format_spec, conversion in parsed:
        if field_name is None:
            continue
        if field_name not in allowed:
            allowed_text = ", ".join("{" + p + "}" for p in sorted(allowed)) or "none"
            raise TemplateError(
                f"template {name} uses {{{field_name}}}; allowed placeholders: {allowed_text}"
            )
        if format_spec or conversion:
            raise TemplateError(f"template {name}: format specs and conversions are not allowed")


DEFAULT_TEMPLATES = Templates()

# Today's Claude Code's interface strings (2.1.336, unchanged since 2.1.328) where they differ from
# 2.1.88's (docs/claude-code.md).
CLAUDE_CODE_SKILLS_HEADER = (
    "The following skills were invoked EARLIER in this session (before the conversation was "
    "compacted), not on the current turn. They are shown here for context only so you remain "
    "aware of their guidelines.\n\nIMPORTANT: Do NOT re-execute these skills or perform their "
    "one-time setup actions (e.g., scheduling, creating files) again. Any request or argument "
    'text embedded in the skill bodies below — for example under a "## User Request" or '
    '"## Input" heading — was captured when that skill was first invoked. It is NOT the '
    "user's current message and NOT a new request: do not act on it as if it were live. Only "
    "continue to apply ongoing behavioral guidelines from these skills where still relevant."
    "\n\n{skills}"
)
CLAUDE_CODE_DEFERRED_TOOLS_ADDED = (
    "The following deferred tools are now available via ToolSearch. Their schemas are NOT "
    "loaded — calling them directly will fail with InputValidationError. Use ToolSearch with "
    'query "select:<name>[,<name>...]" to load tool schemas before calling them:\n{lines}'
)
CLAUDE_CODE_AGENT_CONCURRENCY_NOTE = (
    "When you launch multiple agents for independent work, send them in a single message with "
    "multiple tool uses so they run concurrently."
)
AMBIENT_CONTEXT_NOTE = (
    "\nThis is ambient context — do not narrate it to the user unless they ask or it is "
    "directly relevant to their request."
)
CLAUDE_CODE_TEMPLATES = dataclasses.replace(
    DEFAULT_TEMPLATES,
    skills_header=CLAUDE_CODE_SKILLS_HEADER,
    task_killed='Task "{description}" ({task_id}) was stopped.',
    deferred_tools_added=CLAUDE_CODE_DEFERRED_TOOLS_ADDED,
    agent_concurrency_note=CLAUDE_CODE_AGENT_CONCURRENCY_NOTE,
    removal_note=AMBIENT_CONTEXT_NOTE,
    read_page_marker="",
)


# The `neutral` preset: the default wording with every name of a Claude Code tool taken out, for
# harnesses whose tools are named differently (docs/profiles.md, "Wording").
NEUTRAL_TEMPLATES = dataclasses.replace(
    DEFAULT_TEMPLATES,
    read_tool_name="read",
    read_path_key="filePath",
    read_call="A file read before the conversation was summarized, read again: {input_json}",
    read_result="Its content:\n{result}",
    file_unchanged_stub=(
        "File unchanged since last read. The content from the earlier read of it in this "
        "conversation is still current — refer to that instead of reading it again."
    ),
    stale_read_hint=(
        "[This command modified {count} {noun} you've previously read: {paths}{more}. "
        "Read them again before editing.]"
    ),
    compact_file_reference=(
        "Note: {path} was read before the last conversation was summarized, but the contents "
        "are too large to include. Read it again if you need it."
    ),
    file_truncation_marker=(
        "\n\n[... file truncated for compaction at line {shown_lines} of {total_lines}; read "
        "{path} from line {next_offset} to see the rest]"
    ),
    read_page_marker=(
        "\n\n[... showing lines 1-{shown_lines} of {total_lines}: the file is {tokens} tokens, "
        "over the {max_tokens}-token read limit; read {path} from line {next_offset} to see the "
        "rest]"
    ),
    skill_truncation_marker=(
        "\n\n[... skill content truncated for compaction; read the skill's file if you need "
        "the full text]"
    ),
    plan_mode_full=PLAN_MODE_FULL.replace(
        "ask the user to approve it (ExitPlanMode) instead", "ask the user to approve it instead"
    ),
    plan_exists_line=(
        "A plan file already exists at {path}. You can read it and make incremental edits to it."
    ),
    plan_missing_line="No plan file exists yet. You should create your plan at {path}.",
    task_running_output=(
        "Do NOT spawn a duplicate. You will be notified when it completes. You can read partial "
        "output at {output_file_path}."
    ),
    task_running_no_output=("Do NOT spawn a duplicate. You will be notified when it completes."),
    task_done_no_output="Its output is with the harness that ran it.",
    shell_running=(
        'Background shell {task_id} ("{description}") is still running (command, shown on one '
        "line: `{command}`). Do not start it again; to restart it, stop it first."
    ),
    monitor_running=(
        'Background monitor {task_id} ("{description}") is still running (command, shown on one '
        "line: `{command}`). Do not start it again; to restart it, stop it first."
    ),
    deferred_tools_added="The following tools are now available:\n{lines}",
    deferred_tools_removed=(
        "The following tools are no longer available (their MCP server disconnected):\n{names}"
    ),
    agent_listing_initial_header="Available agent types:",
    agent_listing_new_header="New agent types are now available:",
    hook_additional_context="Session-start hook additional context: {context}",
    skill_listing="The following skills are available:\n\n{lines}",
)

# Template presets by name ("" is the session profile's own wording).
PRESETS: dict[str, Templates] = {"neutral": NEUTRAL_TEMPLATES}


def templates_with(base: Templates, preset: str, strings: Mapping[str, str]) -> Templates:
    """`base` (or the named preset in its place), with `strings` (template name -> text) on top.
    TemplateError naming an unknown preset or template, or a placeholder a template may not use."""
    if preset:
        if preset not in PRESETS:
            raise TemplateError(
                f"unknown template preset {preset!r} (one of: {', '.join(sorted(PRESETS))})"
            )
        base = PRESETS[preset]
    if not strings:
        return base
    known = {f.name for f in dataclasses.fields(Templates)}
    unknown = sorted(set(strings) - known)
    if unknown:
        raise TemplateError(f"unknown template(s): {', '.join(unknown)}")
    return dataclasses.replace(base, **dict(strings))


def _fmt(template: str, **values: object) -> str:
    return template.format(**values)


# --------------------------------------------------------------------------------------------
# JavaScript compatibility helpers


_SURROGATE = re.compile("[\ud800-\udfff]")


def js_json_stringify(value: Any) -> str:
    """`JSON.stringify(value)` for JSON-like Python values (dict, list, str, int, bool, None).

    `json.dumps(ensure_ascii=False, separators=(",", ":"))` already matches JavaScript: `"` and
    `\\` escaped; `\\b \\f \\n \\r \\t` short; other C0 controls as lowercase `\\u00xx`; DEL,
    U+2028/U+2029 and all other non-ASCII left raw. The one difference is lone surrogates (a
    Python str can hold them, e.g. from `os.fsdecode` of a non-UTF-8 name): well-formed
    JSON.stringify writes them as lowercase `\\udxxx` escapes, and so does this function.
    Dict keys keep insertion order, as JS objects do for string keys.
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def js_sort_key(value: str) -> bytes:
    """Key giving JavaScript's default `Array.prototype.sort` order (UTF-16 code units)."""
    return value.encode("utf-16-be", "surrogatepass")


# ICU root collation order of ASCII punctuation and symbols (they sort before digits, which sort
# before letters).
_ICU_PUNCT = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"


def locale_sort_key(value: str) -> tuple[tuple[tuple[int, int], ...], tuple[int, ...], str]:
    """An approximation of `a.localeCompare(b)` (ICU root collation) for sorting names.

    Primary: whitespace < punctuation (ICU order) < symbols < digits < letters, letters compared
    case- and accent-insensitively; secondary: accents; tertiary: lowercase before uppercase,
    then code points. Exact for the ASCII names agent types and MCP servers use in practice.
    """
    primary: list[tuple[int, int]] = []
    secondary: list[int] = []
    for ch in value:
        base = unicodedata.normalize("NFD", ch)
        stripped = "".join(c for c in base if not unicodedata.combining(c)) or ch
        secondary.append(len(base) - len(stripped))
        for c in stripped:
            if c.isspace():
                primary.append((0, ord(c)))
            elif c.isdigit():
                primary.append((3, ord(c)))
            elif c.isalpha():
                primary.append((4, ord(c.casefold()[0])))
            elif c in _ICU_PUNCT:
                primary.append((1, _ICU_PUNCT.index(c)))
            else:
                primary.append((2, ord(c)))
    tertiary = "".join(c.swapcase() for c in value)  # lowercase first
    return tuple(primary), tuple(secondary), tertiary


# --------------------------------------------------------------------------------------------
# Wrappers, placement and escaping


def wrap_system_reminder(content: str, templates: Templates = DEFAULT_TEMPLATES) -> str:
    """`<system-reminder>\\n{content}\\n</system-reminder>`."""
    return _fmt(templates.system_reminder, content=content)


USER = "user"
SYSTEM = "system"


def blocks(
    bodies: Sequence[str], placement: str, templates: Templates = DEFAULT_TEMPLATES
) -> list[str]:
    """An attachment's text blocks: each body wrapped when user-placed; the one body as its
    section, unwrapped, when system-placed."""
    if placement == SYSTEM:
        return ["\n\n".join(bodies)]
    return [wrap_system_reminder(b, templates) for b in bodies]


# A closing tag, in any case, with any whitespace between its characters' groups; and for hook
# text an opening one too. The "<" is what gets replaced.
_CLOSING_TAG = re.compile(r"<(?=\s*/\s*system-reminder)", re.IGNORECASE)
_ANY_TAG = re.compile(r"<(?=\s*/?\s*system-reminder)", re.IGNORECASE)


def escape_reminder_tags(text: str, *, opening: bool = False) -> str:
    """`text` with the `<` of each closing `</system-reminder` (and with `opening`, of each
    opening one) written as `&lt;`, so that the text cannot end (or open) a reminder. The scan
    runs in the core (`core.escape_reminder_tags`); a str with lone surrogates takes the
    equivalent regex. The text itself comes back when there is nothing to escape."""
    try:
        escaped = core.escape_reminder_tags(text, opening)
    except UnicodeEncodeError:
        pattern = _ANY_TAG if opening else _CLOSING_TAG
        return text if pattern.search(text) is None else pattern.sub("&lt;", text)
    return text if escaped is None else escaped


# Characters a path in a note may not carry as they are: the tag brackets, and what does not
# show (controls, format characters such as zero-width and bidirectional marks, separators).
_NOTE_PATH_UNSAFE = re.compile(
    "[<>\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff"
    "\ufff9-\ufffb]"
)


def note_path(path: str) -> str:
    """`path` as shown inside a note: `<` and `>` as `&lt;` and `&gt;`, invisible characters
    as `\\uXXXX` (so that a file name can neither close the reminder nor hide in it)."""
    if _NOTE_PATH_UNSAFE.search(path) is None:
        return path

    def sub(m: re.Match[str]) -> str:
        c = m.group()
        if c == "<":
            return "&lt;"
        if c == ">":
            return "&gt;"
        return f"\\u{ord(c):04x}"

    return _NOTE_PATH_UNSAFE.sub(sub, path)


# --------------------------------------------------------------------------------------------
# File reads


_LINE_SPLIT = re.compile(r"\r?\n")


def add_line_numbers(content: str, start_line: int = 1) -> str:
    """Claude Code's `addLineNumbers`: `{n}\\t{line}`, lines split on `\\r?\\n`, "" for "".

    The numbering runs in the core (`core.number_lines`); a str with lone surrogates (no UTF-8
    form) takes the equivalent Python path.
    """
    if not content:
        return ""
    try:
        return core.number_lines(content, start_line)
    except UnicodeEncodeError:
        lines = _LINE_SPLIT.split(content)
        return "\n".join(f"{i + start_line}\t{line}" for i, line in enumerate(lines))


def strip_cr(text: str) -> str:
    """`text` as Claude Code attaches and measures a file: the one `\\r` ending each line (before
    its `\\n`, or at the very end) removed."""
    if "\r" not in text:
        return text
    text = text.replace("\r\n", "\n")
    return text[:-1] if text.endswith("\r") else text


def read_call(path: str, templates: Templates = DEFAULT_TEMPLATES) -> str:
    """`Called the Read tool with the following input: {"file_path":"..."}` (unwrapped)."""
    call = _fmt(templates.read_call, input_json=js_json_stringify({templates.read_path_key: path}))
    return escape_reminder_tags(call)


def file_templates(templates: Templates) -> core.FileTemplates:
    """The templates of a file's blocks and of a Read tool result, as the core renders them
    (`core.restore_files`, `core.read_file`: the one renderer of a file as the model sees it)."""
    return _file_templates(
        templates.system_reminder,
        templates.read_call,
        templates.read_result,
        templates.read_path_key,
        templates.malware_reminder,
        templates.empty_file_warning,
        templates.offset_beyond_end_warning,
        templates.escaped_note,
        templates.read_page_marker,
    )


@functools.lru_cache(maxsize=64)
def _file_templates(
    system_reminder: str,
    read_call: str,
    read_result: str,
    read_path_key: str,
    malware_reminder: str,
    empty_file_warning: str,
    offset_beyond_end_warning: str,
    escaped_note: str,
    read_page_marker: str,
) -> core.FileTemplates:
    """`file_templates`, cached on the strings it uses (hashing a whole `Templates` costs more
    than looking these up)."""
    return core.FileTemplates(
        system_reminder=system_reminder,
        read_call=read_call,
        read_result=read_result,
        read_path_key=read_path_key,
        malware_reminder=malware_reminder,
        empty_file_warning=empty_file_warning,
        offset_beyond_end_warning=offset_beyond_end_warning,
        escaped_note=escaped_note,
        read_page_marker=read_page_marker,
    )


def read_tool_result(
    content: str,
    *,
    start_line: int = 1,
    total_lines: int = 0,
    malware_reminder: bool = True,
    truncation_marker: str = "",
    templates: Templates = DEFAULT_TEMPLATES,
) -> str:
    """The Read tool_result text: numbered lines (+ truncation marker) + the malware reminder,
    as ReadFile answers it (`core.read_tool_result`, the renderer of `core.read_file`).

    Empty content gives the empty-file warning when the file has no lines, and the
    "shorter than the provided offset" warning otherwise (a range past the end). A UTF-8 BOM at
    the start of the file is not shown (Claude Code's reader strips it). The text is not escaped
    (ReadFile returns it as a tool result, not inside a reminder).
    """
    return core.read_tool_result(
        file_templates(templates),
        content,
        start_line=start_line,
        total_lines=total_lines,
        malware=malware_reminder,
        marker=truncation_marker,
    )


def read_result(tool_result: str, templates: Templates = DEFAULT_TEMPLATES) -> str:
    """`Result of calling the Read tool:\\n{tool_result}` (unwrapped)."""
    return _fmt(templates.read_result, result=tool_result)


def file_blocks(
    path: str,
    content: str,
    *,
    total_lines: int,
    malware_reminder: bool = True,
    truncation_marker: str = "",
    templates: Templates = DEFAULT_TEMPLATES,
    start_line: int = 1,
    read_limit: int | None = None,
) -> list[str]:
    """A restored file's blocks (always user-placed, each wrapped): the Read call, the Read
    result and, when closing tags in the text had to be escaped, the note saying so. A range
    (`start_line` > 1) is numbered from its first line, and its Read call carries the offset and
    `read_limit`. Rendered by the core (`core.file_blocks`), as `core.restore_files` renders
    them."""
    return core.file_blocks(
        file_templates(templates),
        path,
        content,
        total_lines=total_lines,
        malware=malware_reminder,
        marker=truncation_marker,
        start_line=start_line,
        read_limit=read_limit,
    )


def file_truncation_marker(
    path: str,
    *,
    shown_lines: int,
    total_lines: int,
    template: str | None = None,
    templates: Templates = DEFAULT_TEMPLATES,
) -> str:
    """The TRUNCATE_HEAD marker appended after the numbered head (postcompact's wording), as
    the core renders it (`core.truncation_marker`: its path made safe, `note_path`)."""
    return core.truncation_marker(
        templates.file_truncation_marker if template is None else template,
        path,
        shown_lines=shown_lines,
        total_lines=total_lines,
    )


@dataclass(frozen=True, slots=True)
class LeftOut:
    """A file in the index of files left out: the lines seen (0, 0: not known), edited."""

    path: str
    first_line: int
    last_line: int
    edited: bool


def left_out_files(
    files: Sequence[LeftOut], more: int = 0, templates: Templates = DEFAULT_TEMPLATES
) -> str:
    """The index of files left out of a restoration: a line per file (its path made safe,
    `note_path`), and how many more were not named."""
    lines = []
    for f in files:
        span = ""
        if f.first_line > 0:
            span = _fmt(templates.left_out_lines, first_line=f.first_line, last_line=f.last_line)
        edited = templates.left_out_edited if f.edited else ""
        lines.append(
            _fmt(templates.left_out_file, path=note_path(f.path), lines=span, edited=edited)
        )
    if more > 0:
        lines.append(_fmt(templates.left_out_more, count=more))
    return _fmt(templates.left_out_files, files="\n".join(lines))


def compact_file_reference(path: str, templates: Templates = DEFAULT_TEMPLATES) -> str:
    """The path-only note for an oversize file (its path made safe, `note_path`)."""
    return _fmt(templates.compact_file_reference, path=note_path(path))


def format_file_size(size: int) -> str:
    """Claude Code's file size: `N bytes` under 1 KB, else KB, MB or GB with one decimal as
    JavaScript's `toFixed(1)` rounds it (halves up), a trailing `.0` dropped (262144 -> `256KB`,
    3250586 -> `3.1MB`)."""
    if size < 1024:
        return f"{size} bytes"
    for power, unit in ((1, "KB"), (2, "MB"), (3, "GB")):
        if size < 1024 ** (power + 1) or unit == "GB":
            tenths = (20 * size + 1024**power) // (2 * 1024**power)  # round(size * 10 / 1024^p)
            whole, tenth = divmod(tenths, 10)
            return (f"{whole}" if tenth == 0 else f"{whole}.{tenth}") + unit
    raise AssertionError("unreachable")


FILE_TOO_LARGE = (
    "File content ({size}) exceeds maximum allowed size ({max}). Use offset and limit "
    "parameters to read specific portions of the file, or search for specific content instead "
    "of reading the whole file."
)


def file_too_large(size: int, max_bytes: int) -> str:
    """Current Claude Code's Read refusal of a file over the byte cap."""
    return FILE_TOO_LARGE.format(size=format_file_size(size), max=format_file_size(max_bytes))


def read_page_marker(
    path: str,
    *,
    shown_lines: int,
    total_lines: int,
    tokens: int,
    max_tokens: int,
    templates: Templates = DEFAULT_TEMPLATES,
) -> str:
    """The note after the first page of a whole ReadFile over max_read_tokens ("" for none), as
    the core renders it (`core.page_marker`)."""
    return core.page_marker(
        file_templates(templates),
        path,
        shown_lines=shown_lines,
        total_lines=total_lines,
        tokens=tokens,
        max_tokens=max_tokens,
    )


def read_tokens_exceeded(
    tokens: int, max_tokens: int, templates: Templates = DEFAULT_TEMPLATES
) -> str:
    """The refusal of a whole ReadFile over max_read_tokens (Claude Code's words)."""
    return _fmt(templates.read_tokens_exceeded, tokens=tokens, max_tokens=max_tokens)


def stale_read_hint(
    relative_paths: Sequence[str], templates: Templates = DEFAULT_TEMPLATES, *, shown: int = 5
) -> str:
    """`[This command modified N file(s) you've previously read: a, b and K more. Call Read...]`.

    `relative_paths` are already cwd-relative, in the order to list them; "" when empty.
    """
    count = len(relative_paths)
    if count == 0:
        return ""
    more = count - shown
    return _fmt(
        templates.stale_read_hint,
        count=count,
        noun=templates.stale_read_noun_one if count == 1 else templates.stale_read_noun_many,
        paths=", ".join(relative_paths[:shown]),
        more=_fmt(templates.stale_read_more, count=more) if more > 0 else "",
    )


# --------------------------------------------------------------------------------------------
# Skills, plan, plan mode, tasks (bodies, unwrapped)


def invoked_skills(
    skills: Iterable[tuple[str, str, str]], templates: Templates = DEFAULT_TEMPLATES
) -> str:
    """The invoked-skills body for (name, path, content) triples; "" when there are none."""
    blocks_ = [
        _fmt(
            templates.skill_block,
            name=escape_reminder_tags(name),
            path=escape_reminder_tags(path),
            content=escape_reminder_tags(content),
        )
        for name, path, content in skills
    ]
    if not blocks_:
        return ""
    return _fmt(templates.skills_header, skills=templates.skill_separator.join(blocks_))


def plan_file_reference(path: str, content: str, templates: Templates = DEFAULT_TEMPLATES) -> str:
    return _fmt(
        templates.plan_file_reference,
        path=escape_reminder_tags(path),
        content=escape_reminder_tags(content),
    )


def plan_mode(
    path: str,
    *,
    plan_exists: bool,
    is_sub_agent: bool,
    templates: Templates = DEFAULT_TEMPLATES,
) -> str:
    """The full plan-mode reminder (the sub-agent variant is shorter)."""
    path = escape_reminder_tags(path)
    info = _fmt(
        templates.plan_exists_line if plan_exists else templates.plan_missing_line, path=path
    )
    template = templates.plan_mode_subagent if is_sub_agent else templates.plan_mode_full
    return _fmt(template, plan_file_info=info, path=path)


def task_status(
    *,
    task_id: str,
    task_type: str,
    description: str,
    status: str,
    delta_summary: str,
    output_file_path: str,
    templates: Templates = DEFAULT_TEMPLATES,
) -> str:
    """A local_agent's task_status body; `status` is "killed", "running", "completed" or
    "failed"."""
    task_id, task_type, description, delta_summary, output_file_path = (
        escape_reminder_tags(v)
        for v in (task_id, task_type, description, delta_summary, output_file_path)
    )
    if status == "killed":
        return _fmt(templates.task_killed, description=description, task_id=task_id)
    if status == "running":
        parts = [_fmt(templates.task_running, description=description, task_id=task_id)]
        if delta_summary:
            parts.append(_fmt(templates.task_running_progress, summary=delta_summary))
        if output_file_path:
            parts.append(_fmt(templates.task_running_output, output_file_path=output_file_path))
        else:
            parts.append(templates.task_running_no_output)
        return " ".join(parts)
    parts = [
        _fmt(
            templates.task_done_head,
            task_id=task_id,
            task_type=task_type,
            status=status,
            description=description,
        )
    ]
    if delta_summary:
        parts.append(_fmt(templates.task_done_delta, summary=delta_summary))
    if output_file_path:
        parts.append(_fmt(templates.task_done_output, output_file_path=output_file_path))
    else:
        parts.append(templates.task_done_no_output)
    return " ".join(parts)


SHELL_DESCRIPTION_CHARS = 200
SHELL_COMMAND_CHARS = 500
_LINE_BREAKS = re.compile(r"\r\n|\r|\n")


def shell_status(
    *,
    task_id: str,
    description: str,
    command: str,
    output_file_path: str,
    monitor: bool = False,
    templates: Templates = DEFAULT_TEMPLATES,
) -> str:
    """A running background shell's body: the description cut to 200 characters, the command
    to 500 and shown on one line (each line break a space)."""
    one_line = _LINE_BREAKS.sub(" ", command)[:SHELL_COMMAND_CHARS]
    text = _fmt(
        templates.monitor_running if monitor else templates.shell_running,
        task_id=escape_reminder_tags(task_id),
        description=escape_reminder_tags(description[:SHELL_DESCRIPTION_CHARS]),
        command=escape_reminder_tags(one_line),
    )
    if output_file_path:
        out = _fmt(templates.shell_output, output_file_path=escape_reminder_tags(output_file_path))
        text = f"{text} {out}"
    return text


# --------------------------------------------------------------------------------------------
# Catalogue deltas and hooks (bodies, unwrapped)


def _removal(text: str, templates: Templates) -> str:
    return text + templates.removal_note if templates.removal_note else text


def deferred_tools_delta(
    added_lines: Sequence[str],
    removed_names: Sequence[str],
    templates: Templates = DEFAULT_TEMPLATES,
) -> str:
    parts: list[str] = []
    if added_lines:
        lines = "\n".join(escape_reminder_tags(x) for x in added_lines)
        parts.append(_fmt(templates.deferred_tools_added, lines=lines))
    if removed_names:
        names = "\n".join(escape_reminder_tags(x) for x in removed_names)
        parts.append(_removal(_fmt(templates.deferred_tools_removed, names=names), templates))
    return "\n\n".join(parts)


@dataclass(frozen=True, slots=True)
class AgentLine:
    agent_type: str
    when_to_use: str
    tools: tuple[str, ...] = ()


def agent_line(agent: AgentLine, templates: Templates = DEFAULT_TEMPLATES) -> str:
    """`- {type}: {whenToUse} (Tools: {tools joined ", " | All tools})`."""
    tools = ", ".join(agent.tools) if agent.tools else templates.agent_all_tools
    return escape_reminder_tags(
        _fmt(
            templates.agent_line,
            agent_type=agent.agent_type,
            when_to_use=agent.when_to_use,
            tools=tools,
        )
    )


def agent_listing_delta(
    added_lines: Sequence[str],
    removed_types: Sequence[str],
    *,
    is_initial: bool,
    show_concurrency_note: bool,
    templates: Templates = DEFAULT_TEMPLATES,
) -> str:
    parts: list[str] = []
    if added_lines:
        header = (
            templates.agent_listing_initial_header
            if is_initial
            else templates.agent_listing_new_header
        )
        parts.append(header + "\n" + "\n".join(added_lines))
    if removed_types:
        lines = "\n".join(
            _fmt(templates.agent_listing_removed_line, agent_type=escape_reminder_tags(t))
            for t in removed_types
        )
        parts.append(_removal(_fmt(templates.agent_listing_removed, lines=lines), templates))
    if is_initial and show_concurrency_note:
        parts.append(templates.agent_concurrency_note)
    return "\n\n".join(parts)


def mcp_block(name: str, instructions: str, templates: Templates = DEFAULT_TEMPLATES) -> str:
    """`## {server}\\n{instructions}`."""
    return escape_reminder_tags(_fmt(templates.mcp_block, name=name, instructions=instructions))


def mcp_instructions_delta(
    added_blocks: Sequence[str],
    removed_names: Sequence[str],
    templates: Templates = DEFAULT_TEMPLATES,
) -> str:
    parts: list[str] = []
    if added_blocks:
        parts.append(_fmt(templates.mcp_added, blocks="\n\n".join(added_blocks)))
    if removed_names:
        names = "\n".join(escape_reminder_tags(x) for x in removed_names)
        parts.append(_removal(_fmt(templates.mcp_removed, names=names), templates))
    return "\n\n".join(parts)


def hook_additional_context(
    contexts: Sequence[str], templates: Templates = DEFAULT_TEMPLATES
) -> str:
    """`SessionStart hook additional context: {contexts joined "\\n"}`; "" if none. Hook text
    has its opening reminder tags escaped as well as its closing ones."""
    if not contexts:
        return ""
    context = "\n".join(escape_reminder_tags(c, opening=True) for c in contexts)
    return _fmt(templates.hook_additional_context, context=context)


def skill_listing(
    entries: Sequence[tuple[str, str]], templates: Templates = DEFAULT_TEMPLATES
) -> str:
    """The skills available (name, description); "" when empty."""
    if not entries:
        return ""
    lines = "\n".join(
        _fmt(templates.skill_listing_line, name=name, description=description)
        if description
        else _fmt(templates.skill_listing_line_bare, name=name)
        for name, description in entries
    )
    return _fmt(templates.skill_listing, lines=escape_reminder_tags(lines))
