// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { SessionInfo as _postcompact_v1_SessionInfo, SessionInfo__Output as _postcompact_v1_SessionInfo__Output } from '../../postcompact/v1/SessionInfo.js';

export interface ListSessionsResponse {
  /**
   * Also cut short of page_size so that the answer fits max_message_bytes.
   */
  'sessions'?: (_postcompact_v1_SessionInfo)[];
  /**
   * "" on the last page
   */
  'nextPageToken'?: (string);
  /**
   * sessions held now
   */
  'totalSessions'?: (number);
}

export interface ListSessionsResponse__Output {
  /**
   * Also cut short of page_size so that the answer fits max_message_bytes.
   */
  'sessions': (_postcompact_v1_SessionInfo__Output)[];
  /**
   * "" on the last page
   */
  'nextPageToken': (string);
  /**
   * sessions held now
   */
  'totalSessions': (number);
}
