// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Long } from '@grpc/proto-loader';

export interface CheckStaleRequest {
  'sessionId'?: (string);
  'agentId'?: (string);
  /**
   * The shell command that just ran. When set, the hint is produced only if it matches the
   * write-command markers (formatters, linters), as the docs/claude-code.md §4 says.
   */
  'command'?: (string);
  /**
   * the command's start: only mtimes newer than this count; 0 = any
   */
  'startedAtMs'?: (number | string | Long);
}

export interface CheckStaleRequest__Output {
  'sessionId': (string);
  'agentId': (string);
  /**
   * The shell command that just ran. When set, the hint is produced only if it matches the
   * write-command markers (formatters, linters), as the docs/claude-code.md §4 says.
   */
  'command': (string);
  /**
   * the command's start: only mtimes newer than this count; 0 = any
   */
  'startedAtMs': (number);
}
