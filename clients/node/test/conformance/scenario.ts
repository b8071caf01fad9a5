// Runs one tests/conformance/*.json scenario against a live daemon through the client's public
// API (tests/conformance/README.md is the format). Anything the runner does not understand (an op,
// a field, an expectation key) fails the scenario: a scenario this client cannot run is a failure.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import {
  PostcompactError,
  joinAttachments,
  joinRenderedText,
  type Attachment,
  type CatalogInput,
  type CompactOptions,
  type Decision,
  type MessageInput,
  type PolicyInput,
  type PostcompactClient,
  type ProfileName,
  type Session,
  type TranscriptBoundary,
} from "../../src/index.js";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

export interface Scenario {
  name: string;
  description?: string;
  files?: Record<string, string>;
  session?: Obj;
  steps: Obj[];
}

const camel = (s: string): string => s.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());

function substitute(v: Json, root: string): Json {
  if (typeof v === "string") return v.split("${root}").join(root);
  if (Array.isArray(v)) return v.map((x) => substitute(x, root));
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, substitute(x, root)]));
  return v;
}

function onlyKeys(what: string, o: Obj, allowed: string[]): void {
  const extra = Object.keys(o).filter((k) => !allowed.includes(k));
  if (extra.length) throw new Error(`${what}: the node runner does not understand ${extra.join(", ")}`);
}

const str = (v: Json | undefined, what: string): string => {
  if (typeof v !== "string") throw new Error(`${what} must be a string, got ${JSON.stringify(v)}`);
  return v;
};
const optStr = (v: Json | undefined): string | undefined => (v === undefined || v === null ? undefined : String(v));
const optNum = (v: Json | undefined): number | undefined => (v === undefined || v === null ? undefined : Number(v));
const list = (v: Json | undefined): Json[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]);

const POLICY_KEYS = [
  "max_files", "file_token_budget", "max_tokens_per_file", "max_tokens_per_skill", "skills_token_budget",
  "oversize", "skill_truncation_marker", "file_truncation_marker", "counter", "encoding",
  "max_file_size_bytes", "malware_reminder", "carry_read_state", "restore_seen", "left_out_index",
  "ranking", "complement", "match_budget",
];

const PROFILES = ["default", "claude-code", "claude-code-2.1.88"];

function policy(p: Json | undefined): PolicyInput | undefined {
  if (p === undefined || p === null) return undefined;
  const o = p as Obj;
  onlyKeys("policy", o, POLICY_KEYS);
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [camel(k), v])) as PolicyInput;
}

const decode = (v: unknown): unknown => (Buffer.isBuffer(v) ? v.toString("utf8") : v);

export class ScenarioRun {
  readonly root: string;
  private session!: Session;
  /** Sessions made by import_transcript steps, closed with the scenario's own. */
  private readonly imported: string[] = [];

  constructor(
    private readonly client: PostcompactClient,
    private readonly scenario: Scenario,
    tmpBase = "/tmp",
  ) {
    this.root = realpathSync(mkdtempSync(join(tmpBase, "pcn-proj-")));
  }

  cleanup(): void {
    rmSync(this.root, { recursive: true, force: true });
  }

  private abs(p: string): string {
    return isAbsolute(p) ? p : join(this.root, p);
  }

  /** The path rule of expectations: `${root}` substituted (already), relative joined to root. */
  private expectPath(p: Json | undefined): string {
    return this.abs(str(p, "expected path"));
  }

  async run(): Promise<void> {
    const sc = this.scenario;
    onlyKeys(`scenario ${sc.name}`, sc as unknown as Obj, ["name", "description", "files", "session", "steps"]);
    for (const [rel, content] of Object.entries(sc.files ?? {})) {
      const p = this.abs(rel);
      mkdirSync(dirname(p), { recursive: true });
      writeFileSync(p, content, "utf8");
    }
    const s = (substitute(sc.session ?? {}, this.root) ?? {}) as Obj;
    onlyKeys("session", s, ["policy", "memory_file_names", "memory_paths", "roots", "profile"]);
    const profile = optStr(s["profile"]);
    if (profile !== undefined && !PROFILES.includes(profile)) throw new Error(`unknown profile ${profile}`);
    this.session = await this.client.openSession({
      cwd: this.root,
      sessionId: `conformance-${sc.name}-${randomUUID()}`,
      policy: policy(s["policy"]),
      memory:
        s["memory_file_names"] !== undefined || s["memory_paths"] !== undefined
          ? { fileNames: list(s["memory_file_names"]).map(String), paths: list(s["memory_paths"]).map(String) }
          : undefined,
      roots: list(s["roots"]).map((r) => this.abs(String(r))),
      profile: profile as ProfileName | undefined, // the config names, mapped by the client
    });
    try {
      for (const [i, raw] of sc.steps.entries()) {
        const step = substitute(raw, this.root) as Obj;
        try {
          await this.step(step);
        } catch (e) {
          const msg = e instanceof Error ? e.message : String(e);
          const err = new Error(`step ${i + 1} (${String(step["op"])}): ${msg}`, { cause: e });
          throw err;
        }
      }
    } finally {
      await this.session.close().catch(() => undefined);
      for (const id of this.imported) await this.client.closeSession(id).catch(() => undefined);
    }
  }

  private async step(step: Obj): Promise<void> {
    const op = str(step["op"], "op");
    const handler = this.ops[op];
    if (!handler) throw new Error(`unknown op ${JSON.stringify(op)}: the node runner cannot run it`);
    const [fields, expectKeys, fn] = handler;
    onlyKeys(`op ${op}`, step, ["op", "agent", "expect", "expect_error", ...fields]);
    const agent = optStr(step["agent"]) ?? "";
    const expectError = step["expect_error"] as Obj | undefined;
    const expect = step["expect"] as Obj | undefined;
    if (expect) onlyKeys(`expect of ${op}`, expect, expectKeys);
    let result: Record<string, unknown> | undefined;
    try {
      result = await fn(step, this.session.agent(agent));
    } catch (e) {
      if (!expectError) throw e;
      onlyKeys("expect_error", expectError, ["code", "reason"]);
      assert.ok(e instanceof PostcompactError, `expected a PostcompactError, got ${String(e)}`);
      assert.equal(e.codeName, expectError["code"], `status code (${e.message})`);
      if (expectError["reason"] !== undefined) assert.equal(e.reason, expectError["reason"], `reason (${e.message})`);
      return;
    }
    if (expectError)
      throw new Error(`expected ${JSON.stringify(expectError)} but the call succeeded: ${JSON.stringify(result, (_k, v: unknown) => (v && typeof v === "object" && (v as { type?: string }).type === "Buffer" ? "<bytes>" : v))}`);
    if (expect) this.check(op, expect, result ?? {});
  }

  private currentContent(path: string): string {
    const p = this.abs(path);
    return existsSync(p) ? readFileSync(p, "utf8") : "";
  }

  // op -> [accepted fields, accepted expect keys, call]
  private readonly ops: Record<string, [string[], string[], (s: Obj, session: Session) => Promise<Record<string, unknown> | undefined>]> = {
    write_file: [["path", "content", "mtime_ms"], [], async (s) => {
      const p = this.abs(str(s["path"], "path"));
      mkdirSync(dirname(p), { recursive: true });
      writeFileSync(p, str(s["content"], "content"), "utf8");
      const mtime = optNum(s["mtime_ms"]);
      if (mtime !== undefined) utimesSync(p, mtime / 1000, mtime / 1000);
      return undefined;
    }],
    delete_file: [["path"], [], async (s) => {
      rmSync(this.abs(str(s["path"], "path")), { force: true, recursive: true });
      return undefined;
    }],
    start_agent: [["parent", "mode"], [], async (s, session) => {
      // `agent` names the new agent here; `parent` is the agent it starts from.
      const parent = this.session.agent(optStr(s["parent"]) ?? "");
      await parent.startAgent(session.agentId, (optStr(s["mode"]) ?? "UNSPECIFIED") as "FRESH");
      return undefined;
    }],
    attach: [[], ["resumed"], async () => {
      const joined = await this.client.attachSession(this.session.id);
      return { resumed: joined.resumed };
    }],
    end_agent: [[], ["cached_entries", "agents"], async (_s, session) => {
      return { ...(await session.endAgent()) };
    }],
    merge_file_state: [["from", "into"], ["merged", "kept"], async (s) => {
      const r = await this.session.mergeFileState(optStr(s["from"]) ?? "", optStr(s["into"]) ?? "");
      return { ...r };
    }],
    read_file: [["path", "offset", "limit"], ["unchanged", "text", "content", "path", "start_line", "num_lines", "total_lines", "tokens", "timestamp_ms"], async (s, session) => {
      return { ...(await session.readFile(str(s["path"], "path"), { offset: optNum(s["offset"]), limit: optNum(s["limit"]) })) };
    }],
    record_read: [["path", "timestamp_ms", "content", "offset", "limit", "partial_view", "nested_memory"], ["path"], async (s, session) => {
      const path = str(s["path"], "path");
      const content = optStr(s["content"]) ?? this.currentContent(path);
      const p = await session.recordRead(path, content, {
        timestampMs: optNum(s["timestamp_ms"]),
        offset: optNum(s["offset"]),
        limit: optNum(s["limit"]),
        partialView: s["partial_view"] === true,
        nestedMemory: s["nested_memory"] === true,
      });
      return { path: p };
    }],
    record_write: [["path", "timestamp_ms", "content", "if_entry_timestamp_ms", "changed_lines"], ["path"], async (s, session) => {
      const path = str(s["path"], "path");
      const content = optStr(s["content"]) ?? this.currentContent(path);
      const ts = optNum(s["timestamp_ms"]) ?? 0;
      const ifEntry = optNum(s["if_entry_timestamp_ms"]);
      if (s["changed_lines"] !== undefined) {
        const changedLines = list(s["changed_lines"]).map((r) => {
          const [first, last] = list(r);
          return [Number(first), Number(last)] as const;
        });
        return { path: await session.recordWrite(path, content, { timestampMs: ts, ifEntryTimestampMs: ifEntry, changedLines }) };
      }
      if (ifEntry !== undefined) return { path: await session.recordWriteIf(path, content, ifEntry, ts) };
      return { path: await session.recordWrite(path, content, ts) };
    }],
    check_write: [["path"], ["result", "error_code", "message", "path", "entry_timestamp_ms"], async (s, session) => {
      return { ...(await session.checkWrite(str(s["path"], "path"))) };
    }],
    check_stale: [["command", "started_at_ms"], ["stale_paths", "hint"], async (s, session) => {
      return { ...(await session.checkStale({ command: optStr(s["command"]), startedAtMs: optNum(s["started_at_ms"]) })) };
    }],
    record_skill: [["name", "skill_path", "content", "invoked_at_ms"], ["skills"], async (s, session) => {
      const skills = await session.recordSkill({
        name: str(s["name"], "name"),
        path: optStr(s["skill_path"]) ?? "",
        content: optStr(s["content"]) ?? "",
        invokedAtMs: optNum(s["invoked_at_ms"]),
      });
      return { skills };
    }],
    set_plan: [["plan_path"], ["plan_file_path"], async (s, session) => {
      return { planFilePath: await session.setPlan(optStr(s["plan_path"]) ?? "") };
    }],
    set_mode: [["mode"], [], async (s, session) => {
      await session.setMode(str(s["mode"], "mode") as "PLAN");
      return undefined;
    }],
    upsert_task: [["task"], [], async (s) => {
      const t = s["task"] as Obj;
      onlyKeys("task", t, ["task_id", "task_type", "description", "status", "progress_summary", "error", "retrieved", "output_file_path", "agent_id", "command", "monitor"]);
      const task = Object.fromEntries(Object.entries(t).map(([k, v]) => [camel(k), v])) as { taskId: string };
      await this.session.upsertTask(task);
      return undefined;
    }],
    set_catalog: [["deferred_tools", "agent_types", "show_concurrency_note", "mcp_servers", "skill_listing"], ["attachments"], async (s, session) => {
      const c: CatalogInput = {};
      if (s["deferred_tools"] !== undefined) c.deferredTools = list(s["deferred_tools"]).map(String);
      if (s["agent_types"] !== undefined)
        c.agentTypes = list(s["agent_types"]).map((a) => {
          const o = a as Obj;
          onlyKeys("agent_types[]", o, ["agent_type", "when_to_use", "tools"]);
          return { agentType: optStr(o["agent_type"]) ?? "", whenToUse: optStr(o["when_to_use"]) ?? "", tools: list(o["tools"]).map(String) };
        });
      if (s["show_concurrency_note"] !== undefined) c.showConcurrencyNote = s["show_concurrency_note"] === true;
      if (s["mcp_servers"] !== undefined)
        c.mcpServers = list(s["mcp_servers"]).map((m) => {
          const o = m as Obj;
          onlyKeys("mcp_servers[]", o, ["name", "instructions"]);
          return { name: optStr(o["name"]) ?? "", instructions: optStr(o["instructions"]) ?? "" };
        });
      if (s["skill_listing"] !== undefined)
        c.skillListing = list(s["skill_listing"]).map((m) => {
          const o = m as Obj;
          onlyKeys("skill_listing[]", o, ["name", "description"]);
          return { name: optStr(o["name"]) ?? "", description: optStr(o["description"]) ?? "" };
        });
      return { attachments: await session.setCatalog(c) };
    }],
    compact: [COMPACT_FIELDS, COMPACT_EXPECT, async (s, session) => ({ ...(await session.compact(compactOptions(s))) })],
    preview_compact: [COMPACT_FIELDS, COMPACT_EXPECT, async (s, session) => ({ ...(await session.previewCompact(compactOptions(s))) })],
    import_transcript: [["transcript", "session_id"], ["records", "events", "boundaries", "warnings"], async (s) => {
      if (!Array.isArray(s["transcript"])) throw new Error("transcript must be a list of JSON records");
      const jsonl = s["transcript"].map((r) => JSON.stringify(r) + "\n").join("");
      const sessionId = `${this.session.id}-${str(s["session_id"], "session_id")}`;
      this.imported.push(sessionId);
      return { ...(await this.client.importTranscript(Buffer.from(jsonl, "utf8"), { cwd: this.root, sessionId })) };
    }],
    estimate_tokens: [["text", "ext"], ["tokens"], async (s) => ({
      tokens: await this.client.estimateTokens(optStr(s["text"]) ?? "", optStr(s["ext"]) ?? ""),
    })],
    count_tokens: [["text", "encoding"], ["tokens"], async (s) => ({
      tokens: await this.client.countTokens(optStr(s["text"]) ?? "", optStr(s["encoding"]) ?? ""),
    })],
    truncate_tokens: [["text", "max_tokens", "marker", "counter", "encoding"], ["text", "truncated", "tokens"], async (s) => ({
      ...(await this.client.truncateTokens(optStr(s["text"]) ?? "", optNum(s["max_tokens"]) ?? 0, {
        marker: optStr(s["marker"]),
        counter: optStr(s["counter"]) as "ROUGH" | undefined,
        encoding: optStr(s["encoding"]),
      })),
    })],
  };

  // --- expectations -------------------------------------------------------------------------

  private check(op: string, expect: Obj, result: Record<string, unknown>): void {
    for (const [key, want] of Object.entries(expect)) {
      if (key === "decisions_exact") continue;
      const got = result[camel(key)];
      switch (key) {
        case "attachments":
          this.checkAttachments(got as Attachment[], want);
          break;
        case "rendered_text": // compact: the client's join of every attachment's blocks
          assert.equal(got, joinRenderedText(result["attachments"] as Attachment[]), `${op}.renderedText vs joinRenderedText`);
          assert.equal(got, str(want, "rendered_text"), `${op}.rendered_text`);
          break;
        case "user_blocks":
        case "system_text": {
          const joined = joinAttachments(result["attachments"] as Attachment[]);
          const value = key === "user_blocks" ? joined.userBlocks : joined.systemText;
          assert.deepEqual(got, value, `${op}.${camel(key)} vs joinAttachments`); // the result's copy
          assert.deepEqual(value, key === "user_blocks" ? list(want).map((b) => str(b, "user_blocks[]")) : str(want, key), `${op}.${key}`);
          break;
        }
        case "records": // import_transcript (int64: a number, longs: Number)
        case "events":
          assert.equal(Number(got), want, `${op}.${key}`);
          break;
        case "boundaries":
          this.checkBoundaries(got as TranscriptBoundary[], want);
          break;
        case "warnings": // a count
          assert.equal((got as string[]).length, want, `${op}.warnings: got ${JSON.stringify(got)}`);
          break;
        case "decisions":
          this.checkDecisions(got as Decision[], want, expect["decisions_exact"] === true);
          break;
        case "stale_paths":
          assert.deepEqual(
            [...(got as string[])].sort(),
            list(want).map((p) => this.expectPath(p)).sort(),
            "stale_paths (as a set)",
          );
          break;
        case "result": // check_write
          assert.equal(got, `WRITE_CHECK_${str(want, "result")}`, `${op}.result`);
          break;
        case "path":
        case "plan_file_path":
          assert.equal(got, this.expectPath(want), `${op}.${key}`);
          break;
        default:
          assert.deepEqual(decode(got), want, `${op}.${key}`);
      }
    }
  }

  private checkAttachments(got: Attachment[], want: Json): void {
    const wanted = list(want) as Obj[];
    const text = (a: Attachment): string => a.blocks.join("\n");
    const summary = (): string =>
      JSON.stringify(got.map((a) => ({ kind: a.kind, placement: a.placement, path: a.file?.path ?? a.fileReference?.path, text: text(a).slice(0, 120) })), null, 1);
    assert.equal(got.length, wanted.length, `number of attachments; got ${summary()}`);
    wanted.forEach((w, i) => {
      onlyKeys(`attachments[${i}]`, w, ["kind", "path", "placement", "blocks", "rendered_text", "rendered_contains", "file_content"]);
      const a = got[i]!;
      assert.equal(a.kind, `ATTACHMENT_KIND_${str(w["kind"], "kind")}`, `attachments[${i}].kind; got ${summary()}`);
      if (w["path"] !== undefined) {
        const path = a.file?.path ?? a.fileReference?.path;
        assert.equal(path, this.expectPath(w["path"]), `attachments[${i}].path; got ${summary()}`);
      }
      if (w["placement"] !== undefined)
        assert.equal(a.placement, `PLACEMENT_${str(w["placement"], "placement")}`, `attachments[${i}].placement; got ${summary()}`);
      if (w["blocks"] !== undefined)
        assert.deepEqual(a.blocks, list(w["blocks"]).map((b) => str(b, "blocks[]")), `attachments[${i}].blocks`);
      // An attachment's text: its blocks joined by "\n".
      if (w["rendered_text"] !== undefined) assert.equal(text(a), str(w["rendered_text"], "rendered_text"), `attachments[${i}].rendered_text`);
      for (const sub of list(w["rendered_contains"]))
        assert.ok(text(a).includes(str(sub, "rendered_contains")), `attachments[${i}].rendered_text lacks ${JSON.stringify(sub)}:\n${text(a)}`);
      if (w["file_content"] !== undefined)
        assert.equal(a.file?.content.toString("utf8"), str(w["file_content"], "file_content"), `attachments[${i}].file_content`);
    });
  }

  private checkBoundaries(got: TranscriptBoundary[], want: Json): void {
    const wanted = list(want) as Obj[];
    const items = (b: TranscriptBoundary, key: "recorded" | "restored"): { kind: string; path: string }[] =>
      b[key].map((x) => ({ kind: x.kind, path: x.path }));
    const show = (): string => JSON.stringify(got.map((b) => ({ recorded: items(b, "recorded"), restored: items(b, "restored") })), null, 1);
    assert.equal(got.length, wanted.length, `number of boundaries; got ${show()}`);
    wanted.forEach((w, i) => {
      onlyKeys(`boundaries[${i}]`, w, ["recorded", "restored"]);
      for (const key of ["recorded", "restored"] as const) {
        if (w[key] === undefined) continue;
        const expected = list(w[key]).map((x, j) => {
          const o = x as Obj;
          onlyKeys(`boundaries[${i}].${key}[${j}]`, o, ["kind", "path"]);
          return { kind: str(o["kind"], "kind"), path: str(o["path"], "path") }; // paths as in the transcript
        });
        assert.deepEqual(items(got[i]!, key), expected, `boundaries[${i}].${key}; got ${show()}`);
      }
    });
  }

  private checkDecisions(got: Decision[], want: Json, exact: boolean): void {
    const wanted = list(want) as Obj[];
    const show = (): string => JSON.stringify(got.map((d) => `${d.subject} ${d.name} ${d.outcome} ${d.detail}`), null, 1);
    for (const [i, w] of wanted.entries()) {
      onlyKeys(`decisions[${i}]`, w, ["subject", "name", "outcome", "rank", "tokens", "detail"]);
      const subject = `SUBJECT_${str(w["subject"], "subject")}`;
      const name = subject === "SUBJECT_FILE" ? this.expectPath(w["name"]) : str(w["name"], "name");
      const match = got.find(
        (d) =>
          d.subject === subject &&
          d.name === name &&
          (w["outcome"] === undefined || d.outcome === `OUTCOME_${str(w["outcome"], "outcome")}`) &&
          (w["rank"] === undefined || d.rank === w["rank"]) &&
          (w["tokens"] === undefined || d.tokens === w["tokens"]) &&
          (w["detail"] === undefined || d.detail === w["detail"]),
      );
      assert.ok(match, `decision ${JSON.stringify({ ...w, name })} not found in ${show()}`);
    }
    if (exact) assert.equal(got.length, wanted.length, `decisions_exact: got ${show()}`);
  }
}

const COMPACT_FIELDS = ["kind", "preserved_messages", "policy", "additional_context", "skip_hooks", "include_content"];
const COMPACT_EXPECT = ["attachments", "decisions", "decisions_exact", "rendered_text", "user_blocks", "system_text", "compaction"];

function compactOptions(s: Obj): CompactOptions {
  const o: CompactOptions = {};
  if (s["kind"] !== undefined) o.kind = str(s["kind"], "kind") as "FULL";
  if (s["policy"] !== undefined) o.policy = policy(s["policy"]);
  if (s["additional_context"] !== undefined) o.additionalContext = list(s["additional_context"]).map(String);
  if (s["skip_hooks"] !== undefined) o.skipHooks = s["skip_hooks"] === true;
  if (s["include_content"] !== undefined) o.includeContent = s["include_content"] === true;
  if (s["preserved_messages"] !== undefined) o.preservedMessages = list(s["preserved_messages"]).map(message);
  return o;
}

function message(m: Json): MessageInput {
  const o = m as Obj;
  onlyKeys("preserved_messages[]", o, ["role", "content"]);
  return {
    role: str(o["role"], "role").toUpperCase() as "USER",
    content: list(o["content"]).map((b) => {
      const block = b as Obj;
      onlyKeys("content block", block, ["text", "tool_use", "tool_result"]);
      if (block["text"] !== undefined) return { text: str(block["text"], "text") };
      if (block["tool_use"] !== undefined) {
        const u = block["tool_use"] as Obj;
        onlyKeys("tool_use", u, ["id", "name", "input"]);
        return { toolUse: { id: optStr(u["id"]) ?? "", name: optStr(u["name"]) ?? "", inputJson: JSON.stringify(u["input"] ?? {}) } };
      }
      if (block["tool_result"] !== undefined) {
        const r = block["tool_result"] as Obj;
        onlyKeys("tool_result", r, ["tool_use_id", "content", "is_error"]);
        return { toolResult: { toolUseId: optStr(r["tool_use_id"]) ?? "", content: optStr(r["content"]) ?? "", isError: r["is_error"] === true } };
      }
      throw new Error(`empty content block ${JSON.stringify(b)}`);
    }),
  };
}
