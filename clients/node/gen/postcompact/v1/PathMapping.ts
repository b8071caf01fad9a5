// Original file: ../../proto/postcompact/v1/postcompact.proto


/**
 * A transcript path prefix and where it lives on this machine.
 */
export interface PathMapping {
  /**
   * as in the transcript (POSIX or Windows form)
   */
  'source'?: (string);
  /**
   * absolute local path
   */
  'target'?: (string);
}

/**
 * A transcript path prefix and where it lives on this machine.
 */
export interface PathMapping__Output {
  /**
   * as in the transcript (POSIX or Windows form)
   */
  'source': (string);
  /**
   * absolute local path
   */
  'target': (string);
}
