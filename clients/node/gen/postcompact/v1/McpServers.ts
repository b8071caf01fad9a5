// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { McpServer as _postcompact_v1_McpServer, McpServer__Output as _postcompact_v1_McpServer__Output } from '../../postcompact/v1/McpServer.js';

export interface McpServers {
  'servers'?: (_postcompact_v1_McpServer)[];
}

export interface McpServers__Output {
  'servers': (_postcompact_v1_McpServer__Output)[];
}
