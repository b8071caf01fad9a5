// Original file: ../../proto/postcompact/v1/postcompact.proto

/**
 * A harness's own file restoration, which postcompact can leave to it (RestorePolicy.complement).
 */
export const HarnessRule = {
  /**
   * inherit (NONE)
   */
  HARNESS_RULE_UNSPECIFIED: 'HARNESS_RULE_UNSPECIFIED',
  /**
   * postcompact restores everything itself
   */
  HARNESS_RULE_NONE: 'HARNESS_RULE_NONE',
  /**
   * Claude Code as the claude-code profile follows it (2.1.336): the 5 newest files by mtime,
   * each whole within 5,000 tokens or a path-only note, 50,000 in all; it also re-attaches
   * skills, the plan, plan mode, tasks and the tool/agent/MCP announcements itself
   * (docs/profiles.md, "Complement mode").
   */
  HARNESS_RULE_CLAUDE_CODE: 'HARNESS_RULE_CLAUDE_CODE',
} as const;

/**
 * A harness's own file restoration, which postcompact can leave to it (RestorePolicy.complement).
 */
export type HarnessRule =
  /**
   * inherit (NONE)
   */
  | 'HARNESS_RULE_UNSPECIFIED'
  | 0
  /**
   * postcompact restores everything itself
   */
  | 'HARNESS_RULE_NONE'
  | 1
  /**
   * Claude Code as the claude-code profile follows it (2.1.336): the 5 newest files by mtime,
   * each whole within 5,000 tokens or a path-only note, 50,000 in all; it also re-attaches
   * skills, the plan, plan mode, tasks and the tool/agent/MCP announcements itself
   * (docs/profiles.md, "Complement mode").
   */
  | 'HARNESS_RULE_CLAUDE_CODE'
  | 2

/**
 * A harness's own file restoration, which postcompact can leave to it (RestorePolicy.complement).
 */
export type HarnessRule__Output = typeof HarnessRule[keyof typeof HarnessRule]
