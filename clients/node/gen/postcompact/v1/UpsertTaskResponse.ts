// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface UpsertTaskResponse {
}

export interface UpsertTaskResponse__Output {
}
