// Printing a client object shows no secret: `console.log(session)` used to print the client, its
// options and the whole process environment (API keys included). Every public object is printed
// every way Node prints (util.inspect with hidden fields, %o, %O, console.log's own format,
// JSON.stringify) with a fake secret in the environment and two TCP tokens, one given and one
// from the environment, each read by a call first.
import assert from "node:assert/strict";
import { format, inspect } from "node:util";
import { test } from "node:test";
import { NO_RETRY, PostcompactClient } from "../../src/index.js";

const SECRET = "sk-env-secret-3f9a1c";
const GIVEN_TOKEN = "tcp-token-given-7b2e";
const ENV_TOKEN = "tcp-token-from-env-91d4";

function printed(x: unknown): string[] {
  return [
    inspect(x, { depth: Infinity, showHidden: true }),
    inspect(x),
    format("%o", x),
    format("%O", x),
    format("%s", x),
    format(x),
    JSON.stringify(x) ?? "",
  ];
}

test("no client object prints the environment or a token; each shows its address and ids", async () => {
  process.env["SECRET_TOKEN"] = SECRET;
  try {
    const env = { ...process.env, POSTCOMPACT_TOKEN: ENV_TOKEN };
    const given = new PostcompactClient({ address: "127.0.0.1:1", token: GIVEN_TOKEN, env, retry: NO_RETRY });
    const fromEnv = new PostcompactClient({ address: "127.0.0.1:1", env, retry: NO_RETRY, channelOptions: { "grpc.primary_user_agent": "t" } });
    // A call on each, so that the token is read and the channel made (nothing listens on :1).
    const errors = await Promise.all([given, fromEnv].map((c) => c.getStats().then(() => undefined, (e: unknown) => e)));
    const session = given.session("ses-print-1", "agent-print-a");
    const objects: [string, unknown, string[]][] = [
      ["client (token given)", given, ["127.0.0.1:1", "explicit"]],
      ["client (token from the environment)", fromEnv, ["127.0.0.1:1"]],
      ["session", session, ["ses-print-1", "agent-print-a", "127.0.0.1:1"]],
      ["agent", session.agent("agent-print-b"), ["ses-print-1", "agent-print-b"]],
      ["address", given.address, ["127.0.0.1:1"]],
      ["rpc", given.rpc, []],
      ["the call's error", errors[0], ["127.0.0.1:1"]],
    ];
    const envValues = Object.entries(process.env)
      .filter(([k, v]) => v && v.length >= 8 && !["PWD", "OLDPWD", "INIT_CWD"].includes(k) && !k.startsWith("npm_"))
      .map(([, v]) => v as string);
    for (const [what, x, shown] of objects) {
      for (const text of printed(x)) {
        for (const secret of [SECRET, GIVEN_TOKEN, ENV_TOKEN])
          assert.ok(!text.includes(secret), `${what} prints a secret:\n${text.slice(0, 2000)}`);
        const leaked = envValues.filter((v) => text.includes(v));
        assert.deepEqual(leaked, [], `${what} prints the environment:\n${text.slice(0, 2000)}`);
      }
      for (const field of shown) assert.ok(inspect(x).includes(field), `${what} does not show ${field}: ${inspect(x)}`);
    }
    assert.equal(inspect(given), "PostcompactClient { address: '127.0.0.1:1', source: 'explicit', autoStart: false }");
    assert.equal(
      inspect(session),
      "Session {\n  id: 'ses-print-1',\n  agentId: 'agent-print-a',\n  resumed: true,\n  address: '127.0.0.1:1'\n}",
    );
    assert.deepEqual(JSON.parse(JSON.stringify(session)), { id: "ses-print-1", agentId: "agent-print-a", resumed: true, address: "127.0.0.1:1" });
    given.close();
    fromEnv.close();
  } finally {
    delete process.env["SECRET_TOKEN"];
  }
});
