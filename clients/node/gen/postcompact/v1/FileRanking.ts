// Original file: ../../proto/postcompact/v1/postcompact.proto

/**
 * How candidate files are ordered before `max_files` keeps the first (docs/eval.md §2).
 */
export const FileRanking = {
  /**
   * inherit (RECENCY)
   */
  FILE_RANKING_UNSPECIFIED: 'FILE_RANKING_UNSPECIFIED',
  /**
   * newest entry timestamp first (Claude Code's rule)
   */
  FILE_RANKING_RECENCY: 'FILE_RANKING_RECENCY',
  /**
   * files the agent edited or wrote since the last compaction first, newest first within each
   */
  FILE_RANKING_EDITS_FIRST: 'FILE_RANKING_EDITS_FIRST',
  /**
   * the file's modification time on disk, newest first, whatever the profile stamps entries with
   * (Claude Code's order: a file written lately ranks above files only read since; docs/eval.md)
   */
  FILE_RANKING_MTIME: 'FILE_RANKING_MTIME',
  /**
   * the files Claude Code's own rule would restore (its 5 newest by mtime, in its order), then
   * the rest newest entry first: a superset of its choice where the budget allows (docs/eval.md)
   */
  FILE_RANKING_CLAUDE_CODE_FIRST: 'FILE_RANKING_CLAUDE_CODE_FIRST',
  /**
   * by value per token: a logistic model's probability that the agent needs the file next (from
   * its recency, size, lines seen, edits and whether it was read whole) over the tokens it costs;
   * the model trained by `postcompact eval` on real sessions (docs/eval.md §5)
   */
  FILE_RANKING_SCORED: 'FILE_RANKING_SCORED',
} as const;

/**
 * How candidate files are ordered before `max_files` keeps the first (docs/eval.md §2).
 */
export type FileRanking =
  /**
   * inherit (RECENCY)
   */
  | 'FILE_RANKING_UNSPECIFIED'
  | 0
  /**
   * newest entry timestamp first (Claude Code's rule)
   */
  | 'FILE_RANKING_RECENCY'
  | 1
  /**
   * files the agent edited or wrote since the last compaction first, newest first within each
   */
  | 'FILE_RANKING_EDITS_FIRST'
  | 2
  /**
   * the file's modification time on disk, newest first, whatever the profile stamps entries with
   * (Claude Code's order: a file written lately ranks above files only read since; docs/eval.md)
   */
  | 'FILE_RANKING_MTIME'
  | 3
  /**
   * the files Claude Code's own rule would restore (its 5 newest by mtime, in its order), then
   * the rest newest entry first: a superset of its choice where the budget allows (docs/eval.md)
   */
  | 'FILE_RANKING_CLAUDE_CODE_FIRST'
  | 4
  /**
   * by value per token: a logistic model's probability that the agent needs the file next (from
   * its recency, size, lines seen, edits and whether it was read whole) over the tokens it costs;
   * the model trained by `postcompact eval` on real sessions (docs/eval.md §5)
   */
  | 'FILE_RANKING_SCORED'
  | 5

/**
 * How candidate files are ordered before `max_files` keeps the first (docs/eval.md §2).
 */
export type FileRanking__Output = typeof FileRanking[keyof typeof FileRanking]
