// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { MemoryFiles as _postcompact_v1_MemoryFiles, MemoryFiles__Output as _postcompact_v1_MemoryFiles__Output } from '../../postcompact/v1/MemoryFiles.js';
import type { RestorePolicy as _postcompact_v1_RestorePolicy, RestorePolicy__Output as _postcompact_v1_RestorePolicy__Output } from '../../postcompact/v1/RestorePolicy.js';
import type { Profile as _postcompact_v1_Profile, Profile__Output as _postcompact_v1_Profile__Output } from '../../postcompact/v1/Profile.js';
import type { TemplateSpec as _postcompact_v1_TemplateSpec, TemplateSpec__Output as _postcompact_v1_TemplateSpec__Output } from '../../postcompact/v1/TemplateSpec.js';

/**
 * Opening the id of a session that exists resumes it. A setting the request states (non-empty)
 * must then be the session's, or the call fails (INVALID_ARGUMENT SESSION_CWD_MISMATCH /
 * SESSION_SETTINGS_MISMATCH, ErrorInfo metadata `fields` naming what differs); one left out is the
 * session's. With its session_id and an empty cwd the request joins the session as it is
 * (attach), NOT_FOUND when there is none.
 */
export interface OpenSessionRequest {
  /**
   * empty: the daemon makes one
   */
  'sessionId'?: (string);
  /**
   * absolute; required, except to join an existing session by its id
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
  /**
   * The session's wording, over the daemon's `[templates]` and the profile's (docs/profiles.md,
   * "Wording"): unset = the daemon's.
   */
  'templates'?: (_postcompact_v1_TemplateSpec | null);
}

/**
 * Opening the id of a session that exists resumes it. A setting the request states (non-empty)
 * must then be the session's, or the call fails (INVALID_ARGUMENT SESSION_CWD_MISMATCH /
 * SESSION_SETTINGS_MISMATCH, ErrorInfo metadata `fields` naming what differs); one left out is the
 * session's. With its session_id and an empty cwd the request joins the session as it is
 * (attach), NOT_FOUND when there is none.
 */
export interface OpenSessionRequest__Output {
  /**
   * empty: the daemon makes one
   */
  'sessionId': (string);
  /**
   * absolute; required, except to join an existing session by its id
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
  /**
   * The session's wording, over the daemon's `[templates]` and the profile's (docs/profiles.md,
   * "Wording"): unset = the daemon's.
   */
  'templates': (_postcompact_v1_TemplateSpec__Output | null);
}
