// Original file: ../../proto/postcompact/v1/postcompact.proto

export const CompactKind = {
  /**
   * FULL
   */
  COMPACT_KIND_UNSPECIFIED: 'COMPACT_KIND_UNSPECIFIED',
  COMPACT_KIND_FULL: 'COMPACT_KIND_FULL',
  /**
   * `preserved_messages` stay in context
   */
  COMPACT_KIND_PARTIAL: 'COMPACT_KIND_PARTIAL',
} as const;

export type CompactKind =
  /**
   * FULL
   */
  | 'COMPACT_KIND_UNSPECIFIED'
  | 0
  | 'COMPACT_KIND_FULL'
  | 1
  /**
   * `preserved_messages` stay in context
   */
  | 'COMPACT_KIND_PARTIAL'
  | 2

export type CompactKind__Output = typeof CompactKind[keyof typeof CompactKind]
