export { PostcompactClient, enumName } from "./client.js";
export type { CallOptions, ClientOptions, RawRpc, RequestOf, ResponseOf, RpcMethod } from "./client.js";
export { Session, joinRenderedText } from "./session.js";
/**
 * The join every harness does with the attachments of Compact, PreviewCompact or SetCatalog:
 * `userBlocks`, the blocks of the user-placed attachments (placement not PLACEMENT_SYSTEM), in
 * order: the text blocks of the user message after the summary; `systemText`, the sections of
 * the PLACEMENT_SYSTEM attachments joined by "\n\n", for the system message.
 */
export { joinAttachments } from "./session.js";
export type {
  CatalogInput,
  ChangedRange,
  CompactOptions,
  CompactResult,
  ImportTranscriptOptions,
  Injection,
  MessageInput,
  OpenSessionOptions,
  PolicyInput,
  ReadOptions,
  ReadResult,
  RecordReadOptions,
  RecordWriteOptions,
  SkillInput,
  TaskInput,
} from "./session.js";
export {
  ClientReason,
  ERROR_DOMAIN,
  PostcompactError,
  REASON_METADATA_KEY,
  isPostcompactError,
  statusCodeFromName,
  statusCodeName,
} from "./errors.js";
export {
  defaultSocketPath,
  parseAddress,
  readServerJson,
  resolveAddress,
  resolveToken,
  runtimeDir,
} from "./address.js";
export type { AddressSource, Env, ResolvedAddress, ServerJson } from "./address.js";
export { DEFAULT_AUTO_START, healthCheck, waitForHealth } from "./daemon.js";
export type { AutoStartPolicy } from "./daemon.js";
export { DEFAULT_RETRY, NO_RETRY, backoffMs, isIdempotent } from "./retry.js";
export type { RetryPolicy } from "./retry.js";
export type { ErrorInfo } from "./wire.js";
export { status as GrpcStatus } from "@grpc/grpc-js";
export * from "./types.js";
