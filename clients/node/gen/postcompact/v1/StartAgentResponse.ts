// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Long } from '@grpc/proto-loader';

export interface StartAgentResponse {
  'agentId'?: (string);
  'cachedEntries'?: (number | string | Long);
}

export interface StartAgentResponse__Output {
  'agentId': (string);
  'cachedEntries': (number);
}
