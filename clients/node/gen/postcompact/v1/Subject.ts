// Original file: ../../proto/postcompact/v1/postcompact.proto

export const Subject = {
  SUBJECT_UNSPECIFIED: 'SUBJECT_UNSPECIFIED',
  SUBJECT_FILE: 'SUBJECT_FILE',
  SUBJECT_SKILL: 'SUBJECT_SKILL',
  SUBJECT_HOOK: 'SUBJECT_HOOK',
} as const;

export type Subject =
  | 'SUBJECT_UNSPECIFIED'
  | 0
  | 'SUBJECT_FILE'
  | 1
  | 'SUBJECT_SKILL'
  | 2
  | 'SUBJECT_HOOK'
  | 3

export type Subject__Output = typeof Subject[keyof typeof Subject]
