// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface GetServerInfoRequest {
}

export interface GetServerInfoRequest__Output {
}
