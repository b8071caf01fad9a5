"""The daemon's in-memory state model (docs/architecture.md §2).

Sessions hold agents; everything is per (session, agent) except memory files, tasks and the
session's settings. The file-state cache is the Rust core's `FileStateCache`; the rest is plain
Python data that the restoration pipeline reads and the servicer writes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, fields
from typing import NamedTuple

from postcompact import profiles
from postcompact.core import Charge, FileState, FileStateCache, Framed, RestoredFile
from postcompact.render import Templates
from postcompact.state.seen import Seen
from postcompact.v1 import postcompact_pb2 as pb

MAIN_AGENT = ""
# The longest session or agent id, in characters (none may hold a control character either), and
# the longest path a session names or stores, in UTF-8 bytes (Linux's PATH_MAX): what a call may
# send, what an imported transcript may hold, what a stored row may have.
MAX_ID_LEN = 256
MAX_PATH_BYTES = 4096


def content_digest(content: bytes) -> bytes:
    """The SHA-256 a file-state entry's content is known by (the state database's
    `files.content_sha256`, carried reads).

    hashlib releases the GIL for anything but tiny inputs: callers that just read the content
    compute it with the read (on its worker thread when it has one; a small cached file is read
    on the event loop) and hand it to the store with the change (`Change.digests`).
    """
    return hashlib.sha256(content).digest()


@dataclass(slots=True)
class InvokedSkill:
    name: str
    path: str
    content: bytes
    invoked_at_ms: int
    # Counted in the daemon's content ledger while the skill is held (docs/reliability.md).
    charge: Charge = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.charge = Charge(len(self.content) + len(self.path) + len(self.name))


@dataclass(slots=True)
class Catalog:
    """What the harness currently offers, and what has been announced to the model so far."""

    deferred_tools: list[str] | None = None
    agent_types: list[pb.AgentType] | None = None
    show_concurrency_note: bool = False
    mcp_servers: dict[str, str] | None = None  # name -> instructions
    skill_listing: list[pb.SkillListingEntry] | None = None
    # Announced sets, rebuilt the way Claude Code rebuilds them from transcript attachments.
    announced_tools: set[str] = field(default_factory=set)
    announced_agent_types: set[str] = field(default_factory=set)
    announced_mcp: set[str] = field(default_factory=set)
    # Skill listing already sent: deliberately NOT reset by compaction (docs/claude-code.md §5).
    sent_skill_names: set[str] = field(default_factory=set)
    # The catalogue's serialised size in the content ledger (set where it is stored).
    charge: Charge | None = field(default=None, repr=False, compare=False)


def catalog_parts(cat: Catalog) -> pb.SetCatalogRequest:
    """The catalogue as a SetCatalogRequest holding exactly the parts that were set (what is
    stored, what the limits measure)."""
    req = pb.SetCatalogRequest()
    if cat.deferred_tools is not None:
        req.deferred_tools.SetInParent()
        req.deferred_tools.names.extend(cat.deferred_tools)
    if cat.agent_types is not None:
        req.agent_types.SetInParent()
        req.agent_types.agent_types.extend(cat.agent_types)
        req.agent_types.show_concurrency_note = cat.show_concurrency_note
    if cat.mcp_servers is not None:
        req.mcp_servers.SetInParent()
        req.mcp_servers.servers.extend(
            pb.McpServer(name=n, instructions=t) for n, t in cat.mcp_servers.items()
        )
    if cat.skill_listing is not None:
        req.skill_listing.SetInParent()
        req.skill_listing.skills.extend(cat.skill_listing)
    return req


def catalog_entries(req: pb.SetCatalogRequest) -> int:
    """The entries of a catalogue (limits.max_catalog_entries counts them)."""
    return (
        len(req.deferred_tools.names)
        + len(req.agent_types.agent_types)
        + len(req.mcp_servers.servers)
        + len(req.skill_listing.skills)
    )


class Tasks(dict[str, pb.Task]):
    """A session's tasks by id, insertion ordered; each counted in the content ledger (its
    serialised size) while it is held. Only these mutators are used on it."""

    __slots__ = ("_charges",)

    def __init__(self) -> None:
        super().__init__()
        self._charges: dict[str, Charge] = {}

    def __setitem__(self, task_id: str, task: pb.Task) -> None:
        super().__setitem__(task_id, task)
        self._charges[task_id] = Charge(task.ByteSize())

    def __delitem__(self, task_id: str) -> None:
        super().__delitem__(task_id)
        del self._charges[task_id]

    def clear(self) -> None:
        super().clear()
        self._charges.clear()


class RenderedFile(NamedTuple):
    """A file the core restored from `content` (the very object, which the cache holds) with
    the inputs `key` (`AgentState.rendered`): its attachment and measures (`file`); `held`: the
    rough estimate of `content` itself, which the next compaction's decisions report
    (`content_tokens`); the decision's `detail` and the `cost` against the budget, for a
    compaction that reads the same content back under the same inputs."""

    content: bytes
    key: tuple[object, ...]
    file: RestoredFile
    held: int
    detail: str
    cost: int

    @property
    def framed(self) -> Framed:
        """The file's attachment, serialised."""
        framed = self.file.framed
        assert framed is not None  # a memo is of an attached file
        return framed


@dataclass(slots=True)
class CarriedRead:
    """A full read from before a compaction, for the Edit/Write check after it (policy
    `carry_read_state`): the content the agent saw, kept as the object the cache held (no
    copy, no hash on Compact's path), until the state database stores its SHA-256 and length
    (`sha256` set, `content` then dropped)."""

    length: int
    sha256: bytes | None = None
    content: bytes | None = None


@dataclass(slots=True)
class AgentState:
    agent_id: str
    files: FileStateCache
    parent_agent_id: str = ""  # "" for the main thread and for its direct sub-agents
    nested_memory: set[str] = field(default_factory=set)
    skills: dict[str, InvokedSkill] = field(default_factory=dict)  # by skill name
    plan_file_path: str | None = None
    mode: pb.PermissionMode.ValueType = pb.PERMISSION_MODE_DEFAULT
    catalog: Catalog = field(default_factory=Catalog)
    compactions: int = 0
    # ReadFile under the default profile stores the read time as the timestamp, so the dedup
    # check needs the file's mtime as of that read: path -> (entry timestamp, mtime at the read).
    # Only trusted while the cache entry still has that timestamp (see service/files.py).
    read_mtimes: dict[str, tuple[int, int]] = field(default_factory=dict)
    # Entries re-created from the state database whose content could not be verified against the
    # file on disk (changed, missing or unreadable while the daemon was down): path -> the very
    # FileState object loaded (content b""). Such an entry is never "unchanged" (no dedup stub)
    # while the cache still holds that object (see persist/sqlstore.py and docs/persistence.md).
    unverified: dict[str, FileState] = field(default_factory=dict)
    # Full reads kept at compaction (path -> what was read), dropped when a live entry for the
    # path exists again; and files restored as too-large notes, which stay candidates at the
    # next compaction (path -> the timestamp their entry had), under profiles that say so.
    carried_reads: dict[str, CarriedRead] = field(default_factory=dict)
    carried_refs: dict[str, int] = field(default_factory=dict)
    # Complement mode (restore/harness.py): the files postcompact restored that the harness does
    # not hold as read (path -> the timestamp of the entry they were seeded with); the harness's
    # own selection leaves them out while the entry is still that seed.
    harness_unaware: dict[str, int] = field(default_factory=dict)
    # What the agent saw of each cached file since its last compaction (state/seen.py).
    seen: dict[str, Seen] = field(default_factory=dict)
    # The attachments the core rendered at the last compaction (restore/file_step.py `Rendered`,
    # by path): a file read back unchanged at the next one, restored the same way, is not
    # rendered again. A cache, not state: never stored, replaced (not changed) by each Compact.
    rendered: dict[str, RenderedFile] = field(default_factory=dict)
    # The same for Claude Code's own file step, which rules that weigh its selection run first
    # (restore/harness.py): a cache, never stored.
    harness_rendered: dict[str, RenderedFile] = field(default_factory=dict)

    def assign(self, other: AgentState) -> None:
        """Take every field of `other` (this object stays the one callers hold)."""
        for f in fields(self):
            setattr(self, f.name, getattr(other, f.name))


@dataclass(slots=True)
class Session:
    session_id: str
    cwd: str
    home: str
    roots: list[str]
    memory_paths: frozenset[str]  # normalised absolute paths of memory files
    plans_directory: str
    policy: pb.RestorePolicy  # session-level overrides (request overrides go on top)
    profile: pb.Profile.ValueType
    created_at_ms: int
    last_active_ms: int
    agents: dict[str, AgentState] = field(default_factory=dict)
    tasks: Tasks = field(default_factory=Tasks)  # by task id, insertion ordered
    # The session's wording (a serialised pb.TemplateSpec, stored), over the daemon's
    # `[templates]` (`daemon_templates`, set by the registry, not stored) and the profile's.
    templates_spec: bytes = b""
    daemon_templates: bytes = field(default=b"", compare=False)

    @property
    def read_roots(self) -> list[str]:
        """Where the session's files may be read and recorded: its roots, and its plans
        directory, a root for its own files (the agents' plan files live there)."""
        return [*(self.roots or [self.cwd]), self.plans_directory]

    @property
    def rules(self) -> profiles.Rules:
        return profiles.rules(self.profile)

    @property
    def templates(self) -> Templates:
        """Every model-facing string of this session: the profile's, then the daemon's
        `[templates]`, then the session's own (docs/profiles.md, "Wording")."""
        if not (self.daemon_templates or self.templates_spec):
            return self.rules.templates
        return profiles.templates_for(self.profile, self.daemon_templates, self.templates_spec)

    def new_cache(self, max_entries: int, max_size: int) -> FileStateCache:
        return FileStateCache(max_entries, max_size, cwd=self.cwd, home=self.home)
