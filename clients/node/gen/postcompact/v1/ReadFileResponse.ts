// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Long } from '@grpc/proto-loader';

export interface ReadFileResponse {
  /**
   * the normalised absolute path (the state key)
   */
  'path'?: (string);
  /**
   * `text` is the "File unchanged since last read" stub
   */
  'unchanged'?: (boolean);
  /**
   * the model-facing tool result: `N\tline` numbered text, or the stub
   */
  'text'?: (Buffer | Uint8Array | string);
  /**
   * the raw text of the range read (empty when unchanged)
   */
  'content'?: (Buffer | Uint8Array | string);
  /**
   * what was stored as the entry's timestamp
   */
  'timestampMs'?: (number | string | Long);
  'startLine'?: (number | string | Long);
  'numLines'?: (number | string | Long);
  'totalLines'?: (number | string | Long);
  /**
   * rough estimate of `text`
   */
  'tokens'?: (number | string | Long);
  /**
   * A whole read over the policy's max_read_tokens: `text` and `content` are its first page
   * (lines 1..num_lines of total_lines), recorded as a read of that range.
   */
  'partial'?: (boolean);
}

export interface ReadFileResponse__Output {
  /**
   * the normalised absolute path (the state key)
   */
  'path': (string);
  /**
   * `text` is the "File unchanged since last read" stub
   */
  'unchanged': (boolean);
  /**
   * the model-facing tool result: `N\tline` numbered text, or the stub
   */
  'text': (Buffer);
  /**
   * the raw text of the range read (empty when unchanged)
   */
  'content': (Buffer);
  /**
   * what was stored as the entry's timestamp
   */
  'timestampMs': (number);
  'startLine': (number);
  'numLines': (number);
  'totalLines': (number);
  /**
   * rough estimate of `text`
   */
  'tokens': (number);
  /**
   * A whole read over the policy's max_read_tokens: `text` and `content` are its first page
   * (lines 1..num_lines of total_lines), recorded as a read of that range.
   */
  'partial': (boolean);
}
