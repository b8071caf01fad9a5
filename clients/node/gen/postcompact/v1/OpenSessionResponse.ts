// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { SessionInfo as _postcompact_v1_SessionInfo, SessionInfo__Output as _postcompact_v1_SessionInfo__Output } from '../../postcompact/v1/SessionInfo.js';

export interface OpenSessionResponse {
  'sessionId'?: (string);
  /**
   * the session existed already
   */
  'resumed'?: (boolean);
  'session'?: (_postcompact_v1_SessionInfo | null);
}

export interface OpenSessionResponse__Output {
  'sessionId': (string);
  /**
   * the session existed already
   */
  'resumed': (boolean);
  'session': (_postcompact_v1_SessionInfo__Output | null);
}
