// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { PathMapping as _postcompact_v1_PathMapping, PathMapping__Output as _postcompact_v1_PathMapping__Output } from '../../postcompact/v1/PathMapping.js';
import type { Profile as _postcompact_v1_Profile, Profile__Output as _postcompact_v1_Profile__Output } from '../../postcompact/v1/Profile.js';
import type { RestorePolicy as _postcompact_v1_RestorePolicy, RestorePolicy__Output as _postcompact_v1_RestorePolicy__Output } from '../../postcompact/v1/RestorePolicy.js';

export interface ImportTranscriptRequest {
  /**
   * the JSONL bytes of a Claude Code transcript
   */
  'transcript'?: (Buffer | Uint8Array | string);
  /**
   * empty: the transcript's own session id
   */
  'sessionId'?: (string);
  /**
   * Where the transcript's working directory is on this machine (absolute; required). Paths
   * under the transcript's cwd are mapped under it.
   */
  'cwd'?: (string);
  /**
   * further prefixes; the longest match wins
   */
  'pathMap'?: (_postcompact_v1_PathMapping)[];
  /**
   * for the imported session (default: the daemon's)
   */
  'profile'?: (_postcompact_v1_Profile);
  /**
   * the imported session's policy
   */
  'policy'?: (_postcompact_v1_RestorePolicy | null);
  /**
   * the imported session's home; empty = the daemon user's
   */
  'home'?: (string);
  /**
   * replace a session with that id (else ALREADY_EXISTS)
   */
  'replace'?: (boolean);
  /**
   * Stamp each read and write with the file's mtime here when the import reaches it (whole
   * milliseconds, as a running Claude Code stamps them), not with the record's time (as its
   * `--resume` does). For a transcript whose files are on this machine as they were then.
   */
  'fileMtimes'?: (boolean);
}

export interface ImportTranscriptRequest__Output {
  /**
   * the JSONL bytes of a Claude Code transcript
   */
  'transcript': (Buffer);
  /**
   * empty: the transcript's own session id
   */
  'sessionId': (string);
  /**
   * Where the transcript's working directory is on this machine (absolute; required). Paths
   * under the transcript's cwd are mapped under it.
   */
  'cwd': (string);
  /**
   * further prefixes; the longest match wins
   */
  'pathMap': (_postcompact_v1_PathMapping__Output)[];
  /**
   * for the imported session (default: the daemon's)
   */
  'profile': (_postcompact_v1_Profile__Output);
  /**
   * the imported session's policy
   */
  'policy': (_postcompact_v1_RestorePolicy__Output | null);
  /**
   * the imported session's home; empty = the daemon user's
   */
  'home': (string);
  /**
   * replace a session with that id (else ALREADY_EXISTS)
   */
  'replace': (boolean);
  /**
   * Stamp each read and write with the file's mtime here when the import reaches it (whole
   * milliseconds, as a running Claude Code stamps them), not with the record's time (as its
   * `--resume` does). For a transcript whose files are on this machine as they were then.
   */
  'fileMtimes': (boolean);
}
