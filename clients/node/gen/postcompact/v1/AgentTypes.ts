// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { AgentType as _postcompact_v1_AgentType, AgentType__Output as _postcompact_v1_AgentType__Output } from '../../postcompact/v1/AgentType.js';

export interface AgentTypes {
  'agentTypes'?: (_postcompact_v1_AgentType)[];
  'showConcurrencyNote'?: (boolean);
}

export interface AgentTypes__Output {
  'agentTypes': (_postcompact_v1_AgentType__Output)[];
  'showConcurrencyNote': (boolean);
}
