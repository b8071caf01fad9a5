"""What an agent works with besides its files: the skills it invoked (RecordSkill), its plan
file (SetPlan) and permission mode (SetMode), and the session's background tasks (UpsertTask)
(docs/claude-code.md §5, §6, §8). Each change is one unit of work (`Registry.mutate`), within the
limits and the content ceiling, which are checked before anything changes.

SetPlan names a path inside the session's roots or its plans directory (`Session.read_roots`);
SetPlan("") goes back to the default plan file and answers its path (`restore.pipeline.plan_path`).
"""

from __future__ import annotations

from postcompact.config import Config
from postcompact.errors import InvalidArgument, ResourceExhausted
from postcompact.paths import now_ms
from postcompact.restore.pipeline import plan_path
from postcompact.service.files import check_utf8, resolve_path
from postcompact.state import ROW_BYTES, AgentState, InvokedSkill, Session
from postcompact.state.registry import Registry
from postcompact.units import INT64_MAX
from postcompact.v1 import postcompact_pb2 as pb

__all__ = ["WorkService"]


class WorkService:
    def __init__(self, registry: Registry, config: Config):
        self.registry = registry
        self.config = config

    async def record_skill(self, req: pb.RecordSkillRequest) -> pb.RecordSkillResponse:
        s, a = await self.registry.agent(req.session_id, req.agent_id)
        if not req.name:
            raise InvalidArgument("SKILL_NAME_REQUIRED", "name must not be empty")
        check_utf8("content", req.content)
        if req.invoked_at_ms < 0:
            raise InvalidArgument("BAD_TIMESTAMP", "invoked_at_ms must be >= 0 (0 = now)")
        limit = self.config.max_skills_per_agent
        if req.name not in a.skills and len(a.skills) >= limit:
            raise ResourceExhausted(
                "TOO_MANY_SKILLS",
                f"agent {a.agent_id!r} of session {s.session_id!r} holds {limit} invoked skills "
                "(limits.max_skills_per_agent)",
                {"limit": "max_skills_per_agent"},
            )
        old = a.skills.get(req.name)
        await self.registry.admit(
            len(req.content) + len(req.path) + len(req.name),
            f"RecordSkill of {req.name!r}",
            released=old.charge.size if old is not None else 0,
        )
        async with self.registry.mutate(s, a, room=req.ByteSize() + ROW_BYTES) as change:
            change.skills.append(self._invoke(a, req))
        return pb.RecordSkillResponse(skills=len(a.skills))

    @staticmethod
    def _invoke(a: AgentState, req: pb.RecordSkillRequest) -> InvokedSkill:
        """The skill `req` records, now the agent's (same name: overwritten, refreshed)."""
        # 0 = now, kept strictly after this agent's latest invocation so that of two calls in
        # the same millisecond the later one still ranks newer (skills sort newest first).
        latest = max((sk.invoked_at_ms for sk in a.skills.values()), default=0)
        # Capped at the int64 maximum (the proto's and SQLite's): after a skill recorded at
        # 2**63-1, "strictly later" does not exist.
        at = req.invoked_at_ms or min(max(now_ms(), latest + 1), INT64_MAX)
        a.skills.pop(req.name, None)  # same name: overwrite and refresh (docs/claude-code.md §5)
        skill = InvokedSkill(req.name, req.path, req.content, at)
        a.skills[req.name] = skill
        return skill

    async def set_plan(self, req: pb.SetPlanRequest) -> pb.SetPlanResponse:
        s, a = await self.registry.agent(req.session_id, req.agent_id)
        if not req.plan_file_path:
            async with self.registry.mutate(s, a, room=None) as change:
                a.plan_file_path = None
                change.agent = True
            return pb.SetPlanResponse(plan_file_path=plan_path(s, a))  # the default's path
        path = resolve_path(
            s,
            req.plan_file_path,
            field="plan_file_path",
            memory_files=False,  # a plan file lives in the roots or the plans directory only
        )
        async with self.registry.mutate(s, a) as change:
            a.plan_file_path = path
            change.agent = True
        return pb.SetPlanResponse(plan_file_path=path)

    async def set_mode(self, req: pb.SetModeRequest) -> pb.SetModeResponse:
        s, a = await self.registry.agent(req.session_id, req.agent_id)
        if req.mode not in pb.PermissionMode.values():
            raise InvalidArgument("BAD_MODE", f"unknown permission mode {req.mode}")
        async with self.registry.mutate(s, a, room=None) as change:
            a.mode = req.mode or pb.PERMISSION_MODE_DEFAULT
            change.agent = True
        return pb.SetModeResponse()

    async def upsert_task(self, req: pb.UpsertTaskRequest) -> pb.UpsertTaskResponse:
        s = await self.registry.session(req.session_id)
        t = req.task
        if not t.task_id:
            raise InvalidArgument("TASK_ID_REQUIRED", "task.task_id must not be empty")
        if t.status not in pb.TaskStatus.values():
            raise InvalidArgument("BAD_TASK_STATUS", f"unknown task status {t.status}")
        self._check_task_limits(s, t)
        old = s.tasks.get(t.task_id)
        released = old.ByteSize() if old is not None else 0
        await self.registry.admit(t.ByteSize(), f"UpsertTask of {t.task_id!r}", released=released)
        async with self.registry.mutate(s, room=t.ByteSize() + ROW_BYTES) as change:
            task = pb.Task()
            task.CopyFrom(t)
            s.tasks[t.task_id] = task
            change.tasks.append(task)
        return pb.UpsertTaskResponse()

    def _check_task_limits(self, s: Session, t: pb.Task) -> None:
        old = s.tasks.get(t.task_id)
        cfg = self.config
        if old is None and len(s.tasks) >= cfg.max_tasks_per_session:
            raise ResourceExhausted(
                "TOO_MANY_TASKS",
                f"session {s.session_id!r} holds {cfg.max_tasks_per_session} tasks "
                "(limits.max_tasks_per_session)",
                {"limit": "max_tasks_per_session"},
            )
        if t.agent_id and (old is None or old.agent_id != t.agent_id):
            n = sum(1 for x in s.tasks.values() if x.agent_id == t.agent_id)
            if n >= cfg.max_tasks_per_agent:
                raise ResourceExhausted(
                    "TOO_MANY_TASKS_FOR_AGENT",
                    f"session {s.session_id!r} holds {cfg.max_tasks_per_agent} tasks of agent "
                    f"{t.agent_id!r} (limits.max_tasks_per_agent)",
                    {"limit": "max_tasks_per_agent"},
                )
