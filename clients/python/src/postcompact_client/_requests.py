"""Request builders shared by the sync and asyncio clients (friendly arguments -> messages)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from postcompact_client.v1 import postcompact_pb2 as pb

PolicyArg = pb.RestorePolicy | Mapping[str, Any] | None
Text = bytes | str


class Ids(TypedDict):
    """The ids every per-agent request carries (`**ids` into its constructor)."""

    session_id: str
    agent_id: str


def as_bytes(value: Text) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


def _enum(enum: Any, prefix: str, value: str | int | None, default: int = 0) -> Any:
    if value is None:
        return default
    if isinstance(value, int):
        return value
    name = value.upper().replace("-", "_")
    return enum.Value(name if name.startswith(prefix) else prefix + name)


_PROFILES = {
    "default": "DEFAULT",
    "claude-code": "CLAUDE_CODE",
    "claude-code-2.1.88": "CLAUDE_CODE_2_1_88",
}


def profile(value: str | int | None) -> pb.Profile.ValueType:
    """A profile by its name ("default", "claude-code", "claude-code-2.1.88"), enum name or
    number."""
    if isinstance(value, str):
        value = _PROFILES.get(value.lower().replace("_", "-"), value.replace(".", "_"))
    result: pb.Profile.ValueType = _enum(pb.Profile, "PROFILE_", value)
    return result


def policy(value: PolicyArg) -> pb.RestorePolicy | None:
    if value is None or isinstance(value, pb.RestorePolicy):
        return value
    p = pb.RestorePolicy()
    for key, v in value.items():
        if key == "oversize":
            p.oversize = _enum(pb.OversizePolicy, "OVERSIZE_POLICY_", v)
        elif key == "counter":
            p.counter = _enum(pb.TokenCounter, "TOKEN_COUNTER_", v)
        elif key == "ranking":
            p.ranking = _enum(pb.FileRanking, "FILE_RANKING_", v)
        else:
            setattr(p, key, v)
    return p


def agent_mode(value: str | int | None) -> pb.AgentMode.ValueType:
    result: pb.AgentMode.ValueType = _enum(pb.AgentMode, "AGENT_MODE_", value)
    return result


def permission_mode(value: str | int) -> pb.PermissionMode.ValueType:
    result: pb.PermissionMode.ValueType = _enum(pb.PermissionMode, "PERMISSION_MODE_", value)
    return result


def compact_kind(value: str | int | None) -> pb.CompactKind.ValueType:
    result: pb.CompactKind.ValueType = _enum(pb.CompactKind, "COMPACT_KIND_", value)
    return result


def task(value: pb.Task | Mapping[str, Any]) -> pb.Task:
    if isinstance(value, pb.Task):
        return value
    fields = dict(value)
    if "status" in fields:
        fields["status"] = _enum(pb.TaskStatus, "TASK_STATUS_", fields["status"])
    return pb.Task(**fields)


def open_session(
    cwd: str,
    *,
    session_id: str = "",
    roots: Sequence[str] = (),
    memory_file_names: Sequence[str] = (),
    memory_paths: Sequence[str] = (),
    plans_directory: str = "",
    policy_: PolicyArg = None,
    profile_: str | int | None = None,
    home: str = "",
    templates: Mapping[str, str] | None = None,
) -> pb.OpenSessionRequest:
    req = pb.OpenSessionRequest(
        session_id=session_id,
        cwd=cwd,
        roots=list(roots),
        memory=pb.MemoryFiles(file_names=list(memory_file_names), paths=list(memory_paths)),
        plans_directory=plans_directory,
        profile=profile(profile_),
        home=home,
    )
    p = policy(policy_)
    if p is not None:
        req.policy.CopyFrom(p)
    if templates is not None:
        req.templates.SetInParent()
        for name, text in templates.items():
            if name == "preset":
                req.templates.preset = text
            else:
                req.templates.strings[name] = text
    return req


def catalog(
    session_id: str,
    agent_id: str,
    *,
    deferred_tools: Iterable[str] | None = None,
    agent_types: Iterable[pb.AgentType | Mapping[str, Any]] | None = None,
    show_concurrency_note: bool = False,
    mcp_servers: Mapping[str, str] | Iterable[pb.McpServer] | None = None,
    skill_listing: Iterable[pb.SkillListingEntry | tuple[str, str]] | None = None,
) -> pb.SetCatalogRequest:
    req = pb.SetCatalogRequest(session_id=session_id, agent_id=agent_id)
    if deferred_tools is not None:
        req.deferred_tools.CopyFrom(pb.DeferredTools(names=list(deferred_tools)))
    if agent_types is not None:
        types = [t if isinstance(t, pb.AgentType) else pb.AgentType(**t) for t in agent_types]
        req.agent_types.CopyFrom(
            pb.AgentTypes(agent_types=types, show_concurrency_note=show_concurrency_note)
        )
    if mcp_servers is not None:
        servers = (
            [pb.McpServer(name=k, instructions=v) for k, v in mcp_servers.items()]
            if isinstance(mcp_servers, Mapping)
            else list(mcp_servers)
        )
        req.mcp_servers.CopyFrom(pb.McpServers(servers=servers))
    if skill_listing is not None:
        entries = [
            e
            if isinstance(e, pb.SkillListingEntry)
            else pb.SkillListingEntry(name=e[0], description=e[1])
            for e in skill_listing
        ]
        req.skill_listing.CopyFrom(pb.SkillListing(skills=entries))
    return req


def compact(
    session_id: str,
    agent_id: str,
    *,
    kind: str | int | None = None,
    preserved_messages: Sequence[pb.ConversationMessage] = (),
    policy_: PolicyArg = None,
    additional_context: Sequence[str] = (),
    skip_hooks: bool = False,
    include_content: bool = False,
) -> pb.CompactRequest:
    req = pb.CompactRequest(
        session_id=session_id,
        agent_id=agent_id,
        kind=compact_kind(kind),
        preserved_messages=list(preserved_messages),
        additional_context=list(additional_context),
        skip_hooks=skip_hooks,
        include_content=include_content,
    )
    p = policy(policy_)
    if p is not None:
        req.policy.CopyFrom(p)
    return req


def import_transcript(
    transcript: Text,
    *,
    cwd: str,
    session_id: str = "",
    path_map: Mapping[str, str] | None = None,
    profile_: str | int | None = None,
    policy_: PolicyArg = None,
    home: str = "",
    replace: bool = False,
    file_mtimes: bool = False,
) -> pb.ImportTranscriptRequest:
    req = pb.ImportTranscriptRequest(
        transcript=as_bytes(transcript),
        cwd=cwd,
        session_id=session_id,
        path_map=[pb.PathMapping(source=k, target=v) for k, v in (path_map or {}).items()],
        profile=profile(profile_),
        home=home,
        replace=replace,
        file_mtimes=file_mtimes,
    )
    p = policy(policy_)
    if p is not None:
        req.policy.CopyFrom(p)
    return req


def preview(req: pb.CompactRequest) -> pb.PreviewCompactRequest:
    return pb.PreviewCompactRequest.FromString(req.SerializeToString())


_Attachments = pb.CompactResponse | pb.PreviewCompactResponse | pb.SetCatalogResponse


@dataclass(frozen=True, slots=True)
class Injection:
    """Where a harness puts the attachments' text, as Claude Code lays out a request:
    `user_blocks` are text blocks of the user message after the summary, in order;
    `system_text` is one system message at the end ("" when no attachment is system-placed)."""

    user_blocks: list[str]
    system_text: str


def join(response: _Attachments) -> Injection:
    """The user-placed blocks in order, and the system-placed sections joined by "\\n\\n"."""
    user: list[str] = []
    system: list[str] = []
    for a in response.attachments:
        if a.placement == pb.PLACEMENT_SYSTEM:
            system.extend(a.blocks)
        else:
            user.extend(a.blocks)
    return Injection(user, "\n\n".join(system))


def rendered_text(response: _Attachments) -> str:
    """All the text as one string: every attachment's blocks, in order, joined by "\\n" (under
    the default and claude-code-2.1.88 profiles, where everything is user-placed, this is the
    user message's text; `join` keeps the placement)."""
    return "\n".join(b for a in response.attachments for b in a.blocks)
