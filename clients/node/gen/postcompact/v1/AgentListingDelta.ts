// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface AgentListingDelta {
  'addedTypes'?: (string)[];
  'addedLines'?: (string)[];
  'removedTypes'?: (string)[];
  'isInitial'?: (boolean);
  'showConcurrencyNote'?: (boolean);
}

export interface AgentListingDelta__Output {
  'addedTypes': (string)[];
  'addedLines': (string)[];
  'removedTypes': (string)[];
  'isInitial': (boolean);
  'showConcurrencyNote': (boolean);
}
