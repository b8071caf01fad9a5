// Original file: ../../proto/postcompact/v1/postcompact.proto

export const WriteCheck = {
  WRITE_CHECK_UNSPECIFIED: 'WRITE_CHECK_UNSPECIFIED',
  WRITE_CHECK_ALLOWED: 'WRITE_CHECK_ALLOWED',
  /**
   * "File has not been read yet. Read it first before writing to it." (error code 6)
   */
  WRITE_CHECK_NOT_READ: 'WRITE_CHECK_NOT_READ',
  /**
   * "File has been modified since read, ..." (error code 7)
   */
  WRITE_CHECK_MODIFIED: 'WRITE_CHECK_MODIFIED',
} as const;

export type WriteCheck =
  | 'WRITE_CHECK_UNSPECIFIED'
  | 0
  | 'WRITE_CHECK_ALLOWED'
  | 1
  /**
   * "File has not been read yet. Read it first before writing to it." (error code 6)
   */
  | 'WRITE_CHECK_NOT_READ'
  | 2
  /**
   * "File has been modified since read, ..." (error code 7)
   */
  | 'WRITE_CHECK_MODIFIED'
  | 3

export type WriteCheck__Output = typeof WriteCheck[keyof typeof WriteCheck]
