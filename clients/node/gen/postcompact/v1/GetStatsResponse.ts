// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { SessionInfo as _postcompact_v1_SessionInfo, SessionInfo__Output as _postcompact_v1_SessionInfo__Output } from '../../postcompact/v1/SessionInfo.js';
import type { Long } from '@grpc/proto-loader';

export interface GetStatsResponse {
  'sessions'?: (number);
  'agents'?: (number);
  'cachedEntries'?: (number | string | Long);
  'cachedBytes'?: (number | string | Long);
  /**
   * of the sessions held (kept across restarts)
   */
  'compactions'?: (number | string | Long);
  /**
   * File-state cache evictions since this daemon process started (a counter of its activity,
   * not part of the stored state: 0 after a restart).
   */
  'evictions'?: (number | string | Long);
  'uptimeMs'?: (number | string | Long);
  'sessionInfos'?: (_postcompact_v1_SessionInfo)[];
}

export interface GetStatsResponse__Output {
  'sessions': (number);
  'agents': (number);
  'cachedEntries': (number);
  'cachedBytes': (number);
  /**
   * of the sessions held (kept across restarts)
   */
  'compactions': (number);
  /**
   * File-state cache evictions since this daemon process started (a counter of its activity,
   * not part of the stored state: 0 after a restart).
   */
  'evictions': (number);
  'uptimeMs': (number);
  'sessionInfos': (_postcompact_v1_SessionInfo__Output)[];
}
