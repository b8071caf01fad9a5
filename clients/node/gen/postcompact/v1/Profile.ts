// Original file: ../../proto/postcompact/v1/postcompact.proto

/**
 * Whose rules and words a session gets (docs/profiles.md).
 */
export const Profile = {
  /**
   * the daemon's default (PROFILE_DEFAULT unless configured)
   */
  PROFILE_UNSPECIFIED: 'PROFILE_UNSPECIFIED',
  /**
   * postcompact's own: read-time timestamps, the "unchanged" stub, a file over the per-file cap
   * left out (its budget goes to the files that fit), everything user-placed and wrapped.
   */
  PROFILE_DEFAULT: 'PROFILE_DEFAULT',
  /**
   * Claude Code as it ships today (2.1.328, docs/claude-code.md): mtime timestamps, path-only
   * notes for oversize files, no "unchanged" stub, read state carried over compaction, restored
   * files user-placed and every other attachment a system section.
   */
  PROFILE_CLAUDE_CODE: 'PROFILE_CLAUDE_CODE',
  /**
   * Claude Code 2.1.88, the snapshot postcompact was first built from (docs/claude-code.md §8).
   */
  PROFILE_CLAUDE_CODE_2_1_88: 'PROFILE_CLAUDE_CODE_2_1_88',
} as const;

/**
 * Whose rules and words a session gets (docs/profiles.md).
 */
export type Profile =
  /**
   * the daemon's default (PROFILE_DEFAULT unless configured)
   */
  | 'PROFILE_UNSPECIFIED'
  | 0
  /**
   * postcompact's own: read-time timestamps, the "unchanged" stub, a file over the per-file cap
   * left out (its budget goes to the files that fit), everything user-placed and wrapped.
   */
  | 'PROFILE_DEFAULT'
  | 1
  /**
   * Claude Code as it ships today (2.1.328, docs/claude-code.md): mtime timestamps, path-only
   * notes for oversize files, no "unchanged" stub, read state carried over compaction, restored
   * files user-placed and every other attachment a system section.
   */
  | 'PROFILE_CLAUDE_CODE'
  | 2
  /**
   * Claude Code 2.1.88, the snapshot postcompact was first built from (docs/claude-code.md §8).
   */
  | 'PROFILE_CLAUDE_CODE_2_1_88'
  | 3

/**
 * Whose rules and words a session gets (docs/profiles.md).
 */
export type Profile__Output = typeof Profile[keyof typeof Profile]
