"""The catalogue (SetCatalog), the three delta attachments and the skill listing
(docs/claude-code.md §5, §7).

What has been announced is a set per catalogue, kept on the agent and rebuilt the way Claude Code
rebuilds it from transcript attachments: start empty, then for each earlier delta attachment in
order add its `added*` and remove its `removed*` (`announced_in_messages`). A delta is
current minus announced (added) and announced minus current (removed); nothing is sent when both are
empty. After a FULL compaction the baseline is empty, so everything current is announced again;
after a PARTIAL one it is what the preserved tail's attachments announced.

Sorting follows Claude Code: deferred-tool names by JavaScript's default sort (UTF-16 code
units), agent types and MCP server names by `localeCompare` (approximated, see
`render.locale_sort_key`). MCP servers without instructions announce nothing.

The skill listing announces names not yet in `sent_skill_names`. Claude Code 2.1.88 (and the
default profile) never reset that set at compaction; current Claude Code announces the listing
again after a compaction, against the listing the kept tail carries (`Rules.reannounce_skill_
listing`, `skill_listing_again`).

Placement: a system section under profiles with system sections, else user-placed and wrapped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from postcompact import render
from postcompact.errors import InvalidArgument
from postcompact.render import DEFAULT_TEMPLATES, Templates
from postcompact.restore.outcome import make
from postcompact.state import AgentState, Catalog
from postcompact.v1 import postcompact_pb2 as pb

__all__ = [
    "Announced",
    "announced_in_messages",
    "apply_catalog",
    "catalog_deltas",
    "listed_in_messages",
    "skill_listing_again",
]


@dataclass(frozen=True, slots=True)
class Announced:
    tools: frozenset[str] = frozenset()
    agents: frozenset[str] = frozenset()
    mcp: frozenset[str] = frozenset()

    @staticmethod
    def of(catalog: Catalog) -> Announced:
        return Announced(
            frozenset(catalog.announced_tools),
            frozenset(catalog.announced_agent_types),
            frozenset(catalog.announced_mcp),
        )

    def store(self, catalog: Catalog) -> None:
        catalog.announced_tools = set(self.tools)
        catalog.announced_agent_types = set(self.agents)
        catalog.announced_mcp = set(self.mcp)


def announced_in_messages(messages: Iterable[pb.ConversationMessage]) -> Announced:
    """Replay the delta attachments found in `messages`, in order, from empty sets."""
    tools: set[str] = set()
    agents: set[str] = set()
    mcp: set[str] = set()
    for message in messages:
        for block in message.content:
            if block.WhichOneof("block") != "attachment":
                continue
            att = block.attachment
            payload = att.WhichOneof("payload")
            if payload == "deferred_tools_delta":
                tools.update(att.deferred_tools_delta.added_names)
                tools.difference_update(att.deferred_tools_delta.removed_names)
            elif payload == "agent_listing_delta":
                agents.update(att.agent_listing_delta.added_types)
                agents.difference_update(att.agent_listing_delta.removed_types)
            elif payload == "mcp_instructions_delta":
                mcp.update(att.mcp_instructions_delta.added_names)
                mcp.difference_update(att.mcp_instructions_delta.removed_names)
    return Announced(frozenset(tools), frozenset(agents), frozenset(mcp))


def listed_in_messages(messages: Iterable[pb.ConversationMessage]) -> set[str]:
    """Skill names the skill-listing attachments in `messages` announced."""
    names: set[str] = set()
    for message in messages:
        for block in message.content:
            if block.WhichOneof("block") == "attachment":
                att = block.attachment
                if att.WhichOneof("payload") == "skill_listing":
                    names.update(e.name for e in att.skill_listing.skills)
    return names


def catalog_deltas(
    catalog: Catalog,
    announced: Announced,
    templates: Templates = DEFAULT_TEMPLATES,
    placement: str = render.USER,
) -> tuple[list[pb.Attachment], Announced]:
    """The delta attachments against `announced` (Claude Code's order) and the sets after them.

    A catalogue never set (None) yields no delta and keeps its announced set as given.
    """
    out: list[pb.Attachment] = []
    tools, agents, mcp = announced.tools, announced.agents, announced.mcp

    if catalog.deferred_tools is not None:
        current = set(catalog.deferred_tools)
        added = sorted(current - tools, key=render.js_sort_key)
        removed = sorted(tools - current, key=render.js_sort_key)
        if added or removed:
            text = render.deferred_tools_delta(added, removed, templates)
            delta = pb.DeferredToolsDelta(
                added_names=added, added_lines=added, removed_names=removed
            )
            out.append(
                make(
                    pb.ATTACHMENT_KIND_DEFERRED_TOOLS_DELTA,
                    placement,
                    render.blocks([text], placement, templates),
                    deferred_tools_delta=delta,
                )
            )
        tools = frozenset(current)

    if catalog.agent_types is not None:
        by_type = {a.agent_type: a for a in catalog.agent_types}
        current = set(by_type)
        added = sorted(current - agents, key=render.locale_sort_key)
        removed = sorted(agents - current, key=render.locale_sort_key)
        if added or removed:
            lines = [
                render.agent_line(
                    render.AgentLine(t, by_type[t].when_to_use, tuple(by_type[t].tools)), templates
                )
                for t in added
            ]
            is_initial = not agents
            note = catalog.show_concurrency_note
            text = render.agent_listing_delta(
                lines,
                removed,
                is_initial=is_initial,
                show_concurrency_note=note,
                templates=templates,
            )
            agent_delta = pb.AgentListingDelta(
                added_types=added,
                added_lines=lines,
                removed_types=removed,
                is_initial=is_initial,
                show_concurrency_note=note,
            )
            out.append(
                make(
                    pb.ATTACHMENT_KIND_AGENT_LISTING_DELTA,
                    placement,
                    render.blocks([text], placement, templates),
                    agent_listing_delta=agent_delta,
                )
            )
        agents = frozenset(current)

    if catalog.mcp_servers is not None:
        servers = {name: text for name, text in catalog.mcp_servers.items() if text}
        current = set(servers)
        added = sorted(current - mcp, key=render.locale_sort_key)
        removed = sorted(mcp - current, key=render.locale_sort_key)
        if added or removed:
            blocks = [render.mcp_block(name, servers[name], templates) for name in added]
            text = render.mcp_instructions_delta(blocks, removed, templates)
            mcp_delta = pb.McpInstructionsDelta(
                added_names=added, added_blocks=blocks, removed_names=removed
            )
            out.append(
                make(
                    pb.ATTACHMENT_KIND_MCP_INSTRUCTIONS_DELTA,
                    placement,
                    render.blocks([text], placement, templates),
                    mcp_instructions_delta=mcp_delta,
                )
            )
        mcp = frozenset(current)

    return out, Announced(tools, agents, mcp)


def _names(values: Sequence[str], field: str) -> list[str]:
    out: dict[str, None] = {}
    for i, name in enumerate(values):
        if not name.strip():
            raise InvalidArgument(
                "INVALID_CATALOG", f"{field}[{i}] must not be empty", {"field": f"{field}[{i}]"}
            )
        out.setdefault(name, None)
    return list(out)


def _skill_listing(
    entries: Sequence[pb.SkillListingEntry], templates: Templates, placement: str
) -> pb.Attachment:
    text = render.skill_listing([(e.name, e.description) for e in entries], templates)
    return make(
        pb.ATTACHMENT_KIND_SKILL_LISTING,
        placement,
        render.blocks([text], placement, templates),
        skill_listing=pb.SkillListingAttachment(skills=entries),
    )


def skill_listing_again(
    catalog: Catalog, kept: set[str], templates: Templates, placement: str
) -> tuple[pb.Attachment | None, set[str]]:
    """After a compaction (current Claude Code): the listing minus what the kept tail announced
    (`kept`), and the names then announced. None when nothing is to be sent."""
    if catalog.skill_listing is None:
        return None, set(kept)
    new = [e for e in catalog.skill_listing if e.name not in kept]
    sent = kept | {e.name for e in new}
    return (_skill_listing(new, templates, placement) if new else None), sent


def apply_catalog(
    agent: AgentState,
    req: pb.SetCatalogRequest,
    templates: Templates = DEFAULT_TEMPLATES,
    placement: str = render.USER,
) -> list[pb.Attachment]:
    """Store the catalogue parts present in `req`; return what to announce now and mark it so."""
    cat = agent.catalog
    # Validate everything before changing anything.
    tools = _names(req.deferred_tools.names, "deferred_tools.names")
    agent_types = list(req.agent_types.agent_types)
    _names([a.agent_type for a in agent_types], "agent_types.agent_types.agent_type")
    servers = list(req.mcp_servers.servers)
    _names([s.name for s in servers], "mcp_servers.servers.name")
    skills = list(req.skill_listing.skills)
    _names([s.name for s in skills], "skill_listing.skills.name")

    if req.HasField("deferred_tools"):
        cat.deferred_tools = tools
    if req.HasField("agent_types"):
        copies: dict[str, pb.AgentType] = {}
        for a in agent_types:
            copies.setdefault(
                a.agent_type,
                pb.AgentType(agent_type=a.agent_type, when_to_use=a.when_to_use, tools=a.tools),
            )
        cat.agent_types = list(copies.values())
        cat.show_concurrency_note = req.agent_types.show_concurrency_note
    if req.HasField("mcp_servers"):
        cat.mcp_servers = {}
        for s in servers:
            cat.mcp_servers.setdefault(s.name, s.instructions)
    if req.HasField("skill_listing"):
        listed: dict[str, pb.SkillListingEntry] = {}
        for e in skills:
            listed.setdefault(e.name, pb.SkillListingEntry(name=e.name, description=e.description))
        cat.skill_listing = list(listed.values())

    out, announced = catalog_deltas(cat, Announced.of(cat), templates, placement)
    announced.store(cat)

    if cat.skill_listing is not None:
        new = [e for e in cat.skill_listing if e.name not in cat.sent_skill_names]
        if new:
            out.append(_skill_listing(new, templates, placement))
            cat.sent_skill_names.update(e.name for e in new)
    return out
