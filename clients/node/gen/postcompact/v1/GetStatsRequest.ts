// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface GetStatsRequest {
}

export interface GetStatsRequest__Output {
}
