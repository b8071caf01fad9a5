// Original file: ../../proto/postcompact/v1/postcompact.proto

export const TokenCounter = {
  /**
   * inherit
   */
  TOKEN_COUNTER_UNSPECIFIED: 'TOKEN_COUNTER_UNSPECIFIED',
  /**
   * Claude Code's chars/4 estimate (chars/2 for JSON)
   */
  TOKEN_COUNTER_ROUGH: 'TOKEN_COUNTER_ROUGH',
  /**
   * exact BPE count with `encoding`
   */
  TOKEN_COUNTER_EXACT: 'TOKEN_COUNTER_EXACT',
} as const;

export type TokenCounter =
  /**
   * inherit
   */
  | 'TOKEN_COUNTER_UNSPECIFIED'
  | 0
  /**
   * Claude Code's chars/4 estimate (chars/2 for JSON)
   */
  | 'TOKEN_COUNTER_ROUGH'
  | 1
  /**
   * exact BPE count with `encoding`
   */
  | 'TOKEN_COUNTER_EXACT'
  | 2

export type TokenCounter__Output = typeof TokenCounter[keyof typeof TokenCounter]
