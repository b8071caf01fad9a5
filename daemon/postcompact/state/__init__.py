"""The daemon's state (docs/architecture.md §2, §5): the model (`model`: sessions, agents and
what they hold), the registry that holds it in memory (`registry`), the unit of work every change
goes through (`unit`), and the `Store` protocol behind which persistence keeps it (`store`;
`null`: the store that keeps nothing). `postcompact.persist` implements the store on SQLite.

The model's names are exported here; the registry is imported from `postcompact.state.registry`
(it needs the configuration, which the model's users do not).
"""

from postcompact.state.model import (
    MAIN_AGENT,
    AgentState,
    CarriedRead,
    Catalog,
    InvokedSkill,
    Session,
    Tasks,
    catalog_entries,
    catalog_parts,
    content_digest,
)
from postcompact.state.store import ROW_BYTES, Change, Store, Written

__all__ = [
    "MAIN_AGENT",
    "ROW_BYTES",
    "AgentState",
    "CarriedRead",
    "Catalog",
    "Change",
    "InvokedSkill",
    "Session",
    "Store",
    "Tasks",
    "Written",
    "catalog_entries",
    "catalog_parts",
    "content_digest",
]
