// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Long } from '@grpc/proto-loader';

export interface FileAttachment {
  'path'?: (string);
  /**
   * relative to cwd when inside it
   */
  'displayPath'?: (string);
  /**
   * The text restored as Claude Code attaches it (line ends without "\r"; the head only when
   * truncated); empty unless include_content.
   */
  'content'?: (Buffer | Uint8Array | string);
  'truncated'?: (boolean);
  'totalLines'?: (number | string | Long);
  'numLines'?: (number | string | Long);
  /**
   * The first line restored: 1, or under the default profile the first line of the range the
   * agent last read (docs/profiles.md).
   */
  'startLine'?: (number | string | Long);
}

export interface FileAttachment__Output {
  'path': (string);
  /**
   * relative to cwd when inside it
   */
  'displayPath': (string);
  /**
   * The text restored as Claude Code attaches it (line ends without "\r"; the head only when
   * truncated); empty unless include_content.
   */
  'content': (Buffer);
  'truncated': (boolean);
  'totalLines': (number);
  'numLines': (number);
  /**
   * The first line restored: 1, or under the default profile the first line of the range the
   * agent last read (docs/profiles.md).
   */
  'startLine': (number);
}
