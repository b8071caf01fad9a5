// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { LeftOutFile as _postcompact_v1_LeftOutFile, LeftOutFile__Output as _postcompact_v1_LeftOutFile__Output } from '../../postcompact/v1/LeftOutFile.js';

/**
 * RestorePolicy.left_out_index: the candidates not restored, in rank order.
 */
export interface LeftOutFiles {
  'files'?: (_postcompact_v1_LeftOutFile)[];
}

/**
 * RestorePolicy.left_out_index: the candidates not restored, in rank order.
 */
export interface LeftOutFiles__Output {
  'files': (_postcompact_v1_LeftOutFile__Output)[];
}
