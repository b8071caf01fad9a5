"""The restoration pipeline (docs/architecture.md §3): what Compact hands back after a compaction.

- `policy`: RestorePolicy layers resolved into one `Policy` (defaults = Claude Code's constants).
- `context.CompactContext`: what one compaction runs under (policy, templates, rules, limits).
- `pipeline.run_compact`: the pipeline, in Claude Code's order.
- `file_step`: the file step: selection, parallel re-read, per-file cap, first-fit budget, cache
  re-seed, the decisions.
- `catalog`: SetCatalog and the deferred-tools / agent-listing / MCP-instructions deltas.
- `hooks`: session-start hooks run at Compact.
- `outcome`: decisions and per-category totals.
- `meter`: token measuring and truncation through the Rust core, per the policy's counter.
"""
