// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface EstimateTokensRequest {
  'text'?: (Buffer | Uint8Array | string);
  /**
   * "json", "jsonl", "jsonc" count 2 chars per token
   */
  'ext'?: (string);
}

export interface EstimateTokensRequest__Output {
  'text': (Buffer);
  /**
   * "json", "jsonl", "jsonc" count 2 chars per token
   */
  'ext': (string);
}
