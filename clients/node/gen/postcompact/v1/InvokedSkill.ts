// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface InvokedSkill {
  'name'?: (string);
  'path'?: (string);
  /**
   * truncated with the marker when over the per-skill cap
   */
  'content'?: (Buffer | Uint8Array | string);
  'truncated'?: (boolean);
}

export interface InvokedSkill__Output {
  'name': (string);
  'path': (string);
  /**
   * truncated with the marker when over the per-skill cap
   */
  'content': (Buffer);
  'truncated': (boolean);
}
