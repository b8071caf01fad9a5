import type { CallOptions, PostcompactClient } from "./client.js";
import { enumName } from "./client.js";
import * as T from "./types.js";
import { inspect, type InspectOptions } from "node:util";

/** RestorePolicy with enum values also accepted without their prefix ("REFERENCE", "EXACT"). */
export type PolicyInput = Omit<
  T.RestorePolicyInput,
  "oversize" | "counter" | "ranking" | "complement" | "matchBudget"
> & {
  oversize?: T.OversizePolicyName;
  counter?: T.TokenCounterName;
  ranking?: T.FileRankingName;
  /** Restore only what the named harness rule leaves out ("CLAUDE_CODE"): docs/profiles.md. */
  complement?: T.HarnessRuleName;
  /** The file budget is what the named harness rule spends at each compaction. */
  matchBudget?: T.HarnessRuleName;
};

export interface OpenSessionOptions {
  /** Absolute working directory of the conversation (required). */
  cwd: string;
  /** Resume this session, or create it under this id; empty: the daemon makes one. */
  sessionId?: string;
  /** Reads are confined here; empty = [cwd]. */
  roots?: string[];
  memory?: T.MemoryFilesInput;
  plansDirectory?: string;
  policy?: PolicyInput;
  profile?: T.ProfileName;
  home?: string;
  /**
   * The session's wording, over the daemon's `[templates]`: `{ preset: "neutral" }` (no Claude
   * Code tool named) and/or templates by name (`read_tool_name`, `read_path_key`, `read_call`...;
   * docs/profiles.md, "Wording").
   */
  templates?: Record<string, string>;
}

/** `{ preset, ...templates }` as the TemplateSpec the daemon takes. */
function templateSpec(t: Record<string, string>): T.TemplateSpecInput {
  const { preset, ...strings } = t;
  return { preset: preset ?? "", strings };
}

export interface ImportTranscriptOptions {
  /** Where the transcript's working directory is on this machine (absolute; required): paths
   * under the transcript's cwd are mapped under it. */
  cwd: string;
  /** The new session's id; empty: the transcript's own session id. */
  sessionId?: string;
  /** Further path prefixes, as in the transcript (POSIX or Windows form) -> absolute local
   * path; the longest match wins. */
  pathMap?: Record<string, string>;
  /** The imported session's profile (default: the daemon's). */
  profile?: T.ProfileName;
  /** The imported session's policy. */
  policy?: PolicyInput;
  /** The imported session's home (for ~ expansion); empty: the daemon user's. */
  home?: string;
  /** Replace a session with that id (else the call fails ALREADY_EXISTS). */
  replace?: boolean;
  /** Stamp reads and writes with the files' mtimes here (as a running Claude Code does), not
   * with the records' times (as its `--resume` does). */
  fileMtimes?: boolean;
}

export interface ReadResult {
  /** The normalised absolute path (the state key). */
  path: string;
  /** `text` is the "File unchanged since last read" stub. */
  unchanged: boolean;
  /** The model-facing tool result (`N\tline` numbered text, or the stub). */
  text: string;
  /** The raw text of the range read (empty when unchanged). */
  content: string;
  timestampMs: number;
  startLine: number;
  numLines: number;
  totalLines: number;
  tokens: number;
}

export interface ReadOptions {
  /** 1-based first line (default 1). */
  offset?: number;
  /** Number of lines (default: all). */
  limit?: number;
}

export interface RecordReadOptions extends ReadOptions {
  /** The harness's timestamp (mtime or read time); 0 or absent = now. */
  timestampMs?: number;
  partialView?: boolean;
  nestedMemory?: boolean;
}

/** Lines `first`..`last` of a write's new content, 1-based and inclusive. */
export type ChangedRange = readonly [first: number, last: number] | { first: number; last: number };

export interface RecordWriteOptions {
  /** The file's mtime after the write; 0 or absent = the daemon stats the file. */
  timestampMs?: number;
  /** Record it only while the agent's entry still has this timestamp (see `recordWriteIf`). */
  ifEntryTimestampMs?: number;
  /**
   * The lines of `content` the write added or changed (an Edit's hunks); `[]`: it only deleted
   * lines; absent: the daemon diffs `content` against what the agent held. They widen the span
   * of lines the agent saw of the file (docs/eval.md §2).
   */
  changedLines?: readonly ChangedRange[];
}

function changedLines(ranges: readonly ChangedRange[]): T.ChangedLinesInput {
  return { ranges: ranges.map((r) => ("first" in r ? { first: r.first, last: r.last } : { first: r[0], last: r[1] })) };
}

export interface SkillInput {
  name: string;
  path?: string;
  content: T.Bytes;
  invokedAtMs?: number;
}

export type TaskInput = Omit<T.TaskInput, "status"> & { taskId: string; status?: T.TaskStatusName };

export interface CatalogInput {
  /** Names of the deferred tools now available. */
  deferredTools?: string[];
  agentTypes?: T.AgentTypeInput[];
  showConcurrencyNote?: boolean;
  mcpServers?: T.McpServerInput[];
  skillListing?: T.SkillListingEntryInput[];
}

export type MessageInput = Omit<T.ConversationMessageInput, "role"> & { role?: T.RoleName };

export interface CompactOptions {
  /** FULL (default) or PARTIAL (then `preservedMessages` stay in context). */
  kind?: T.CompactKindName;
  preservedMessages?: MessageInput[];
  /** Per-request policy overrides. */
  policy?: PolicyInput;
  additionalContext?: string[];
  skipHooks?: boolean;
  /**
   * Also fill the raw copies (`file.content`, `planFileReference.planContent`,
   * `invokedSkills.skills[].content`). Off by default: the same text is in each attachment's
   * `blocks`, so it crosses the socket once.
   */
  includeContent?: boolean;
}

/**
 * Where a harness puts the attachments' text, as Claude Code lays out a request (see
 * `joinAttachments`).
 */
export interface Injection {
  /** The text blocks of the user message after the summary: every user-placed attachment's
   * blocks, in order. */
  userBlocks: string[];
  /** The system message's text: the system-placed sections joined by "\n\n" ("" when none). */
  systemText: string;
}

/**
 * What Compact returns: the attachments in injection order, decisions, totals, and the text to
 * inject, joined here (the response does not carry it): `userBlocks` and `systemText` as
 * `joinAttachments` lays them out, and `renderedText`, all of it as one string (every
 * attachment's blocks, in order, joined by "\n", as `joinRenderedText`).
 */
export interface CompactResult extends T.CompactResponse, Injection {
  renderedText: string;
}

/**
 * All the text as one string: every attachment's `blocks`, in order, flattened and joined by
 * "\n". Under the default and claude-code-2.1.88 profiles, where everything is user-placed, this
 * is the user message's text; `joinAttachments` keeps the placement.
 */
export function joinRenderedText(attachments: readonly Pick<T.Attachment, "blocks">[]): string {
  return attachments.flatMap((a) => a.blocks).join("\n");
}

/**
 * The join every harness does, as Claude Code lays out a request: `userBlocks`, the blocks of the attachments
 * whose placement is not PLACEMENT_SYSTEM, in order (the text blocks of the user message after
 * the summary); `systemText`, the blocks of the PLACEMENT_SYSTEM attachments (one section each)
 * joined by "\n\n" (appended to the system message).
 *
 * ```ts
 * const { userBlocks, systemText } = joinAttachments(result.attachments);
 * ```
 */
export function joinAttachments(attachments: readonly Pick<T.Attachment, "placement" | "blocks">[]): Injection {
  const userBlocks: string[] = [];
  const system: string[] = [];
  for (const a of attachments) (a.placement === "PLACEMENT_SYSTEM" ? system : userBlocks).push(...a.blocks);
  return { userBlocks, systemText: system.join("\n\n") };
}

function compactResult(r: T.CompactResponse): CompactResult {
  return { ...r, ...joinAttachments(r.attachments), renderedText: joinRenderedText(r.attachments) };
}

/** Config/CLI profile names and the enum value each one means. */
const PROFILE_NAMES: Readonly<Record<string, T.Profile__Output>> = {
  default: "PROFILE_DEFAULT",
  "claude-code": "PROFILE_CLAUDE_CODE",
  "claude-code-2.1.88": "PROFILE_CLAUDE_CODE_2_1_88",
};

/**
 * A profile by its config/CLI name ("default", "claude-code", "claude-code-2.1.88") or its enum
 * name, with or without the prefix ("CLAUDE_CODE_2_1_88", "PROFILE_CLAUDE_CODE"). An unknown
 * name throws (protobuf would silently send it as PROFILE_UNSPECIFIED).
 */
export function profileRequest(p: T.ProfileName | undefined): T.Profile | undefined {
  if (!p) return undefined;
  const named = PROFILE_NAMES[p.toLowerCase().replace(/_/g, "-")];
  const value = named ?? enumName("PROFILE_", p);
  if (!(value in T.Profile)) throw new TypeError(`unknown profile ${JSON.stringify(p)}: expected one of ${Object.keys(PROFILE_NAMES).join(", ")}`);
  return value as T.Profile;
}

export function policyRequest(p: PolicyInput | undefined): T.RestorePolicyInput | undefined {
  if (!p) return undefined;
  return {
    ...p,
    oversize: p.oversize ? (enumName("OVERSIZE_POLICY_", p.oversize) as T.OversizePolicy) : undefined,
    counter: p.counter ? (enumName("TOKEN_COUNTER_", p.counter) as T.TokenCounter) : undefined,
    ranking: p.ranking ? (enumName("FILE_RANKING_", p.ranking) as T.FileRanking) : undefined,
    complement: p.complement ? (enumName("HARNESS_RULE_", p.complement) as T.HarnessRule) : undefined,
    matchBudget: p.matchBudget ? (enumName("HARNESS_RULE_", p.matchBudget) as T.HarnessRule) : undefined,
  };
}

export function importTranscriptRequest(transcript: T.Bytes, o: ImportTranscriptOptions): T.ImportTranscriptRequestInput {
  return {
    transcript,
    sessionId: o.sessionId ?? "",
    cwd: o.cwd,
    pathMap: Object.entries(o.pathMap ?? {}).map(([source, target]) => ({ source, target })),
    profile: profileRequest(o.profile),
    policy: policyRequest(o.policy),
    home: o.home ?? "",
    replace: o.replace ?? false,
    fileMtimes: o.fileMtimes ?? false,
  };
}

function messagesRequest(ms: MessageInput[] | undefined): T.ConversationMessageInput[] | undefined {
  return ms?.map((m) => ({ ...m, role: m.role ? (enumName("ROLE_", m.role) as T.Role) : undefined }));
}

/**
 * One conversation on the daemon, seen as one agent (`agentId` "" is the main thread). Every
 * method is one RPC; `agent(id)` gives the same session as another agent.
 */
export class Session {
  constructor(
    readonly client: PostcompactClient,
    readonly id: string,
    readonly agentId: string,
    /** The session existed already when opened. */
    readonly resumed: boolean,
    readonly info: T.SessionInfo | undefined,
  ) {}

  static openRequest(o: OpenSessionOptions): T.OpenSessionRequestInput {
    return {
      sessionId: o.sessionId ?? "",
      cwd: o.cwd,
      roots: o.roots ?? [],
      memory: o.memory,
      plansDirectory: o.plansDirectory ?? "",
      policy: policyRequest(o.policy),
      profile: profileRequest(o.profile),
      home: o.home ?? "",
      ...(o.templates ? { templates: templateSpec(o.templates) } : {}),
    };
  }

  /** What printing shows: the session and agent ids and the daemon's address, not the client's
   * options or environment (docs/clients.md, "Printing a client"). */
  toJSON(): { id: string; agentId: string; resumed: boolean; address: string } {
    return { id: this.id, agentId: this.agentId, resumed: this.resumed, address: this.client.address.address };
  }

  [inspect.custom](_depth: number, options: InspectOptions): string {
    return `Session ${inspect(this.toJSON(), options)}`;
  }

  /** This session as agent `agentId` (no call; see `startAgent` to create one). */
  agent(agentId: string): Session {
    return new Session(this.client, this.id, agentId, this.resumed, this.info);
  }

  private get ids(): { sessionId: string; agentId: string } {
    return { sessionId: this.id, agentId: this.agentId };
  }

  /** Start a sub-agent (FRESH: empty file state; CLONE_PARENT: a copy of this agent's). */
  async startAgent(
    agentId: string,
    mode: T.AgentModeName = "FRESH",
    options?: CallOptions,
  ): Promise<Session> {
    await this.client.rpc.startAgent(
      {
        sessionId: this.id,
        agentId,
        parentAgentId: this.agentId,
        mode: enumName("AGENT_MODE_", mode) as T.AgentMode,
      },
      options,
    );
    return this.agent(agentId);
  }

  /**
   * End this sub-agent: its file state, skills and catalogue are forgotten and its slot in the
   * session (limits.max_agents_per_session) is free. The main thread cannot end
   * (INVALID_ARGUMENT `MAIN_AGENT`): close the session.
   */
  async endAgent(options?: CallOptions): Promise<T.EndAgentResponse> {
    return this.client.rpc.endAgent(this.ids, options);
  }

  /** Merge agent `from`'s file state into `into` (default: this agent). */
  async mergeFileState(from: string, into = this.agentId, options?: CallOptions): Promise<T.MergeFileStateResponse> {
    return this.client.rpc.mergeFileState({ sessionId: this.id, fromAgentId: from, intoAgentId: into }, options);
  }

  /** Read a file through the daemon (it records the read; a re-read may be the unchanged stub). */
  async readFile(path: string, opts: ReadOptions = {}, options?: CallOptions): Promise<ReadResult> {
    const r = await this.client.rpc.readFile({ ...this.ids, path, offset: opts.offset, limit: opts.limit }, options);
    return {
      path: r.path,
      unchanged: r.unchanged,
      text: r.text.toString("utf8"),
      content: r.content.toString("utf8"),
      timestampMs: r.timestampMs,
      startLine: r.startLine,
      numLines: r.numLines,
      totalLines: r.totalLines,
      tokens: r.tokens,
    };
  }

  /** Record a read the harness did itself. Returns the normalised path. */
  async recordRead(path: string, content: T.Bytes, opts: RecordReadOptions = {}, options?: CallOptions): Promise<string> {
    const r = await this.client.rpc.recordRead(
      {
        ...this.ids,
        path,
        content,
        timestampMs: opts.timestampMs ?? 0,
        offset: opts.offset,
        limit: opts.limit,
        partialView: opts.partialView ?? false,
        nestedMemory: opts.nestedMemory ?? false,
      },
      options,
    );
    return r.path;
  }

  /**
   * Record an Edit/Write (content after it). The third argument is the timestamp (0 = the daemon
   * stats the file) or `RecordWriteOptions` (the timestamp, the lines changed, the condition).
   */
  async recordWrite(
    path: string,
    content: T.Bytes,
    timestampOrOptions: number | RecordWriteOptions = 0,
    options?: CallOptions,
  ): Promise<string> {
    const o: RecordWriteOptions = typeof timestampOrOptions === "number" ? { timestampMs: timestampOrOptions } : timestampOrOptions;
    const req: T.RecordWriteRequestInput = { ...this.ids, path, content, timestampMs: o.timestampMs ?? 0 };
    if (o.ifEntryTimestampMs !== undefined) req.ifEntryTimestampMs = o.ifEntryTimestampMs;
    if (o.changedLines !== undefined) req.changedLines = changedLines(o.changedLines);
    return (await this.client.rpc.recordWrite(req, options)).path;
  }

  /**
   * Record a write only if no other read or write of `path` was recorded since the CheckWrite
   * that allowed it (`ifEntryTimestampMs`: its `entryTimestampMs`): FAILED_PRECONDITION
   * `WRITE_CONFLICT` otherwise, and nothing changes.
   */
  async recordWriteIf(
    path: string,
    content: T.Bytes,
    ifEntryTimestampMs: number,
    timestampMs = 0,
    options?: CallOptions,
  ): Promise<string> {
    const req = { ...this.ids, path, content, timestampMs, ifEntryTimestampMs };
    return (await this.client.rpc.recordWrite(req, options)).path;
  }

  /** May the agent write `path` now? (NOT_READ / MODIFIED carry Claude Code's error text.) */
  async checkWrite(path: string, options?: CallOptions): Promise<T.CheckWriteResponse> {
    return this.client.rpc.checkWrite({ ...this.ids, path }, options);
  }

  /** Read files changed on disk since read, with the hint for a write-like shell command. */
  async checkStale(opts: { command?: string; startedAtMs?: number } = {}, options?: CallOptions): Promise<T.CheckStaleResponse> {
    return this.client.rpc.checkStale(
      { ...this.ids, command: opts.command ?? "", startedAtMs: opts.startedAtMs ?? 0 },
      options,
    );
  }

  /** Record an invoked skill. Returns how many skills this agent now holds. */
  async recordSkill(skill: SkillInput, options?: CallOptions): Promise<number> {
    const r = await this.client.rpc.recordSkill(
      { ...this.ids, name: skill.name, path: skill.path ?? "", content: skill.content, invokedAtMs: skill.invokedAtMs ?? 0 },
      options,
    );
    return r.skills;
  }

  /**
   * Set the plan file ("" = the default, in the plans directory). Returns the path the daemon
   * will use, normalised.
   */
  async setPlan(planFilePath: string, options?: CallOptions): Promise<string> {
    return (await this.client.rpc.setPlan({ ...this.ids, planFilePath }, options)).planFilePath;
  }

  async setMode(mode: T.PermissionModeName, options?: CallOptions): Promise<void> {
    await this.client.rpc.setMode(
      { ...this.ids, mode: enumName("PERMISSION_MODE_", mode) as T.PermissionMode },
      options,
    );
  }

  /** Create or update a background task of the session. */
  async upsertTask(task: TaskInput, options?: CallOptions): Promise<void> {
    await this.client.rpc.upsertTask(
      {
        sessionId: this.id,
        task: { ...task, status: task.status ? (enumName("TASK_STATUS_", task.status) as T.TaskStatus) : undefined },
      },
      options,
    );
  }

  /** Update the catalogues; returns the delta attachments to announce now. */
  async setCatalog(c: CatalogInput, options?: CallOptions): Promise<T.Attachment[]> {
    const agentTypes =
      c.agentTypes !== undefined || c.showConcurrencyNote !== undefined
        ? { agentTypes: c.agentTypes ?? [], showConcurrencyNote: c.showConcurrencyNote ?? false }
        : undefined;
    const r = await this.client.rpc.setCatalog(
      {
        ...this.ids,
        deferredTools: c.deferredTools ? { names: c.deferredTools } : undefined,
        agentTypes,
        mcpServers: c.mcpServers ? { servers: c.mcpServers } : undefined,
        skillListing: c.skillListing ? { skills: c.skillListing } : undefined,
      },
      options,
    );
    return r.attachments;
  }

  private compactRequest(o: CompactOptions): T.CompactRequestInput {
    return {
      ...this.ids,
      kind: o.kind ? (enumName("COMPACT_KIND_", o.kind) as T.CompactKind) : undefined,
      preservedMessages: messagesRequest(o.preservedMessages),
      policy: policyRequest(o.policy),
      additionalContext: o.additionalContext ?? [],
      skipHooks: o.skipHooks ?? false,
      includeContent: o.includeContent ?? false,
    };
  }

  /**
   * Compact: the restoration attachments in injection order (each with its `placement` and text
   * `blocks`), a decision for every candidate file and skill, totals per category, and the text
   * to inject, joined here: `userBlocks` and `systemText` (as `joinAttachments`) and
   * `renderedText` (all of it as one string). Clears the agent's read state as Claude Code does.
   */
  async compact(opts: CompactOptions = {}, options?: CallOptions): Promise<CompactResult> {
    return compactResult(await this.client.rpc.compact(this.compactRequest(opts), options));
  }

  /** What `compact` would return now, changing nothing. */
  async previewCompact(opts: CompactOptions = {}, options?: CallOptions): Promise<CompactResult> {
    return compactResult(await this.client.rpc.previewCompact(this.compactRequest(opts), options));
  }

  /**
   * Close what this handle stands for: the session and all its agents for the main thread, only
   * this agent (`endAgent`) for a sub-agent.
   */
  async close(options?: CallOptions): Promise<void> {
    if (this.agentId !== "") {
      await this.endAgent(options);
      return;
    }
    await this.client.rpc.closeSession({ sessionId: this.id }, options);
  }
}
