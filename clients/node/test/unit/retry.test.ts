// The retry rule for answers with a google.rpc.RetryInfo (docs/clients.md, "Overload: retried
// when the daemon says so"), without a daemon: any call is retried after at least the delay,
// within the policy, and a spent policy throws the daemon's own error.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Metadata, status, type ServiceError } from "@grpc/grpc-js";
import { ClientReason, NO_RETRY, PostcompactError } from "../../src/index.js";
import { withRetry } from "../../src/retry.js";

const overloaded = (): PostcompactError =>
  new PostcompactError({ code: status.RESOURCE_EXHAUSTED, reason: "OVERLOADED", details: "full", method: "Compact", retryAfterMs: 100 });

/** withRetry over an attempt that fails with `errors` in turn, then answers "ok". */
async function run(
  policy: Parameters<typeof withRetry>[0],
  errors: PostcompactError[],
  method = "Compact",
): Promise<{ result: unknown; attempts: number; ms: number }> {
  let attempts = 0;
  const begin = Date.now();
  const result = await withRetry(policy, "unix:///x", method, {}, async () => {
    const e = errors[attempts++];
    if (e) throw e;
    return "ok";
  }).catch((e: unknown) => e);
  return { result, attempts, ms: Date.now() - begin };
}

describe("RetryInfo", () => {
  test("a non-idempotent call answered with a RetryInfo is retried after its delay", async () => {
    const r = await run(undefined, [overloaded(), overloaded()]);
    assert.equal(r.result, "ok");
    assert.equal(r.attempts, 3);
    assert.ok(r.ms >= 195, `waited ${r.ms} ms`);
  });

  test("a spent policy throws the daemon's OVERLOADED; NO_RETRY does not retry", async () => {
    const last = overloaded();
    const r = await run({ maxAttempts: 2 }, [overloaded(), last, overloaded()]);
    assert.equal(r.result, last);
    assert.equal(r.attempts, 2);
    const none = await run(NO_RETRY, [overloaded()]);
    assert.ok(none.result instanceof PostcompactError && none.result.reason === "OVERLOADED");
    assert.equal(none.attempts, 1);
  });

  test("an answer without a RetryInfo is not retried", async () => {
    const full = new PostcompactError({ code: status.RESOURCE_EXHAUSTED, reason: "TOO_MANY_SESSIONS", details: "full" });
    const r = await run(undefined, [full]);
    assert.equal(r.result, full);
    assert.equal(r.attempts, 1);
  });
});

/** What grpc-js answers itself, without a daemon reason. */
const fromGrpc = (code: status, details: string): PostcompactError =>
  PostcompactError.fromServiceError(Object.assign(new Error(details), { code, details, metadata: new Metadata() }) as ServiceError, "Compact");

describe("transport failures", () => {
  // grpc-js's statuses for an HTTP/2 stream that ended without a gRPC status: its connection's
  // GOAWAY code 11 (a gRPC server's final GOAWAY as it stops), or another reset.
  const goaway = (): PostcompactError => fromGrpc(status.RESOURCE_EXHAUSTED, "Bandwidth exhausted or memory limit exceeded");
  const reset = (): PostcompactError =>
    fromGrpc(status.INTERNAL, "Received RST_STREAM with code 2 triggered by internal client error: Session closed with error code 2");

  test("a stream reset is retried for an idempotent call", async () => {
    const r = await run(undefined, [goaway(), reset()], "CheckWrite");
    assert.equal(r.result, "ok");
    assert.equal(r.attempts, 3);
  });

  test("a stream reset during a Compact is CONNECTION_LOST, not retried", async () => {
    const r = await run(undefined, [goaway()]);
    assert.ok(r.result instanceof PostcompactError, String(r.result));
    assert.equal(r.result.reason, ClientReason.CONNECTION_LOST);
    assert.equal(r.result.transport, true);
    assert.match(r.result.details, /which is not retried: the daemon may have applied it/);
    assert.equal(r.attempts, 1);
  });

  test("a refused stream was never processed: any call is retried", async () => {
    const r = await run(undefined, [fromGrpc(status.UNAVAILABLE, "Stream refused by server")]);
    assert.equal(r.result, "ok");
    assert.equal(r.attempts, 2);
  });

  test("a gRPC status that is not a connection failure is named, not retried", async () => {
    const late = fromGrpc(status.DEADLINE_EXCEEDED, "Deadline exceeded");
    const r = await run(undefined, [late], "CheckWrite");
    assert.equal(r.result, late);
    assert.equal(late.reason, ClientReason.DEADLINE_EXCEEDED);
    assert.equal(r.attempts, 1);
  });

  test("gone for good: DAEMON_UNAVAILABLE", async () => {
    const down = (): PostcompactError => fromGrpc(status.UNAVAILABLE, "No connection established. Last error: connect ECONNREFUSED");
    const r = await run({ maxAttempts: 2 }, [down(), down(), down()], "CheckWrite");
    assert.ok(r.result instanceof PostcompactError);
    assert.equal(r.result.reason, ClientReason.DAEMON_UNAVAILABLE);
  });
});
