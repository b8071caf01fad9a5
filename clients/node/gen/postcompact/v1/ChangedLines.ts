// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { LineRange as _postcompact_v1_LineRange, LineRange__Output as _postcompact_v1_LineRange__Output } from '../../postcompact/v1/LineRange.js';

export interface ChangedLines {
  'ranges'?: (_postcompact_v1_LineRange)[];
}

export interface ChangedLines__Output {
  'ranges': (_postcompact_v1_LineRange__Output)[];
}
