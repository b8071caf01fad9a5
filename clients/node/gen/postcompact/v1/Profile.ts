// Original file: ../../proto/postcompact/v1/postcompact.proto

export const Profile = {
  /**
   * the daemon's default (PROFILE_DEFAULT unless configured)
   */
  PROFILE_UNSPECIFIED: 'PROFILE_UNSPECIFIED',
  /**
   * daemon reads store the read time as the timestamp (design chapter)
   */
  PROFILE_DEFAULT: 'PROFILE_DEFAULT',
  /**
   * daemon reads store the file's mtime (Claude Code 2.1.88)
   */
  PROFILE_CLAUDE_CODE: 'PROFILE_CLAUDE_CODE',
} as const;

export type Profile =
  /**
   * the daemon's default (PROFILE_DEFAULT unless configured)
   */
  | 'PROFILE_UNSPECIFIED'
  | 0
  /**
   * daemon reads store the read time as the timestamp (design chapter)
   */
  | 'PROFILE_DEFAULT'
  | 1
  /**
   * daemon reads store the file's mtime (Claude Code 2.1.88)
   */
  | 'PROFILE_CLAUDE_CODE'
  | 2

export type Profile__Output = typeof Profile[keyof typeof Profile]
