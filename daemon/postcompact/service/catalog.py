"""SetCatalog: an agent's catalogue (deferred tools, agent types, MCP servers, the skill listing)
and what announcing it attaches (docs/claude-code.md §7).

The catalogue after the request is checked against the limits (`limits.max_catalog_entries`,
`limits.max_catalog_bytes`) and the content ceiling before anything changes; the change and what
it announces (`restore.catalog.apply_catalog`: the deltas against what the agent was told, in
the session's wording and placement) are one unit of work.
"""

from __future__ import annotations

from postcompact import core, render
from postcompact.config import Config
from postcompact.errors import ResourceExhausted
from postcompact.restore.catalog import apply_catalog
from postcompact.state import ROW_BYTES, AgentState, catalog_entries, catalog_parts
from postcompact.state.registry import Registry
from postcompact.v1 import postcompact_pb2 as pb

__all__ = ["CatalogService"]


class CatalogService:
    def __init__(self, registry: Registry, config: Config):
        self.registry = registry
        self.config = config

    async def set_catalog(self, req: pb.SetCatalogRequest) -> pb.SetCatalogResponse:
        s, a = await self.registry.agent(req.session_id, req.agent_id)
        size = self._check_limits(a, req)
        held = a.catalog.charge.size if a.catalog.charge is not None else 0
        await self.registry.admit(size, "SetCatalog", released=held, keep=s)
        placement = render.SYSTEM if s.rules.system_sections else render.USER
        async with self.registry.mutate(s, a, room=size + ROW_BYTES) as change:
            attachments = apply_catalog(a, req, s.templates, placement)
            a.catalog.charge = core.Charge(size)
            change.catalog = True
        return pb.SetCatalogResponse(attachments=attachments)

    def _check_limits(self, a: AgentState, req: pb.SetCatalogRequest) -> int:
        """The catalogue as it would be after `req`, checked against the limits; its size."""
        merged = catalog_parts(a.catalog)
        for part in ("deferred_tools", "agent_types", "mcp_servers", "skill_listing"):
            if req.HasField(part):
                getattr(merged, part).CopyFrom(getattr(req, part))
        entries, size = catalog_entries(merged), merged.ByteSize()
        cfg = self.config
        if entries > cfg.max_catalog_entries:
            raise ResourceExhausted(
                "CATALOG_TOO_MANY_ENTRIES",
                f"the catalogue would hold {entries} entries (deferred tools, agent types, MCP "
                f"servers and skills together), over limits.max_catalog_entries "
                f"({cfg.max_catalog_entries})",
                {"limit": "max_catalog_entries"},
            )
        if size > cfg.max_catalog_bytes:
            raise ResourceExhausted(
                "CATALOG_TOO_LARGE",
                f"the catalogue would take {size} bytes, over limits.max_catalog_bytes "
                f"({cfg.max_catalog_bytes})",
                {"limit": "max_catalog_bytes"},
            )
        return size
