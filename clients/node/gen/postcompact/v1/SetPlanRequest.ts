// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface SetPlanRequest {
  'sessionId'?: (string);
  'agentId'?: (string);
  /**
   * "" = the default: <plans_directory>/plan-<12 hex of the session id's SHA-256>.md, and
   * ...-agent-<agent id>.md for a sub-agent (Claude Code's layout, docs/claude-code.md §8).
   */
  'planFilePath'?: (string);
}

export interface SetPlanRequest__Output {
  'sessionId': (string);
  'agentId': (string);
  /**
   * "" = the default: <plans_directory>/plan-<12 hex of the session id's SHA-256>.md, and
   * ...-agent-<agent id>.md for a sub-agent (Claude Code's layout, docs/claude-code.md §8).
   */
  'planFilePath': (string);
}
