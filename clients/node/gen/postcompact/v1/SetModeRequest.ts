// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { PermissionMode as _postcompact_v1_PermissionMode, PermissionMode__Output as _postcompact_v1_PermissionMode__Output } from '../../postcompact/v1/PermissionMode.js';

export interface SetModeRequest {
  'sessionId'?: (string);
  'agentId'?: (string);
  'mode'?: (_postcompact_v1_PermissionMode);
}

export interface SetModeRequest__Output {
  'sessionId': (string);
  'agentId': (string);
  'mode': (_postcompact_v1_PermissionMode__Output);
}
