// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface CountTokensRequest {
  /**
   * UTF-8
   */
  'text'?: (Buffer | Uint8Array | string);
  /**
   * "o200k_base" (default) or "cl100k_base"
   */
  'encoding'?: (string);
}

export interface CountTokensRequest__Output {
  /**
   * UTF-8
   */
  'text': (Buffer);
  /**
   * "o200k_base" (default) or "cl100k_base"
   */
  'encoding': (string);
}
