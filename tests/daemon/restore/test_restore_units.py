"""Units of the restore package: policy resolution, catalogue deltas, hook output parsing."""

from __future__ import annotations

import pytest
from postcompact import _core, render
from postcompact.errors import InvalidArgument
from postcompact.restore.catalog import Announced, announced_in_messages, apply_catalog
from postcompact.restore.hooks import parse_hook_output
from postcompact.restore.policy import Policy, resolve_policy, validate_policy
from postcompact.state import AgentState
from postcompact.v1 import postcompact_pb2 as pb

from tests.daemon.conftest import text_of

# --- policy ----------------------------------------------------------------------------------


def test_policy_defaults_are_claude_codes_constants() -> None:
    """The Claude Code profiles keep its constants; the default profile's file rule is the one
    `postcompact eval` chose (docs/eval.md): the lines seen of up to 20 files, each within 5,000
    tokens (a file over it is left out), in the tokens Claude Code's own rule spends at that
    compaction, read state carried, no malware reminder."""
    p = resolve_policy(pb.PROFILE_CLAUDE_CODE_2_1_88)
    assert p == Policy(oversize=pb.OVERSIZE_POLICY_REFERENCE)
    assert resolve_policy(pb.PROFILE_CLAUDE_CODE).carry_read_state  # as Claude Code does today
    assert (p.max_files, p.file_token_budget, p.max_tokens_per_file) == (5, 50_000, 5_000)
    assert (p.max_tokens_per_skill, p.skills_token_budget) == (5_000, 25_000)
    assert (p.counter, p.encoding) == (pb.TOKEN_COUNTER_ROUGH, "o200k_base")
    assert (p.max_file_size_bytes, p.malware_reminder) == (262_144, True)
    assert not p.restore_seen
    assert not p.left_out_index
    assert p.ranking == pb.FILE_RANKING_RECENCY
    d = resolve_policy(pb.PROFILE_DEFAULT)
    assert (d.max_files, d.max_tokens_per_file) == (20, 5_000)
    assert d.match_budget == pb.HARNESS_RULE_CLAUDE_CODE
    assert p.match_budget == pb.HARNESS_RULE_NONE
    assert resolve_policy(pb.PROFILE_CLAUDE_CODE).match_budget == pb.HARNESS_RULE_NONE
    assert d.oversize == pb.OVERSIZE_POLICY_SKIP
    assert d.restore_seen
    assert d.carry_read_state
    assert not d.malware_reminder
    assert not d.left_out_index
    assert d.ranking == pb.FILE_RANKING_SCORED
    assert (d.max_tokens_per_skill, d.skills_token_budget) == (5_000, 25_000)
    assert p.skill_truncation_marker is None  # = the template's


def test_policy_later_layers_override() -> None:
    config = pb.RestorePolicy(max_files=3, oversize=pb.OVERSIZE_POLICY_REFERENCE)
    session = pb.RestorePolicy(max_files=4, counter=pb.TOKEN_COUNTER_EXACT, encoding="cl100k_base")
    request = pb.RestorePolicy(malware_reminder=False, skill_truncation_marker="[cut]")
    p = resolve_policy(pb.PROFILE_DEFAULT, config, session, request)
    assert (p.max_files, p.oversize, p.counter, p.encoding) == (
        4,
        pb.OVERSIZE_POLICY_REFERENCE,
        pb.TOKEN_COUNTER_EXACT,
        "cl100k_base",
    )
    assert (p.malware_reminder, p.skill_truncation_marker) == (False, "[cut]")
    assert p.exact
    # Unspecified enums and unset fields inherit.
    assert (
        resolve_policy(pb.PROFILE_DEFAULT, config, pb.RestorePolicy()).oversize
        == pb.OVERSIZE_POLICY_REFERENCE
    )


@pytest.mark.parametrize(
    ("layer", "reason", "field"),
    [
        (pb.RestorePolicy(max_files=-1), "NEGATIVE_BUDGET", "policy.max_files"),
        (pb.RestorePolicy(file_token_budget=-5), "NEGATIVE_BUDGET", "policy.file_token_budget"),
        (pb.RestorePolicy(skills_token_budget=-1), "NEGATIVE_BUDGET", "policy.skills_token_budget"),
        (pb.RestorePolicy(max_tokens_per_file=0), "INVALID_POLICY", "policy.max_tokens_per_file"),
        (pb.RestorePolicy(max_tokens_per_skill=0), "INVALID_POLICY", "policy.max_tokens_per_skill"),
        (pb.RestorePolicy(max_file_size_bytes=0), "INVALID_POLICY", "policy.max_file_size_bytes"),
        (pb.RestorePolicy(encoding="p50k"), "UNKNOWN_ENCODING", "policy.encoding"),
        (pb.RestorePolicy(oversize=42), "INVALID_POLICY", "policy.oversize"),  # type: ignore[arg-type]
        (pb.RestorePolicy(counter=9), "INVALID_POLICY", "policy.counter"),  # type: ignore[arg-type]
        (
            pb.RestorePolicy(file_truncation_marker="[{filename}]"),
            "INVALID_POLICY",
            "policy.file_truncation_marker",
        ),
    ],
)
def test_policy_validation(layer: pb.RestorePolicy, reason: str, field: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        validate_policy(layer)
    assert err.value.reason == reason
    assert field in err.value.message
    assert err.value.metadata["field"] == field


def test_policy_zero_budgets_are_valid() -> None:
    p = resolve_policy(
        pb.PROFILE_DEFAULT,
        pb.RestorePolicy(max_files=0, file_token_budget=0, skills_token_budget=0),
    )
    assert (p.max_files, p.file_token_budget, p.skills_token_budget) == (0, 0, 0)


# --- catalogue -------------------------------------------------------------------------------


def _agent() -> AgentState:
    return AgentState(agent_id="", files=_core.FileStateCache(100, 1 << 20, cwd="/", home="/"))


def test_set_catalog_announces_deltas_once() -> None:
    a = _agent()
    first = apply_catalog(
        a,
        pb.SetCatalogRequest(
            deferred_tools=pb.DeferredTools(names=["b", "a", "b"]),
            skill_listing=pb.SkillListing(
                skills=[pb.SkillListingEntry(name="commit", description="Commit changes")]
            ),
        ),
    )
    assert [x.kind for x in first] == [
        pb.ATTACHMENT_KIND_DEFERRED_TOOLS_DELTA,
        pb.ATTACHMENT_KIND_SKILL_LISTING,
    ]
    assert list(first[0].deferred_tools_delta.added_names) == ["a", "b"]
    assert text_of(first[1]) == render.wrap_system_reminder(
        render.skill_listing([("commit", "Commit changes")])
    )
    assert first[0].tokens == _core.estimate(text_of(first[0]))
    # Same catalogue again: nothing new to announce.
    assert (
        apply_catalog(a, pb.SetCatalogRequest(deferred_tools=pb.DeferredTools(names=["a", "b"])))
        == []
    )
    # A removal and an addition; absent parts stay as they are.
    again = apply_catalog(
        a, pb.SetCatalogRequest(deferred_tools=pb.DeferredTools(names=["a", "c"]))
    )
    (delta,) = again
    assert list(delta.deferred_tools_delta.added_names) == ["c"]
    assert list(delta.deferred_tools_delta.removed_names) == ["b"]
    assert a.catalog.announced_tools == {"a", "c"}
    # The listing announces only skills not sent yet.
    more = apply_catalog(
        a,
        pb.SetCatalogRequest(
            skill_listing=pb.SkillListing(
                skills=[pb.SkillListingEntry(name="commit"), pb.SkillListingEntry(name="review")]
            )
        ),
    )
    assert [e.name for e in more[0].skill_listing.skills] == ["review"]


def test_agent_listing_initial_then_new() -> None:
    a = _agent()
    (first,) = apply_catalog(
        a,
        pb.SetCatalogRequest(
            agent_types=pb.AgentTypes(
                agent_types=[pb.AgentType(agent_type="Explore", when_to_use="search")],
                show_concurrency_note=True,
            )
        ),
    )
    assert first.agent_listing_delta.is_initial
    assert "Launch multiple agents concurrently" in text_of(first)
    (second,) = apply_catalog(
        a,
        pb.SetCatalogRequest(
            agent_types=pb.AgentTypes(
                agent_types=[pb.AgentType(agent_type="Plan", when_to_use="plan", tools=["Read"])],
                show_concurrency_note=True,
            )
        ),
    )
    d = second.agent_listing_delta
    assert (d.is_initial, list(d.added_types), list(d.removed_types)) == (
        False,
        ["Plan"],
        ["Explore"],
    )
    assert text_of(second) == render.wrap_system_reminder(
        render.agent_listing_delta(
            ["- Plan: plan (Tools: Read)"],
            ["Explore"],
            is_initial=False,
            show_concurrency_note=True,
        )
    )


def test_mcp_servers_without_instructions_announce_nothing() -> None:
    a = _agent()
    out = apply_catalog(
        a,
        pb.SetCatalogRequest(
            mcp_servers=pb.McpServers(
                servers=[pb.McpServer(name="z", instructions="Z."), pb.McpServer(name="empty")]
            )
        ),
    )
    assert list(out[0].mcp_instructions_delta.added_names) == ["z"]
    assert text_of(out[0]) == render.wrap_system_reminder(
        render.mcp_instructions_delta(["## z\nZ."], [])
    )


def test_catalog_rejects_empty_names_without_changing_anything() -> None:
    a = _agent()
    with pytest.raises(InvalidArgument) as err:
        apply_catalog(a, pb.SetCatalogRequest(deferred_tools=pb.DeferredTools(names=["ok", " "])))
    assert err.value.reason == "INVALID_CATALOG"
    assert a.catalog.deferred_tools is None


def test_announced_rebuilt_from_messages_in_order() -> None:
    def att(added: list[str], removed: list[str]) -> pb.ContentBlock:
        return pb.ContentBlock(
            attachment=pb.Attachment(
                deferred_tools_delta=pb.DeferredToolsDelta(added_names=added, removed_names=removed)
            )
        )

    msgs = [
        pb.ConversationMessage(content=[att(["a", "b"], []), pb.ContentBlock(text=b"hi")]),
        pb.ConversationMessage(content=[att(["c"], ["a"])]),
    ]
    assert announced_in_messages(msgs) == Announced(tools=frozenset({"b", "c"}))


# --- hooks -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stdout", "context"),
    [
        ('{"hookSpecificOutput": {"additionalContext": "A"}}', "A"),
        ('{"additionalContext": "B"}', "B"),
        ('{"hookSpecificOutput": {"hookEventName": "SessionStart"}}', None),
        ("plain\ntext\n", "plain\ntext"),
        ("{not json", "{not json"),
        ("", None),
        ("   \n", None),
    ],
)
def test_parse_hook_output(stdout: str, context: str | None) -> None:
    assert parse_hook_output(stdout) == context
