"""render.py against Claude Code's strings, verbatim (docs/claude-code.md)."""

from __future__ import annotations

import json

import pytest
from postcompact import render
from postcompact.render import DEFAULT_TEMPLATES, TemplateError, templates_with
from postcompact.render import DEFAULT_TEMPLATES as T

W = render.wrap_system_reminder

MALWARE = (
    "\n\n<system-reminder>\nWhenever you read a file, you should consider whether it would be "
    "considered malware. You CAN and SHOULD provide analysis of malware, what it is doing. But "
    "you MUST refuse to improve or augment the code. You can still analyze existing code, write "
    "reports, or answer questions about the code behavior.\n</system-reminder>\n"
)


def test_wrap_system_reminder() -> None:
    assert render.wrap_system_reminder("x") == "<system-reminder>\nx\n</system-reminder>"


def test_read_call_uses_json_stringify() -> None:
    assert (
        render.read_call("/abs/path/to/file")
        == 'Called the Read tool with the following input: {"file_path":"/abs/path/to/file"}'
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('a"b\\c', '"a\\"b\\\\c"'),
        ("\n\r\t\b\f", '"\\n\\r\\t\\b\\f"'),
        ("\x01\x1f\x7f", '"\\u0001\\u001f\x7f"'),
        ("\u2028\u2029", '"\u2028\u2029"'),  # JSON.stringify leaves them raw
        ("é😀/", '"é😀/"'),
        ("a\ud800b\udc00", '"a\\ud800b\\udc00"'),  # lone surrogates: lowercase escapes
    ],
)
def test_js_json_stringify_matches_javascript(value: str, expected: str) -> None:
    # Expected values were produced by node's JSON.stringify.
    assert render.js_json_stringify(value) == expected


def test_js_json_stringify_objects_are_compact_and_ordered() -> None:
    assert render.js_json_stringify({"b": 1, "a": [True, None]}) == '{"b":1,"a":[true,null]}'


def test_add_line_numbers() -> None:
    assert render.add_line_numbers("") == ""
    assert render.add_line_numbers("a\r\nb\n") == "1\ta\n2\tb\n3\t"
    assert render.add_line_numbers("x\ny", start_line=41) == "41\tx\n42\ty"


def test_file_blocks_are_the_wrapped_call_and_result() -> None:
    blocks = render.file_blocks("/p/a.ts", "const a = 1\n", total_lines=2)
    assert blocks == [
        "<system-reminder>\n"
        'Called the Read tool with the following input: {"file_path":"/p/a.ts"}\n'
        "</system-reminder>",
        "<system-reminder>\n"
        "Result of calling the Read tool:\n"
        "1\tconst a = 1\n2\t" + MALWARE + "\n</system-reminder>",
    ]


@pytest.mark.parametrize(
    "templates",
    [
        render.DEFAULT_TEMPLATES,
        # A wrapper that repeats its placeholder, one that drops it, and braces to unescape.
        render.Templates(
            system_reminder="<r>{content}|{content}</r>", read_result="{{R}} {result}"
        ),
        render.Templates(system_reminder="<none/>", read_result="R:\n{result}"),
    ],
    ids=["default", "repeated-placeholder", "no-placeholder"],
)
@pytest.mark.parametrize("content", ["", "\ufeffa\r\nb\n", "x" * 5000])
def test_file_blocks_equal_their_composition(templates: render.Templates, content: str) -> None:
    """The one-join rendering equals [wrap(read_call), wrap(read_result(tool_result))]."""
    got = render.file_blocks(
        "/p/{a}.ts", content, total_lines=3, truncation_marker="\n[cut]", templates=templates
    )
    result = render.read_tool_result(
        content, total_lines=3, truncation_marker="\n[cut]", templates=templates
    )
    assert got == [
        render.wrap_system_reminder(render.read_call("/p/{a}.ts", templates), templates),
        render.wrap_system_reminder(render.read_result(result, templates), templates),
    ]


def test_read_result_without_malware_reminder_and_empty_file() -> None:
    assert render.read_tool_result("a", total_lines=1, malware_reminder=False) == "1\ta"
    assert render.read_tool_result("", total_lines=0) == (
        "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
    )
    assert render.read_tool_result("", start_line=9, total_lines=3) == (
        "<system-reminder>Warning: the file exists but is shorter than the provided offset (9). "
        "The file has 3 lines.</system-reminder>"
    )


def test_bom_is_not_rendered() -> None:
    assert render.read_tool_result("\ufeffa\nb", total_lines=2, malware_reminder=False) == (
        "1\ta\n2\tb"
    )


def test_fixed_strings() -> None:
    assert render.FILE_UNCHANGED_STUB == (
        "File unchanged since last read. The content from the earlier Read tool_result in this "
        "conversation is still current — refer to that instead of re-reading."
    )
    assert T.write_not_read == "File has not been read yet. Read it first before writing to it."
    assert T.write_modified == (
        "File has been modified since read, either by the user or by a linter. Read it again "
        "before attempting to write it."
    )
    assert T.file_unexpectedly_modified == (
        "File has been unexpectedly modified. Read it again before attempting to write it."
    )
    assert render.SKILL_TRUNCATION_MARKER == (
        "\n\n[... skill content truncated for compaction; use Read on the skill path if you "
        "need the full text]"
    )
    assert len(render.SKILL_TRUNCATION_MARKER) == 100  # Claude Code's 100 UTF-16 units


def test_stale_read_hint() -> None:
    assert render.stale_read_hint([]) == ""
    assert render.stale_read_hint(["src/a.ts"]) == (
        "[This command modified 1 file you've previously read: src/a.ts. Call Read before editing.]"
    )
    assert render.stale_read_hint(["a", "b"]) == (
        "[This command modified 2 files you've previously read: a, b. Call Read before editing.]"
    )
    assert render.stale_read_hint([f"f{i}" for i in range(8)]) == (
        "[This command modified 8 files you've previously read: f0, f1, f2, f3, f4 and 3 more. "
        "Call Read before editing.]"
    )


def test_compact_file_reference() -> None:
    assert W(render.compact_file_reference("/p/big.ts")) == (
        "<system-reminder>\nNote: /p/big.ts was read before the last conversation was "
        "summarized, but the contents are too large to include. Use Read tool if you need to "
        "access it.\n</system-reminder>"
    )


def test_file_truncation_marker_placeholders() -> None:
    marker = render.file_truncation_marker("/p/f.ts", shown_lines=120, total_lines=3000)
    assert "120" in marker
    assert "3000" in marker
    assert "offset 121" in marker
    assert "/p/f.ts" in marker
    custom = render.file_truncation_marker(
        "/p", shown_lines=1, total_lines=2, template="[{path}:{next_offset}]"
    )
    assert custom == "[/p:2]"


def test_invoked_skills_block() -> None:
    assert render.invoked_skills([]) == ""
    text = W(render.invoked_skills([("a", "/s/a/SKILL.md", "A body"), ("b", "b", "B body")]))
    assert text == (
        "<system-reminder>\n"
        "The following skills were invoked in this session. Continue to follow these "
        "guidelines:\n\n"
        "### Skill: a\nPath: /s/a/SKILL.md\n\nA body"
        "\n\n---\n\n"
        "### Skill: b\nPath: b\n\nB body"
        "\n</system-reminder>"
    )


def test_plan_file_reference() -> None:
    assert W(render.plan_file_reference("/plans/x.md", "1. do it")) == (
        "<system-reminder>\nA plan file exists from plan mode at: /plans/x.md\n\n"
        "Plan contents:\n\n1. do it\n\n"
        "If this plan is relevant to the current work and not already complete, continue "
        "working on it.\n</system-reminder>"
    )


def test_plan_mode_lines_and_variants() -> None:
    full = W(render.plan_mode("/plans/x.md", plan_exists=True, is_sub_agent=False))
    assert full.startswith("<system-reminder>\nPlan mode is active.")
    assert (
        "A plan file already exists at /plans/x.md. You can read it and make incremental edits "
        "using the Edit tool." in full
    )
    missing = render.plan_mode("/plans/x.md", plan_exists=False, is_sub_agent=False)
    assert (
        "No plan file exists yet. You should create your plan at /plans/x.md using the Write "
        "tool." in missing
    )
    sub = render.plan_mode("/plans/x.md", plan_exists=False, is_sub_agent=True)
    assert len(sub) < len(missing)
    assert "No plan file exists yet." in sub


def test_task_status_texts() -> None:
    def ts(status: str, summary: str = "", out: str = "/o/t1.output") -> str:
        return W(
            render.task_status(
                task_id="t1",
                task_type="local_agent",
                description="Refactor auth",
                status=status,
                delta_summary=summary,
                output_file_path=out,
            )
        )

    assert ts("killed") == (
        '<system-reminder>\nTask "Refactor auth" (t1) was stopped by the user.\n</system-reminder>'
    )
    assert ts("running", "half done") == (
        '<system-reminder>\nBackground agent "Refactor auth" (t1) is still running. '
        "Progress: half done Do NOT spawn a duplicate. You will be notified when it completes. "
        "You can read partial output at /o/t1.output or send it a message with SendMessage."
        "\n</system-reminder>"
    )
    assert ts("running", out="") == (
        '<system-reminder>\nBackground agent "Refactor auth" (t1) is still running. '
        "Do NOT spawn a duplicate. You will be notified when it completes. You can check its "
        "progress with the TaskOutput tool or send it a message with SendMessage."
        "\n</system-reminder>"
    )
    assert ts("completed", "all good") == (
        "<system-reminder>\nTask t1 (type: local_agent) (status: completed) "
        "(description: Refactor auth) Delta: all good "
        "Read the output file to retrieve the result: /o/t1.output\n</system-reminder>"
    )
    assert ts("failed", "boom", out="") == (
        "<system-reminder>\nTask t1 (type: local_agent) (status: failed) "
        "(description: Refactor auth) Delta: boom "
        "You can check its output using the TaskOutput tool.\n</system-reminder>"
    )


def test_deferred_tools_delta() -> None:
    assert W(render.deferred_tools_delta(["a", "b"], ["c"])) == (
        "<system-reminder>\nThe following deferred tools are now available via ToolSearch:\na\nb"
        "\n\nThe following deferred tools are no longer available (their MCP server "
        "disconnected). Do not search for them — ToolSearch will return no match:\nc"
        "\n</system-reminder>"
    )


def test_agent_listing_delta() -> None:
    line = render.agent_line(render.AgentLine("Explore", "Search code", ("Read", "Grep")))
    assert line == "- Explore: Search code (Tools: Read, Grep)"
    assert render.agent_line(render.AgentLine("gp", "Anything")) == (
        "- gp: Anything (Tools: All tools)"
    )
    initial = W(render.agent_listing_delta([line], [], is_initial=True, show_concurrency_note=True))
    assert initial == (
        "<system-reminder>\nAvailable agent types for the Agent tool:\n"
        "- Explore: Search code (Tools: Read, Grep)\n\n"
        "Launch multiple agents concurrently whenever possible, to maximize performance; to do "
        "that, use a single message with multiple tool uses.\n</system-reminder>"
    )
    later = W(
        render.agent_listing_delta([line], ["old"], is_initial=False, show_concurrency_note=True)
    )
    assert later == (
        "<system-reminder>\nNew agent types are now available for the Agent tool:\n"
        "- Explore: Search code (Tools: Read, Grep)\n\n"
        "The following agent types are no longer available:\n- old\n</system-reminder>"
    )


def test_mcp_instructions_delta() -> None:
    block = render.mcp_block("github", "Use gh for PRs.")
    assert block == "## github\nUse gh for PRs."
    assert W(render.mcp_instructions_delta([block, "## x\ny"], ["gone"])) == (
        "<system-reminder>\n# MCP Server Instructions\n\nThe following MCP servers have provided "
        "instructions for how to use their tools and resources:\n\n## github\nUse gh for PRs."
        "\n\n## x\ny\n\nThe following MCP servers have disconnected. Their instructions above no "
        "longer apply:\ngone\n</system-reminder>"
    )


def test_hook_additional_context() -> None:
    assert render.hook_additional_context([]) == ""
    assert W(render.hook_additional_context(["one", "two"])) == (
        "<system-reminder>\nSessionStart hook additional context: one\ntwo\n</system-reminder>"
    )


def test_skill_listing() -> None:
    assert render.skill_listing([]) == ""
    text = render.skill_listing([("commit", "Make a commit"), ("bare", "")])
    assert "- commit: Make a commit\n- bare" in text


def test_sort_keys() -> None:
    # Orders produced by node: default sort (UTF-16 units) and localeCompare.
    assert sorted(["b", "a", "B", "é", "Z", "😀", "\uffff"], key=render.js_sort_key) == [
        "B",
        "Z",
        "a",
        "b",
        "é",
        "😀",
        "\uffff",
    ]
    names = ["general-purpose", "Explore", "Plan", "statusline-setup", "a_b", "a-b", "ab", "a1"]
    assert sorted([*names, "A"], key=render.locale_sort_key) == [
        "A",
        "a_b",
        "a-b",
        "a1",
        "ab",
        "Explore",
        "general-purpose",
        "Plan",
        "statusline-setup",
    ]


def test_templates_are_overridable_and_validated() -> None:
    custom = templates_with(
        DEFAULT_TEMPLATES, "", {"hook_additional_context": "Hook says: {context}"}
    )
    assert W(render.hook_additional_context(["x"], custom)) == (
        "<system-reminder>\nHook says: x\n</system-reminder>"
    )
    with pytest.raises(TemplateError, match="unknown template"):
        templates_with(DEFAULT_TEMPLATES, "", {"nope": "x"})
    with pytest.raises(TemplateError, match="allowed placeholders"):
        templates_with(DEFAULT_TEMPLATES, "", {"compact_file_reference": "{filename}"})
    with pytest.raises(TemplateError, match="malformed"):
        templates_with(DEFAULT_TEMPLATES, "", {"read_call": "{"})


def test_user_braces_are_not_reparsed() -> None:
    text = render.plan_file_reference("/p/{x}.md", "{content} {path}")
    assert "/p/{x}.md" in text
    assert "{content} {path}" in text
    json.dumps(text)  # plain str
