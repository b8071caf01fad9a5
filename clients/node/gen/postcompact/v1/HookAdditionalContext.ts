// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface HookAdditionalContext {
  'content'?: (string)[];
}

export interface HookAdditionalContext__Output {
  'content': (string)[];
}
