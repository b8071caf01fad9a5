// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { MemoryFiles as _postcompact_v1_MemoryFiles, MemoryFiles__Output as _postcompact_v1_MemoryFiles__Output } from '../../postcompact/v1/MemoryFiles.js';
import type { RestorePolicy as _postcompact_v1_RestorePolicy, RestorePolicy__Output as _postcompact_v1_RestorePolicy__Output } from '../../postcompact/v1/RestorePolicy.js';
import type { Profile as _postcompact_v1_Profile, Profile__Output as _postcompact_v1_Profile__Output } from '../../postcompact/v1/Profile.js';

export interface OpenSessionRequest {
  /**
   * empty: the daemon makes one
   */
  'sessionId'?: (string);
  /**
   * absolute; required
   */
  'cwd'?: (string);
  /**
   * reads are confined here; empty = [cwd]
   */
  'roots'?: (string)[];
  'memory'?: (_postcompact_v1_MemoryFiles | null);
  /**
   * empty = ~/.claude/plans
   */
  'plansDirectory'?: (string);
  'policy'?: (_postcompact_v1_RestorePolicy | null);
  'profile'?: (_postcompact_v1_Profile);
  /**
   * for ~ expansion; empty = the daemon user's home
   */
  'home'?: (string);
}

export interface OpenSessionRequest__Output {
  /**
   * empty: the daemon makes one
   */
  'sessionId': (string);
  /**
   * absolute; required
   */
  'cwd': (string);
  /**
   * reads are confined here; empty = [cwd]
   */
  'roots': (string)[];
  'memory': (_postcompact_v1_MemoryFiles__Output | null);
  /**
   * empty = ~/.claude/plans
   */
  'plansDirectory': (string);
  'policy': (_postcompact_v1_RestorePolicy__Output | null);
  'profile': (_postcompact_v1_Profile__Output);
  /**
   * for ~ expansion; empty = the daemon user's home
   */
  'home': (string);
}
