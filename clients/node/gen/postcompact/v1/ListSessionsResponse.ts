// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { SessionInfo as _postcompact_v1_SessionInfo, SessionInfo__Output as _postcompact_v1_SessionInfo__Output } from '../../postcompact/v1/SessionInfo.js';

export interface ListSessionsResponse {
  'sessions'?: (_postcompact_v1_SessionInfo)[];
}

export interface ListSessionsResponse__Output {
  'sessions': (_postcompact_v1_SessionInfo__Output)[];
}
