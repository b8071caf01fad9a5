// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Long } from '@grpc/proto-loader';

export interface GetStatsResponse {
  /**
   * With state stored: what the store holds (every session of the database, in memory or not;
   * with a shared database, the fleet's). Memory only (--no-persist): what the daemon holds.
   */
  'sessions'?: (number);
  'agents'?: (number);
  'cachedEntries'?: (number | string | Long);
  'cachedBytes'?: (number | string | Long);
  /**
   * of those sessions (kept across restarts)
   */
  'compactions'?: (number | string | Long);
  /**
   * File-state cache evictions since this daemon process started (a counter of its activity,
   * not part of the stored state: 0 after a restart).
   */
  'evictions'?: (number | string | Long);
  'uptimeMs'?: (number | string | Long);
  /**
   * Bytes of recorded content the daemon holds (file contents, skills, plans, catalogues,
   * tasks), against the daemon-wide limits.max_content_bytes (docs/reliability.md).
   */
  'contentBytes'?: (number | string | Long);
  'maxContentBytes'?: (number | string | Long);
  /**
   * Calls in their handlers now (this one included), against limits.max_calls_in_flight; bytes
   * of answers given to gRPC and not yet read by their clients, against
   * limits.max_answer_bytes_in_flight (docs/reliability.md).
   */
  'callsInFlight'?: (number);
  'answerBytesInFlight'?: (number | string | Long);
  /**
   * Sessions in this daemon's memory now, against limits.max_sessions: the others are stored and
   * read when a call names them (docs/persistence.md, "Sessions in memory").
   */
  'sessionsInMemory'?: (number);
  /**
   * Since this daemon process started: sessions read from the store, and sessions that left
   * memory for room (evicted, still stored).
   */
  'sessionsRead'?: (number | string | Long);
  'sessionsEvicted'?: (number | string | Long);
}

export interface GetStatsResponse__Output {
  /**
   * With state stored: what the store holds (every session of the database, in memory or not;
   * with a shared database, the fleet's). Memory only (--no-persist): what the daemon holds.
   */
  'sessions': (number);
  'agents': (number);
  'cachedEntries': (number);
  'cachedBytes': (number);
  /**
   * of those sessions (kept across restarts)
   */
  'compactions': (number);
  /**
   * File-state cache evictions since this daemon process started (a counter of its activity,
   * not part of the stored state: 0 after a restart).
   */
  'evictions': (number);
  'uptimeMs': (number);
  /**
   * Bytes of recorded content the daemon holds (file contents, skills, plans, catalogues,
   * tasks), against the daemon-wide limits.max_content_bytes (docs/reliability.md).
   */
  'contentBytes': (number);
  'maxContentBytes': (number);
  /**
   * Calls in their handlers now (this one included), against limits.max_calls_in_flight; bytes
   * of answers given to gRPC and not yet read by their clients, against
   * limits.max_answer_bytes_in_flight (docs/reliability.md).
   */
  'callsInFlight': (number);
  'answerBytesInFlight': (number);
  /**
   * Sessions in this daemon's memory now, against limits.max_sessions: the others are stored and
   * read when a call names them (docs/persistence.md, "Sessions in memory").
   */
  'sessionsInMemory': (number);
  /**
   * Since this daemon process started: sessions read from the store, and sessions that left
   * memory for room (evicted, still stored).
   */
  'sessionsRead': (number);
  'sessionsEvicted': (number);
}
