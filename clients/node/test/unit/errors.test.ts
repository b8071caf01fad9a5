import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Metadata, status, type ServiceError } from "@grpc/grpc-js";
import { ClientReason, PostcompactError, statusCodeFromName, statusCodeName } from "../../src/index.js";
import { encodeStatusDetails } from "../fixtures/fake-server.js";

function serviceError(code: status, details: string, metadata: Metadata): ServiceError {
  return Object.assign(new Error(`${code} ${details}`), { code, details, metadata });
}

describe("error mapping", () => {
  test("reason from the trailing metadata key, ErrorInfo decoded", () => {
    const md = new Metadata();
    md.set("postcompact-error-reason", "PATH_OUTSIDE_ROOTS");
    md.set("grpc-status-details-bin", encodeStatusDetails(7, "outside", "PATH_OUTSIDE_ROOTS", { path: "/etc/passwd" }));
    const e = PostcompactError.fromServiceError(serviceError(status.PERMISSION_DENIED, "outside", md), "ReadFile");
    assert.ok(e instanceof PostcompactError && e instanceof Error);
    assert.equal(e.code, status.PERMISSION_DENIED);
    assert.equal(e.codeName, "PERMISSION_DENIED");
    assert.equal(e.reason, "PATH_OUTSIDE_ROOTS");
    assert.equal(e.details, "outside");
    assert.equal(e.method, "ReadFile");
    assert.deepEqual(e.errorInfo, { reason: "PATH_OUTSIDE_ROOTS", domain: "postcompact", metadata: { path: "/etc/passwd" } });
    assert.deepEqual(e.info, { path: "/etc/passwd" });
    assert.match(e.message, /ReadFile: PERMISSION_DENIED \[PATH_OUTSIDE_ROOTS\] outside/);
  });

  test("reason from ErrorInfo alone", () => {
    const md = new Metadata();
    md.set("grpc-status-details-bin", encodeStatusDetails(3, "bad", "MALFORMED_REQUEST"));
    const e = PostcompactError.fromServiceError(serviceError(status.INVALID_ARGUMENT, "bad", md));
    assert.equal(e.reason, "MALFORMED_REQUEST");
  });

  test("a RetryInfo's delay is retryAfterMs; none without one", () => {
    const md = new Metadata();
    md.set("postcompact-error-reason", "OVERLOADED");
    md.set("grpc-status-details-bin", encodeStatusDetails(8, "full", "OVERLOADED", { limit: "max_calls_in_flight" }, 1500));
    const e = PostcompactError.fromServiceError(serviceError(status.RESOURCE_EXHAUSTED, "full", md));
    assert.equal(e.retryAfterMs, 1500);
    assert.deepEqual(e.info, { limit: "max_calls_in_flight" }); // the ErrorInfo is still read
    const plain = new Metadata();
    plain.set("grpc-status-details-bin", encodeStatusDetails(8, "too many", "TOO_MANY_SESSIONS"));
    assert.equal(PostcompactError.fromServiceError(serviceError(status.RESOURCE_EXHAUSTED, "", plain)).retryAfterMs, undefined);
  });

  test("no reason at all (a transport failure): named by the client", () => {
    const e = PostcompactError.fromServiceError(serviceError(status.UNAVAILABLE, "connect failed", new Metadata()));
    assert.equal(e.reason, ClientReason.CONNECTION_LOST);
    assert.equal(e.transport, true);
    assert.equal(e.codeName, "UNAVAILABLE");
    assert.equal(e.errorInfo, undefined);
    const late = PostcompactError.fromServiceError(serviceError(status.DEADLINE_EXCEEDED, "Deadline exceeded", new Metadata()));
    assert.equal(late.reason, ClientReason.DEADLINE_EXCEEDED);
    const big = PostcompactError.fromServiceError(serviceError(status.RESOURCE_EXHAUSTED, "Received message larger than max (5 vs. 4)", new Metadata()));
    assert.equal(big.reason, ClientReason.TRANSPORT_ERROR);
    for (const e of [late, big]) assert.equal(e.transport, true);
    // Never "UNKNOWN", and a daemon's answer is not a transport failure.
    const md = new Metadata();
    md.set("postcompact-error-reason", "STATE_WRITE_FAILED");
    const answer = PostcompactError.fromServiceError(serviceError(status.UNAVAILABLE, "disk", md));
    assert.equal(answer.transport, false);
    assert.equal(answer.reason, "STATE_WRITE_FAILED");
  });

  test("garbage details do not hide the plain reason", () => {
    const md = new Metadata();
    md.set("postcompact-error-reason", "X");
    md.set("grpc-status-details-bin", Buffer.from([0xff, 0xff, 0xff]));
    assert.equal(PostcompactError.fromServiceError(serviceError(status.INTERNAL, "", md)).reason, "X");
  });

  test("status code names both ways", () => {
    assert.equal(statusCodeName(3), "INVALID_ARGUMENT");
    assert.equal(statusCodeFromName("NOT_FOUND"), 5);
    assert.throws(() => statusCodeFromName("NOPE"));
  });
});
