/**
 * postcompact for OpenCode: a server plugin (the `@opencode-ai/plugin` 1.x hooks).
 *
 * - `tool.execute.after` of `read`, `edit`, `write` (and `apply_patch`, which some models get in
 *   place of edit/write): the file is read from disk and reported to the daemon (RecordRead /
 *   RecordWrite), one postcompact session per OpenCode session. OpenCode runs this hook only
 *   after a tool returned: a failed edit (its text not found, the file not read) reports nothing.
 * - `tool.execute.after` of `skill`: the skill's instructions, as the tool's output carries them,
 *   and its SKILL.md path (RecordSkill), so that a compaction restores the skill.
 * - `experimental.chat.messages.transform`, called before every model request with the messages
 *   about to be sent: once OpenCode has compacted (the history then starts with its summary, an
 *   assistant message marked `summary`), the plugin calls Compact once for that summary and puts
 *   the restoration's user blocks, as text parts, at the head of the first user message after the
 *   summary (OpenCode's "Continue …" turn, or the user's next prompt). The transform's output is
 *   not stored by OpenCode, so the same blocks are put there again on every later request until
 *   the next compaction: the restored files stay in context as the summary does.
 * - `experimental.chat.system.transform`: the restoration's system-placed text, if any, as one
 *   more system section.
 *
 * Nothing the daemon does (or fails to do) stops the agent: every call is caught and logged, and
 * a request waits for the daemon at most about a second (COMPACTION_WAIT_MS). The daemon is
 * found, and started when none answers, as daemon.ts says; when it cannot be reached the user is
 * told once per session (a toast in the TUI, and a warning in OpenCode's log), and the
 * restoration is tried again on the next request.
 */
import { readFile, stat } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";

import type { Hooks, Plugin, PluginInput, PluginOptions } from "@opencode-ai/plugin";
import type { PostcompactClient, ProfileName, Session } from "@postcompact/client";

import { DaemonLink, findDaemonBin, isUnreachable, within, type DaemonBin, type Failure } from "./daemon.js";

/** Options, from the config entry `["/path/to/clients/opencode", { … }]` (all optional). */
export interface PostcompactPluginOptions {
  /** The daemon's address (`unix:///path`, `127.0.0.1:PORT`); default: the clients' discovery
   * (`POSTCOMPACT_ADDRESS`, server.json, the default socket), starting the daemon when absent. */
  address?: string;
  /** Start the daemon when none answers (default: true unless `address` is given). */
  autoStart?: boolean;
  /** The `postcompact` executable that starts it (default: `POSTCOMPACT_BIN`, `postcompact` on
   * PATH, the checkout's `.venv/bin/postcompact`, `~/.local/bin/postcompact`; daemon.ts). */
  daemonBin?: string;
  /** The session profile: "default" (the default), "claude-code", "claude-code-2.1.88". */
  profile?: ProfileName;
  /** Prefix of the postcompact session ids (default "opencode-"); the rest is OpenCode's id. */
  sessionPrefix?: string;
  /** The restoration's wording (default `{ preset: "neutral" }`: no Claude Code tool named, and
   * OpenCode's read tool, `read` with `filePath`, for the kept tail and the restored call). */
  templates?: Record<string, string>;
}

type Messages = Parameters<NonNullable<Hooks["experimental.chat.messages.transform"]>>[1]["messages"];
type Part = Messages[number]["parts"][number];

interface Restoration {
  /** The id of the summary message the restoration follows. */
  summaryId: string;
  userBlocks: string[];
  systemText: string;
}

interface SessionState {
  /** The postcompact session, opened on `client` (another client, after the daemon came back,
   * opens it again: the id resumes it). */
  session?: Session;
  client?: PostcompactClient;
  /** The records not yet acknowledged, in order: tools do not wait for the daemon, a compaction
   * does (within COMPACTION_WAIT_MS). */
  queue: Promise<void>;
  /** The summary the restoration below is for. */
  restorationFor?: string;
  /** The restoration for it, once the daemon answered. */
  restored?: Restoration;
  /** The Compact computing it, while it runs: a request that cannot wait for it goes without,
   * and the next one waits again (or starts another, when this one failed). */
  restoring?: Promise<Restoration | undefined>;
}

const SERVICE = "postcompact";
/** How long a model request waits for the daemon (the records before the compaction, the
 * connection, Compact): past it the request goes without the restoration and the next one
 * waits again. */
export const COMPACTION_WAIT_MS = 1000;
/** After an attempt to reach the daemon failed, records are dropped without another attempt for
 * this long, so that a daemon that is not there costs the agent nothing (a compaction always
 * tries again). */
const RECONNECT_AFTER_MS = 30_000;
/** The deadline of each call (a hung daemon fails it, and the next request connects again). */
const CALL_TIMEOUT_MS = 15_000;
/** When OpenCode disposes the plugin (its run ends), the records still queued (the last tool
 * calls' reads and writes) are waited for this long before the connection is closed. */
export const DISPOSE_WAIT_MS = 2000;
/** The client's retries across a daemon restart: short, so that a Compact the daemon could not
 * take fails soon after the request that waited for it, and the next request starts afresh. */
const RETRY = { maxElapsedMs: 2_000 };

function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

function int(v: unknown): number | undefined {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : undefined;
}

/** The files an `apply_patch` call touched: its `*** Add File:`, `*** Update File:` and
 * `*** Move to:` lines (a deleted file is not reported). */
export function patchedFiles(patchText: string): string[] {
  const out: string[] = [];
  for (const line of patchText.split(/\r?\n/)) {
    const m = /^\*\*\* (?:Add File|Update File|Move to): (.+?)\s*$/.exec(line);
    if (m) out.push(m[1]);
  }
  return out;
}

/** The skill an OpenCode `skill` call loaded, from the tool's output (`<skill_content
 * name="…">`, `# Skill: …`, a blank line, the SKILL.md body, a blank line, `Base directory for
 * this skill: DIR`, then the file list): the body and `DIR/SKILL.md`; undefined when the output
 * is not that (another OpenCode version's, or an error). */
export function loadedSkill(name: string, output: string): { content: string; path?: string } | undefined {
  const head = `<skill_content name="${name}">\n# Skill: ${name}\n\n`;
  if (!output.startsWith(head)) return undefined;
  const base = "\n\nBase directory for this skill: ";
  const at = output.indexOf(base, head.length);
  if (at < 0) return undefined;
  const dir = output.slice(at + base.length).split("\n", 1)[0];
  return { content: output.slice(head.length, at), ...(dir ? { path: `${dir}/SKILL.md` } : {}) };
}

/** The text a ranged read showed: lines `offset` (1-based) to `offset + limit - 1`. */
function slice(text: string, offset: number | undefined, limit: number | undefined): string {
  if (offset === undefined && limit === undefined) return text;
  const lines = text.split("\n");
  const start = Math.max((offset ?? 1) - 1, 0);
  const end = limit === undefined ? lines.length : start + limit;
  return lines.slice(start, end).join("\n");
}

/** Where in `messages` the restoration goes: the first user message after the latest summary. */
export function anchorOf(messages: Messages): { summaryId: string; index: number } | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const info = messages[i].info;
    if (info.role === "assistant" && info.summary === true) {
      for (let j = i + 1; j < messages.length; j++) {
        if (messages[j].info.role === "user") return { summaryId: info.id, index: j };
      }
      return undefined;
    }
  }
  return undefined;
}

/** What to tell the user when the daemon cannot be reached, in one line. */
export function unreachableMessage(failure: Failure | undefined, autoStart: boolean, found: DaemonBin): string {
  const at = failure?.address ? ` at ${failure.address}` : "";
  const error = failure?.error instanceof Error ? failure.error.message : String(failure?.error ?? "");
  const reason = (failure?.error as { reason?: unknown } | undefined)?.reason;
  let why: string;
  if (reason === "DAEMON_START_FAILED") why = `starting it (${found.bin}) failed: ${error}`;
  else if (!autoStart) why = "auto-start is off: start it with `postcompact serve`";
  else if (!found.bin)
    why = `no postcompact executable to start it (looked at: ${found.tried.join(", ")}; set POSTCOMPACT_BIN or the plugin's daemonBin option)`;
  else why = error;
  return `postcompact: no daemon answered${at}; files read before a compaction will not be restored after it until one does (tried again on the next request). ${why}`;
}

export const PostcompactPlugin: Plugin = async (input: PluginInput, raw?: PluginOptions) => {
  const options = (raw ?? {}) as PostcompactPluginOptions;
  const env = process.env;
  const autoStart = options.autoStart ?? !options.address;
  const found = findDaemonBin({ option: options.daemonBin, env });
  const prefix = options.sessionPrefix ?? "opencode-";
  const sessions = new Map<string, SessionState>();
  let disposed = false;
  const roots = [...new Set([input.directory, input.worktree].filter((d) => d && d !== "/"))];
  const warned = new Set<string>();
  /** The sessions told that the daemon cannot be reached, since it last answered. */
  const told = new Set<string>();

  const log = (level: "debug" | "info" | "warn", message: string, extra?: Record<string, unknown>) => {
    input.client.app.log({ body: { service: SERVICE, level, message, extra } }).catch(() => {});
  };
  /** A warning once per kind of failure, not per call. */
  const warnOnce = (message: string, extra?: Record<string, unknown>) => {
    if (warned.has(message)) return;
    warned.add(message);
    log("warn", message, extra);
  };

  const link = new DaemonLink(
    {
      ...(options.address ? { address: options.address } : {}),
      autoStart,
      ...(found.bin ? { bin: found.bin } : {}),
      env,
      timeoutMs: CALL_TIMEOUT_MS,
      retry: RETRY,
    },
    {
      up: (client) => {
        told.clear();
        log("info", `postcompact: connected to the daemon at ${client.address.address}`, {
          source: client.address.source,
          ...(found.bin ? { daemonBin: found.bin, daemonBinFrom: found.source } : {}),
        });
      },
    },
  );

  /** Tell the user, once per session (until the daemon answers again), that it cannot be reached:
   * a toast in OpenCode's TUI and a warning in its log. */
  const unreachable = (sessionID: string) => {
    if (told.has(sessionID)) return;
    told.add(sessionID);
    const message = unreachableMessage(link.lastFailure, autoStart, found);
    log("warn", message, { sessionID });
    input.client.tui
      .showToast({ body: { title: "postcompact", message, variant: "warning", duration: 10_000 } })
      .catch(() => {});
  };

  const state = (sessionID: string): SessionState => {
    let s = sessions.get(sessionID);
    if (!s) {
      s = { queue: Promise.resolve() };
      sessions.set(sessionID, s);
    }
    return s;
  };

  /** A call on `client` failed: a daemon that went away is reconnected on the next need. */
  const failed = (sessionID: string, client: PostcompactClient, what: string, e: unknown) => {
    if (isUnreachable(e)) {
      link.lost(client, e);
      unreachable(sessionID);
    } else {
      warnOnce(`postcompact: ${what} failed`, { error: String(e) });
    }
  };

  /** The session on the daemon, connecting (and opening it) when needed; undefined when the
   * daemon cannot be reached. A record does not try again within RECONNECT_AFTER_MS of a failed
   * attempt; a compaction always does. */
  const sessionOf = async (sessionID: string, record: boolean): Promise<Session | undefined> => {
    const s = state(sessionID);
    let client = link.current;
    if (!client) {
      const last = link.lastFailure;
      if (record && !link.busy && last?.attempt && Date.now() - last.at < RECONNECT_AFTER_MS) {
        unreachable(sessionID);
        return undefined;
      }
      client = await link.connect();
      if (!client) {
        unreachable(sessionID);
        return undefined;
      }
    }
    if (s.session && s.client === client) return s.session;
    try {
      const session = await client.openSession({
        cwd: input.directory,
        sessionId: prefix + sessionID,
        roots,
        templates: options.templates ?? { preset: "neutral" },
        ...(options.profile ? { profile: options.profile } : {}),
      });
      s.session = session;
      s.client = client;
      return session;
    } catch (e) {
      failed(sessionID, client, "opening the session", e);
      return undefined;
    }
  };

  /** Run `work` after the session's earlier records; failures are logged, never thrown. */
  const enqueue = (sessionID: string, what: string, work: (session: Session) => Promise<unknown>) => {
    const s = state(sessionID);
    s.queue = s.queue.then(async () => {
      if (disposed) return; // OpenCode is done with the plugin: nothing left to record for
      const session = await sessionOf(sessionID, true);
      if (!session) return;
      try {
        await work(session);
      } catch (e) {
        failed(sessionID, session.client, what, e);
      }
    });
  };

  const absolute = (p: string) => (isAbsolute(p) ? p : resolve(input.directory, p));

  /** The file's bytes and mtime, or undefined when it is not a regular file. */
  const onDisk = async (path: string) => {
    try {
      const st = await stat(path);
      if (!st.isFile()) return undefined;
      return { content: await readFile(path), mtimeMs: Math.floor(st.mtimeMs) };
    } catch {
      return undefined;
    }
  };

  /** What a read showed, from disk now; the daemon is told in turn. */
  const recordRead = async (sessionID: string, args: Record<string, unknown>) => {
    const given = str(args.filePath);
    if (!given) return;
    const path = absolute(given);
    const file = await onDisk(path);
    if (!file) return; // a directory listing, or gone
    const offset = int(args.offset);
    const limit = int(args.limit);
    const ranged = offset !== undefined || limit !== undefined;
    const content = ranged ? slice(file.content.toString("utf8"), offset, limit) : file.content;
    enqueue(sessionID, "recording a read", (session) =>
      session.recordRead(path, content, {
        timestampMs: file.mtimeMs,
        offset: ranged ? (offset ?? 1) : 1,
        ...(limit !== undefined ? { limit } : {}),
      }),
    );
  };

  /** The file as an edit or write left it, from disk now; the daemon is told in turn. */
  const recordWrite = async (sessionID: string, given: string) => {
    const path = absolute(given);
    const file = await onDisk(path);
    if (!file) return;
    enqueue(sessionID, "recording a write", (session) => session.recordWrite(path, file.content, file.mtimeMs));
  };

  /** A loaded skill, as the `skill` tool's output shows it; the daemon is told in turn. */
  const recordSkill = (sessionID: string, name: string, output: string) => {
    const skill = loadedSkill(name, output);
    if (!skill) {
      warnOnce("postcompact: a skill's output was not in the expected form; not recorded", { name });
      return;
    }
    enqueue(sessionID, "recording a skill", (session) =>
      session.recordSkill({ name, content: skill.content, ...(skill.path ? { path: skill.path } : {}) }),
    );
  };

  /** Compact, after every record made before it; undefined when the daemon could not be reached
   * or refused (the next request tries again). */
  const compact = async (sessionID: string, summaryId: string): Promise<Restoration | undefined> => {
    await state(sessionID).queue; // every read and write reported before the compaction is known
    const session = await sessionOf(sessionID, false);
    if (!session) return undefined;
    let result;
    try {
      result = await session.compact();
    } catch (e) {
      failed(sessionID, session.client, "Compact", e);
      return undefined;
    }
    const files = result.attachments.filter((a) => a.payload === "file").map((a) => a.file?.path);
    const skills = result.attachments
      .filter((a) => a.payload === "invokedSkills")
      .flatMap((a) => a.invokedSkills?.skills.map((k) => k.name) ?? []);
    log("info", `postcompact: restored ${files.length} file(s) and ${skills.length} skill(s) after the compaction`, {
      sessionID,
      files,
      skills,
      decisions: result.decisions.length,
    });
    return { summaryId, userBlocks: result.userBlocks, systemText: result.systemText };
  };

  /** The restoration for this summary, waited for at most COMPACTION_WAIT_MS: Compact once per
   * summary and remembered after; one that failed is tried again by the next request. */
  const restorationFor = async (sessionID: string, summaryId: string): Promise<Restoration | undefined> => {
    const s = state(sessionID);
    if (s.restorationFor !== summaryId) {
      s.restorationFor = summaryId;
      s.restored = undefined;
      s.restoring = undefined;
    }
    if (s.restored) return s.restored;
    if (!s.restoring) {
      const restoring: Promise<Restoration | undefined> = compact(sessionID, summaryId).then((r) => {
        if (s.restorationFor === summaryId) {
          if (r) s.restored = r;
          if (s.restoring === restoring) s.restoring = undefined;
        }
        return r;
      });
      s.restoring = restoring;
    }
    const pending = s.restoring;
    const r = await within(pending, COMPACTION_WAIT_MS, undefined);
    if (!r && s.restoring === pending && s.restorationFor === summaryId)
      log("info", "postcompact: the daemon did not answer within a second; this request goes without the restoration, the next one waits again", {
        sessionID,
      });
    return r;
  };

  // Connect (starting the daemon when none answers) as OpenCode loads the plugin, not at the
  // first compaction.
  void link.connect();

  return {
    "tool.execute.after": async (call, output) => {
      const args = (call.args ?? {}) as Record<string, unknown>;
      const sid = call.sessionID;
      switch (call.tool) {
        case "read":
          await recordRead(sid, args);
          break;
        case "edit":
        case "write":
        case "multiedit": {
          const path = str(args.filePath);
          if (path) await recordWrite(sid, path);
          break;
        }
        case "skill": {
          const name = str(args.name);
          if (name && typeof output?.output === "string") recordSkill(sid, name, output.output);
          break;
        }
        case "apply_patch": {
          const patch = str(args.patchText) ?? str(args.patch) ?? "";
          for (const p of patchedFiles(patch)) await recordWrite(sid, p);
          break;
        }
      }
    },

    "experimental.chat.messages.transform": async (_input, output) => {
      const messages = output.messages;
      const anchor = anchorOf(messages);
      if (!anchor) return;
      const target = messages[anchor.index];
      const sessionID = target.info.sessionID;
      const restoration = await restorationFor(sessionID, anchor.summaryId);
      if (!restoration || restoration.userBlocks.length === 0) return;
      const parts: Part[] = restoration.userBlocks.map((text, i) => ({
        id: `prt_postcompact_${anchor.summaryId}_${i}`,
        sessionID,
        messageID: target.info.id,
        type: "text",
        text,
        synthetic: true,
      }));
      target.parts = [...parts, ...target.parts.filter((p) => !p.id.startsWith("prt_postcompact_"))];
    },

    // Called after the messages' transform of the same request: only what it got in time.
    "experimental.chat.system.transform": async (input, output) => {
      if (!input.sessionID) return;
      const restoration = sessions.get(input.sessionID)?.restored;
      if (restoration?.systemText) output.system.push(restoration.systemText);
    },

    dispose: async () => {
      // The records already queued go out first (bounded): closing under them lost the last
      // read of a run and warned "PostcompactClient is closed".
      const queued = [...sessions.values()].map((s) => s.queue);
      await within(Promise.allSettled(queued), DISPOSE_WAIT_MS, undefined);
      disposed = true;
      link.close();
    },
  };
};
