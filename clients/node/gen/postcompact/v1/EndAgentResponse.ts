// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Long } from '@grpc/proto-loader';

export interface EndAgentResponse {
  /**
   * the file-state entries it held, now released
   */
  'cachedEntries'?: (number | string | Long);
  /**
   * the agents the session holds now, the main thread included
   */
  'agents'?: (number);
}

export interface EndAgentResponse__Output {
  /**
   * the file-state entries it held, now released
   */
  'cachedEntries': (number);
  /**
   * the agents the session holds now, the main thread included
   */
  'agents': (number);
}
