// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface SetModeResponse {
}

export interface SetModeResponse__Output {
}
