// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { SessionInfo as _postcompact_v1_SessionInfo, SessionInfo__Output as _postcompact_v1_SessionInfo__Output } from '../../postcompact/v1/SessionInfo.js';
import type { Long } from '@grpc/proto-loader';

export interface GetStatsResponse {
  'sessions'?: (number);
  'agents'?: (number);
  'cachedEntries'?: (number | string | Long);
  'cachedBytes'?: (number | string | Long);
  'compactions'?: (number | string | Long);
  'evictions'?: (number | string | Long);
  'uptimeMs'?: (number | string | Long);
  'sessionInfos'?: (_postcompact_v1_SessionInfo)[];
}

export interface GetStatsResponse__Output {
  'sessions': (number);
  'agents': (number);
  'cachedEntries': (number);
  'cachedBytes': (number);
  'compactions': (number);
  'evictions': (number);
  'uptimeMs': (number);
  'sessionInfos': (_postcompact_v1_SessionInfo__Output)[];
}
