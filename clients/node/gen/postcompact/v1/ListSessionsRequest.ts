// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface ListSessionsRequest {
}

export interface ListSessionsRequest__Output {
}
