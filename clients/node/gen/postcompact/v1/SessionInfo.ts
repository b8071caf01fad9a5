// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Profile as _postcompact_v1_Profile, Profile__Output as _postcompact_v1_Profile__Output } from '../../postcompact/v1/Profile.js';
import type { Long } from '@grpc/proto-loader';

export interface SessionInfo {
  'sessionId'?: (string);
  'cwd'?: (string);
  'roots'?: (string)[];
  'agentIds'?: (string)[];
  'cachedEntries'?: (number | string | Long);
  'cachedBytes'?: (number | string | Long);
  'compactions'?: (number | string | Long);
  'createdAtMs'?: (number | string | Long);
  'lastActiveMs'?: (number | string | Long);
  'profile'?: (_postcompact_v1_Profile);
  /**
   * roots and agent_ids are left out: with them this one session would not fit an answer
   * (a max_message_bytes configured below the session's size).
   */
  'partial'?: (boolean);
}

export interface SessionInfo__Output {
  'sessionId': (string);
  'cwd': (string);
  'roots': (string)[];
  'agentIds': (string)[];
  'cachedEntries': (number);
  'cachedBytes': (number);
  'compactions': (number);
  'createdAtMs': (number);
  'lastActiveMs': (number);
  'profile': (_postcompact_v1_Profile__Output);
  /**
   * roots and agent_ids are left out: with them this one session would not fit an answer
   * (a max_message_bytes configured below the session's size).
   */
  'partial': (boolean);
}
