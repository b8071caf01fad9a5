// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface CloseSessionResponse {
}

export interface CloseSessionResponse__Output {
}
