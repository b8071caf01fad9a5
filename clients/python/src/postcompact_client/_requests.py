"""Request builders shared by the sync and asyncio clients (friendly arguments -> messages).

Every value a caller passes in may be the typed one (`postcompact_client.types`), the protobuf
message, or (where it was accepted before) a mapping or a tuple; enums by member, int or name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypedDict

from postcompact_client import types
from postcompact_client.v1 import postcompact_pb2 as pb

PolicyArg = types.RestorePolicy | pb.RestorePolicy | Mapping[str, Any] | None
Text = bytes | str
TaskArg = types.Task | pb.Task | Mapping[str, Any]
AgentTypeArg = types.AgentType | pb.AgentType | Mapping[str, Any]
McpServersArg = Mapping[str, str] | Iterable[types.McpServer | pb.McpServer]
SkillEntryArg = types.SkillListingEntry | pb.SkillListingEntry | tuple[str, str]
MessageArg = types.ConversationMessage | pb.ConversationMessage
TemplatesArg = Mapping[str, str] | types.TemplateSpec | pb.TemplateSpec
# The lines of a write's new content it added or changed: (first, last) pairs, 1-based and
# inclusive, or the messages.
ChangedLinesArg = Iterable[tuple[int, int] | pb.LineRange] | pb.ChangedLines


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
    if isinstance(value, types.RestorePolicy):
        return value.to_pb()
    p = pb.RestorePolicy()
    for key, v in value.items():
        if key == "oversize":
            p.oversize = _enum(pb.OversizePolicy, "OVERSIZE_POLICY_", v)
        elif key == "counter":
            p.counter = _enum(pb.TokenCounter, "TOKEN_COUNTER_", v)
        elif key == "ranking":
            p.ranking = _enum(pb.FileRanking, "FILE_RANKING_", v)
        elif key in ("complement", "match_budget"):
            setattr(p, key, _enum(pb.HarnessRule, "HARNESS_RULE_", v))
        else:
            setattr(p, key, v)
    return p


def changed_lines(value: ChangedLinesArg) -> pb.ChangedLines:
    """`RecordWriteRequest.changed_lines` (empty: the write only deleted lines)."""
    if isinstance(value, pb.ChangedLines):
        return value
    return pb.ChangedLines(
        ranges=[
            r if isinstance(r, pb.LineRange) else pb.LineRange(first=r[0], last=r[1]) for r in value
        ]
    )


def agent_mode(value: str | int | None) -> pb.AgentMode.ValueType:
    result: pb.AgentMode.ValueType = _enum(pb.AgentMode, "AGENT_MODE_", value)
    return result


def permission_mode(value: str | int) -> pb.PermissionMode.ValueType:
    result: pb.PermissionMode.ValueType = _enum(pb.PermissionMode, "PERMISSION_MODE_", value)
    return result


def compact_kind(value: str | int | None) -> pb.CompactKind.ValueType:
    result: pb.CompactKind.ValueType = _enum(pb.CompactKind, "COMPACT_KIND_", value)
    return result


def task(value: TaskArg) -> pb.Task:
    if isinstance(value, pb.Task):
        return value
    if isinstance(value, types.Task):
        return value.to_pb()
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
    templates: TemplatesArg | None = None,
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
    if isinstance(templates, types.TemplateSpec):
        req.templates.CopyFrom(templates.to_pb())
    elif isinstance(templates, pb.TemplateSpec):
        req.templates.CopyFrom(templates)
    elif templates is not None:
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
    agent_types: Iterable[AgentTypeArg] | None = None,
    show_concurrency_note: bool = False,
    mcp_servers: McpServersArg | None = None,
    skill_listing: Iterable[SkillEntryArg] | None = None,
) -> pb.SetCatalogRequest:
    req = pb.SetCatalogRequest(session_id=session_id, agent_id=agent_id)
    if deferred_tools is not None:
        req.deferred_tools.CopyFrom(pb.DeferredTools(names=list(deferred_tools)))
    if agent_types is not None:
        req.agent_types.CopyFrom(
            pb.AgentTypes(
                agent_types=[agent_type(t) for t in agent_types],
                show_concurrency_note=show_concurrency_note,
            )
        )
    if mcp_servers is not None:
        servers = (
            [pb.McpServer(name=k, instructions=v) for k, v in mcp_servers.items()]
            if isinstance(mcp_servers, Mapping)
            else [s.to_pb() if isinstance(s, types.McpServer) else s for s in mcp_servers]
        )
        req.mcp_servers.CopyFrom(pb.McpServers(servers=servers))
    if skill_listing is not None:
        req.skill_listing.CopyFrom(pb.SkillListing(skills=[skill_entry(e) for e in skill_listing]))
    return req


def agent_type(value: AgentTypeArg) -> pb.AgentType:
    if isinstance(value, pb.AgentType):
        return value
    if isinstance(value, types.AgentType):
        return value.to_pb()
    return pb.AgentType(**value)


def skill_entry(value: SkillEntryArg) -> pb.SkillListingEntry:
    if isinstance(value, pb.SkillListingEntry):
        return value
    if isinstance(value, types.SkillListingEntry):
        return value.to_pb()
    return pb.SkillListingEntry(name=value[0], description=value[1])


def message(value: MessageArg) -> pb.ConversationMessage:
    """A preserved message: typed ones (holding typed attachments, e.g. from an earlier
    SetCatalog) are converted; protobuf ones go as they are."""
    return value.to_pb() if isinstance(value, types.ConversationMessage) else value


def compact(
    session_id: str,
    agent_id: str,
    *,
    kind: str | int | None = None,
    preserved_messages: Sequence[MessageArg] = (),
    policy_: PolicyArg = None,
    additional_context: Sequence[str] = (),
    skip_hooks: bool = False,
    include_content: bool = False,
) -> pb.CompactRequest:
    req = pb.CompactRequest(
        session_id=session_id,
        agent_id=agent_id,
        kind=compact_kind(kind),
        preserved_messages=[message(m) for m in preserved_messages],
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


class _Placed(Protocol):
    """An attachment, typed or protobuf: its placement and its text blocks."""

    @property
    def placement(self) -> int: ...
    @property
    def blocks(self) -> Sequence[str]: ...


class _WithAttachments(Protocol):
    """A response with attachments: Compact's, PreviewCompact's, SetCatalog's (typed or pb)."""

    @property
    def attachments(self) -> Iterable[_Placed]: ...


Attachments = _WithAttachments | Iterable[_Placed]


def _attachments(response: Attachments) -> Iterable[_Placed]:
    # A response, or the attachments themselves (set_catalog returns a list of them).
    if isinstance(response, Iterable):
        return response
    return response.attachments


@dataclass(frozen=True, slots=True)
class Injection:
    """Where a harness puts the attachments' text, as Claude Code lays out a request:
    `user_blocks` are text blocks of the user message after the summary, in order;
    `system_text` is one system message at the end ("" when no attachment is system-placed)."""

    user_blocks: list[str]
    system_text: str


def join(response: Attachments) -> Injection:
    """The user-placed blocks in order, and the system-placed sections joined by "\\n\\n".
    `response`: what compact(), preview_compact() return (typed or protobuf), or a sequence of
    attachments (set_catalog's)."""
    user: list[str] = []
    system: list[str] = []
    for a in _attachments(response):
        if a.placement == pb.PLACEMENT_SYSTEM:
            system.extend(a.blocks)
        else:
            user.extend(a.blocks)
    return Injection(user, "\n\n".join(system))


def rendered_text(response: Attachments) -> str:
    """All the text as one string: every attachment's blocks, in order, joined by "\\n" (under
    the default and claude-code-2.1.88 profiles, where everything is user-placed, this is the
    user message's text; `join` keeps the placement)."""
    return "\n".join(b for a in _attachments(response) for b in a.blocks)
