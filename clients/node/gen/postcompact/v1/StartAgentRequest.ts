// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { AgentMode as _postcompact_v1_AgentMode, AgentMode__Output as _postcompact_v1_AgentMode__Output } from '../../postcompact/v1/AgentMode.js';

export interface StartAgentRequest {
  'sessionId'?: (string);
  /**
   * non-empty
   */
  'agentId'?: (string);
  /**
   * "" = the main thread
   */
  'parentAgentId'?: (string);
  'mode'?: (_postcompact_v1_AgentMode);
}

export interface StartAgentRequest__Output {
  'sessionId': (string);
  /**
   * non-empty
   */
  'agentId': (string);
  /**
   * "" = the main thread
   */
  'parentAgentId': (string);
  'mode': (_postcompact_v1_AgentMode__Output);
}
