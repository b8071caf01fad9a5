// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface McpInstructionsDelta {
  'addedNames'?: (string)[];
  'addedBlocks'?: (string)[];
  'removedNames'?: (string)[];
}

export interface McpInstructionsDelta__Output {
  'addedNames': (string)[];
  'addedBlocks': (string)[];
  'removedNames': (string)[];
}
