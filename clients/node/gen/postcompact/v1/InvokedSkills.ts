// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { InvokedSkill as _postcompact_v1_InvokedSkill, InvokedSkill__Output as _postcompact_v1_InvokedSkill__Output } from '../../postcompact/v1/InvokedSkill.js';

export interface InvokedSkills {
  'skills'?: (_postcompact_v1_InvokedSkill)[];
}

export interface InvokedSkills__Output {
  'skills': (_postcompact_v1_InvokedSkill__Output)[];
}
