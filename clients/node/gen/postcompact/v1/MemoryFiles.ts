// Original file: ../../proto/postcompact/v1/postcompact.proto


/**
 * Memory files (CLAUDE.md and the like) are never restored as files: the harness re-reads them.
 */
export interface MemoryFiles {
  /**
   * File names looked up in cwd. Empty = ["CLAUDE.md", "CLAUDE.local.md"]; ["AGENTS.md"] for Codex.
   */
  'fileNames'?: (string)[];
  /**
   * Further memory paths (absolute or ~-relative). Empty = ["~/.claude/CLAUDE.md"] plus the
   * managed and auto-memory entry points Claude Code uses (docs/claude-code.md §3).
   */
  'paths'?: (string)[];
}

/**
 * Memory files (CLAUDE.md and the like) are never restored as files: the harness re-reads them.
 */
export interface MemoryFiles__Output {
  /**
   * File names looked up in cwd. Empty = ["CLAUDE.md", "CLAUDE.local.md"]; ["AGENTS.md"] for Codex.
   */
  'fileNames': (string)[];
  /**
   * Further memory paths (absolute or ~-relative). Empty = ["~/.claude/CLAUDE.md"] plus the
   * managed and auto-memory entry points Claude Code uses (docs/claude-code.md §3).
   */
  'paths': (string)[];
}
