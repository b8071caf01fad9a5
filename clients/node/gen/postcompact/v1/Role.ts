// Original file: ../../proto/postcompact/v1/postcompact.proto

export const Role = {
  ROLE_UNSPECIFIED: 'ROLE_UNSPECIFIED',
  ROLE_USER: 'ROLE_USER',
  ROLE_ASSISTANT: 'ROLE_ASSISTANT',
} as const;

export type Role =
  | 'ROLE_UNSPECIFIED'
  | 0
  | 'ROLE_USER'
  | 1
  | 'ROLE_ASSISTANT'
  | 2

export type Role__Output = typeof Role[keyof typeof Role]
