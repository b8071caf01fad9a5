// Original file: ../../proto/postcompact/v1/postcompact.proto

/**
 * Where a harness puts an attachment in the request (docs/profiles.md).
 */
export const Placement = {
  PLACEMENT_UNSPECIFIED: 'PLACEMENT_UNSPECIFIED',
  /**
   * text blocks of the user message after the summary, in order
   */
  PLACEMENT_USER: 'PLACEMENT_USER',
  /**
   * a section of one system message at the end, sections joined by "\n\n"
   */
  PLACEMENT_SYSTEM: 'PLACEMENT_SYSTEM',
} as const;

/**
 * Where a harness puts an attachment in the request (docs/profiles.md).
 */
export type Placement =
  | 'PLACEMENT_UNSPECIFIED'
  | 0
  /**
   * text blocks of the user message after the summary, in order
   */
  | 'PLACEMENT_USER'
  | 1
  /**
   * a section of one system message at the end, sections joined by "\n\n"
   */
  | 'PLACEMENT_SYSTEM'
  | 2

/**
 * Where a harness puts an attachment in the request (docs/profiles.md).
 */
export type Placement__Output = typeof Placement[keyof typeof Placement]
