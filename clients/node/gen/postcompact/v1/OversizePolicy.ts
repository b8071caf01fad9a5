// Original file: ../../proto/postcompact/v1/postcompact.proto

export const OversizePolicy = {
  /**
   * inherit
   */
  OVERSIZE_POLICY_UNSPECIFIED: 'OVERSIZE_POLICY_UNSPECIFIED',
  /**
   * the head within the cap plus a marker saying how to read the rest
   */
  OVERSIZE_POLICY_TRUNCATE_HEAD: 'OVERSIZE_POLICY_TRUNCATE_HEAD',
  /**
   * a path-only note (compact_file_reference)
   */
  OVERSIZE_POLICY_REFERENCE: 'OVERSIZE_POLICY_REFERENCE',
  /**
   * left out (OUTCOME_DROPPED_OVER_CAP): the budget goes to the files that fit (docs/eval.md)
   */
  OVERSIZE_POLICY_SKIP: 'OVERSIZE_POLICY_SKIP',
} as const;

export type OversizePolicy =
  /**
   * inherit
   */
  | 'OVERSIZE_POLICY_UNSPECIFIED'
  | 0
  /**
   * the head within the cap plus a marker saying how to read the rest
   */
  | 'OVERSIZE_POLICY_TRUNCATE_HEAD'
  | 1
  /**
   * a path-only note (compact_file_reference)
   */
  | 'OVERSIZE_POLICY_REFERENCE'
  | 2
  /**
   * left out (OUTCOME_DROPPED_OVER_CAP): the budget goes to the files that fit (docs/eval.md)
   */
  | 'OVERSIZE_POLICY_SKIP'
  | 3

export type OversizePolicy__Output = typeof OversizePolicy[keyof typeof OversizePolicy]
