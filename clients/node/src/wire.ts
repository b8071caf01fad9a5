// A minimal protobuf wire-format reader for the small messages the client decodes without the
// generated code: grpc.health.v1.HealthCheckResponse, google.rpc.Status with its
// google.rpc.ErrorInfo and google.rpc.RetryInfo (sent by the daemon in `grpc-status-details-bin`).

interface Field {
  num: number;
  wire: number;
  varint?: number;
  bytes?: Buffer;
}

function* fields(buf: Buffer): Generator<Field> {
  let pos = 0;
  const varint = (): number => {
    let result = 0;
    let mul = 1;
    for (;;) {
      if (pos >= buf.length) throw new Error("truncated varint");
      const b = buf[pos++]!;
      result += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) return result;
      mul *= 128;
    }
  };
  while (pos < buf.length) {
    const key = varint();
    const num = Math.floor(key / 8);
    const wire = key & 7;
    switch (wire) {
      case 0:
        yield { num, wire, varint: varint() };
        break;
      case 1:
        pos += 8;
        yield { num, wire };
        break;
      case 2: {
        const len = varint();
        if (pos + len > buf.length) throw new Error("truncated length-delimited field");
        yield { num, wire, bytes: buf.subarray(pos, pos + len) };
        pos += len;
        break;
      }
      case 5:
        pos += 4;
        yield { num, wire };
        break;
      default:
        throw new Error(`unsupported wire type ${wire}`);
    }
  }
}

/** grpc.health.v1.HealthCheckResponse.status (1 = SERVING). */
export function decodeHealthStatus(buf: Buffer): number {
  let status = 0;
  for (const f of fields(buf)) if (f.num === 1 && f.varint !== undefined) status = f.varint;
  return status;
}

/** grpc.health.v1.HealthCheckRequest{service}. */
export function encodeHealthRequest(service: string): Buffer {
  if (service === "") return Buffer.alloc(0);
  const s = Buffer.from(service, "utf8");
  if (s.length > 127) throw new Error("service name too long");
  return Buffer.concat([Buffer.from([0x0a, s.length]), s]);
}

export interface ErrorInfo {
  reason: string;
  domain: string;
  metadata: Record<string, string>;
}

export interface RpcStatus {
  code: number;
  message: string;
  errorInfo?: ErrorInfo;
  /** google.rpc.RetryInfo.retry_delay in ms, when the status carries a RetryInfo. */
  retryDelayMs?: number;
}

const ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo";
const RETRY_INFO_TYPE = "type.googleapis.com/google.rpc.RetryInfo";

/** google.rpc.RetryInfo{retry_delay: google.protobuf.Duration{seconds, nanos}} in ms. */
function decodeRetryDelayMs(buf: Buffer): number {
  let seconds = 0;
  let nanos = 0;
  for (const f of fields(buf)) {
    if (f.num !== 1 || !f.bytes) continue;
    for (const d of fields(f.bytes)) {
      if (d.num === 1 && d.varint !== undefined) seconds = d.varint;
      else if (d.num === 2 && d.varint !== undefined) nanos = d.varint;
    }
  }
  const ms = seconds * 1000 + nanos / 1e6;
  // A negative Duration (10-byte varints, read here as huge numbers) means no wait.
  return ms > Number.MAX_SAFE_INTEGER ? 0 : ms;
}

function decodeErrorInfo(buf: Buffer): ErrorInfo {
  const info: ErrorInfo = { reason: "", domain: "", metadata: {} };
  for (const f of fields(buf)) {
    if (f.bytes === undefined) continue;
    if (f.num === 1) info.reason = f.bytes.toString("utf8");
    else if (f.num === 2) info.domain = f.bytes.toString("utf8");
    else if (f.num === 3) {
      let key = "";
      let value = "";
      for (const e of fields(f.bytes)) {
        if (e.num === 1 && e.bytes) key = e.bytes.toString("utf8");
        else if (e.num === 2 && e.bytes) value = e.bytes.toString("utf8");
      }
      info.metadata[key] = value;
    }
  }
  return info;
}

/** google.rpc.Status with its first google.rpc.ErrorInfo and RetryInfo details, if any. */
export function decodeRpcStatus(buf: Buffer): RpcStatus {
  const status: RpcStatus = { code: 0, message: "" };
  for (const f of fields(buf)) {
    if (f.num === 1 && f.varint !== undefined) status.code = f.varint;
    else if (f.num === 2 && f.bytes) status.message = f.bytes.toString("utf8");
    else if (f.num === 3 && f.bytes) {
      let typeUrl = "";
      let value: Buffer | undefined;
      for (const a of fields(f.bytes)) {
        if (a.num === 1 && a.bytes) typeUrl = a.bytes.toString("utf8");
        else if (a.num === 2 && a.bytes) value = a.bytes;
      }
      if (typeUrl === ERROR_INFO_TYPE && value && status.errorInfo === undefined) status.errorInfo = decodeErrorInfo(value);
      // An empty RetryInfo (no value field: a delay of 0) still says "retry".
      else if (typeUrl === RETRY_INFO_TYPE && status.retryDelayMs === undefined)
        status.retryDelayMs = decodeRetryDelayMs(value ?? Buffer.alloc(0));
    }
  }
  return status;
}
