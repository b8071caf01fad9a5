// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface InvokedSkill {
  'name'?: (string);
  'path'?: (string);
  /**
   * Truncated with the marker when over the per-skill cap; empty unless include_content.
   */
  'content'?: (Buffer | Uint8Array | string);
  'truncated'?: (boolean);
}

export interface InvokedSkill__Output {
  'name': (string);
  'path': (string);
  /**
   * Truncated with the marker when over the per-skill cap; empty unless include_content.
   */
  'content': (Buffer);
  'truncated': (boolean);
}
