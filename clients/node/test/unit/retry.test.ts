// The retry rule for answers with a google.rpc.RetryInfo (docs/clients.md, "Overload: retried
// when the daemon says so"), without a daemon: any call is retried after at least the delay,
// within the policy, and a spent policy throws the daemon's own error.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { status } from "@grpc/grpc-js";
import { NO_RETRY, PostcompactError } from "../../src/index.js";
import { withRetry } from "../../src/retry.js";

const overloaded = (): PostcompactError =>
  new PostcompactError({ code: status.RESOURCE_EXHAUSTED, reason: "OVERLOADED", details: "full", method: "Compact", retryAfterMs: 100 });

/** withRetry over an attempt that fails with `errors` in turn, then answers "ok". */
async function run(policy: Parameters<typeof withRetry>[0], errors: PostcompactError[]): Promise<{ result: unknown; attempts: number; ms: number }> {
  let attempts = 0;
  const begin = Date.now();
  const result = await withRetry(policy, "unix:///x", "Compact", {}, async () => {
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
