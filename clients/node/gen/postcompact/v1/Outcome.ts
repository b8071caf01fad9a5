// Original file: ../../proto/postcompact/v1/postcompact.proto

export const Outcome = {
  OUTCOME_UNSPECIFIED: 'OUTCOME_UNSPECIFIED',
  OUTCOME_RESTORED: 'OUTCOME_RESTORED',
  /**
   * restored, head only
   */
  OUTCOME_TRUNCATED: 'OUTCOME_TRUNCATED',
  /**
   * path-only note (oversize under REFERENCE)
   */
  OUTCOME_REFERENCED: 'OUTCOME_REFERENCED',
  OUTCOME_EXCLUDED_PLAN_FILE: 'OUTCOME_EXCLUDED_PLAN_FILE',
  OUTCOME_EXCLUDED_MEMORY_FILE: 'OUTCOME_EXCLUDED_MEMORY_FILE',
  OUTCOME_EXCLUDED_VISIBLE_IN_TAIL: 'OUTCOME_EXCLUDED_VISIBLE_IN_TAIL',
  /**
   * beyond max_files
   */
  OUTCOME_DROPPED_BY_RANK: 'OUTCOME_DROPPED_BY_RANK',
  OUTCOME_DROPPED_BY_BUDGET: 'OUTCOME_DROPPED_BY_BUDGET',
  /**
   * gone, a device, a directory, outside the roots…; see `detail`
   */
  OUTCOME_UNREADABLE: 'OUTCOME_UNREADABLE',
  /**
   * a deny glob
   */
  OUTCOME_DENIED: 'OUTCOME_DENIED',
  OUTCOME_BINARY: 'OUTCOME_BINARY',
  OUTCOME_HOOK_OK: 'OUTCOME_HOOK_OK',
  OUTCOME_HOOK_FAILED: 'OUTCOME_HOOK_FAILED',
  OUTCOME_HOOK_TIMED_OUT: 'OUTCOME_HOOK_TIMED_OUT',
  /**
   * a saved tool-result artifact (tool-results/artifact-*)
   */
  OUTCOME_EXCLUDED_ARTIFACT: 'OUTCOME_EXCLUDED_ARTIFACT',
  /**
   * over max_tokens_per_file under OVERSIZE_POLICY_SKIP
   */
  OUTCOME_DROPPED_OVER_CAP: 'OUTCOME_DROPPED_OVER_CAP',
  /**
   * the harness restores it itself (RestorePolicy.complement); `tokens`: its attachment's rough
   * estimate as the harness renders it
   */
  OUTCOME_RESTORED_BY_HARNESS: 'OUTCOME_RESTORED_BY_HARNESS',
} as const;

export type Outcome =
  | 'OUTCOME_UNSPECIFIED'
  | 0
  | 'OUTCOME_RESTORED'
  | 1
  /**
   * restored, head only
   */
  | 'OUTCOME_TRUNCATED'
  | 2
  /**
   * path-only note (oversize under REFERENCE)
   */
  | 'OUTCOME_REFERENCED'
  | 3
  | 'OUTCOME_EXCLUDED_PLAN_FILE'
  | 4
  | 'OUTCOME_EXCLUDED_MEMORY_FILE'
  | 5
  | 'OUTCOME_EXCLUDED_VISIBLE_IN_TAIL'
  | 6
  /**
   * beyond max_files
   */
  | 'OUTCOME_DROPPED_BY_RANK'
  | 7
  | 'OUTCOME_DROPPED_BY_BUDGET'
  | 8
  /**
   * gone, a device, a directory, outside the roots…; see `detail`
   */
  | 'OUTCOME_UNREADABLE'
  | 9
  /**
   * a deny glob
   */
  | 'OUTCOME_DENIED'
  | 10
  | 'OUTCOME_BINARY'
  | 11
  | 'OUTCOME_HOOK_OK'
  | 12
  | 'OUTCOME_HOOK_FAILED'
  | 13
  | 'OUTCOME_HOOK_TIMED_OUT'
  | 14
  /**
   * a saved tool-result artifact (tool-results/artifact-*)
   */
  | 'OUTCOME_EXCLUDED_ARTIFACT'
  | 15
  /**
   * over max_tokens_per_file under OVERSIZE_POLICY_SKIP
   */
  | 'OUTCOME_DROPPED_OVER_CAP'
  | 16
  /**
   * the harness restores it itself (RestorePolicy.complement); `tokens`: its attachment's rough
   * estimate as the harness renders it
   */
  | 'OUTCOME_RESTORED_BY_HARNESS'
  | 17

export type Outcome__Output = typeof Outcome[keyof typeof Outcome]
