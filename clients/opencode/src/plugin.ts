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
 * Nothing the daemon does (or fails to do) stops the agent: every call is caught and logged.
 */
import { readFile, stat } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";

import type { Hooks, Plugin, PluginInput, PluginOptions } from "@opencode-ai/plugin";
import { ClientReason, PostcompactClient, isPostcompactError, type ProfileName, type Session } from "@postcompact/client";

/** Options, from the config entry `["/path/to/clients/opencode", { … }]` (all optional). */
export interface PostcompactPluginOptions {
  /** The daemon's address (`unix:///path`, `127.0.0.1:PORT`); default: the clients' discovery
   * (`POSTCOMPACT_ADDRESS`, server.json, the default socket), starting the daemon when absent. */
  address?: string;
  /** Start the daemon when none answers (default: true unless `address` is given). */
  autoStart?: boolean;
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
  session: Promise<Session>;
  /** The records not yet acknowledged, in order: tools do not wait for the daemon, a compaction
   * does. */
  queue: Promise<void>;
  /** The restoration for the latest summary seen, or the Compact computing it. */
  restoration?: Promise<Restoration | undefined>;
  restorationFor?: string;
}

const SERVICE = "postcompact";
/** After the daemon could not be reached (the client's retries spent), calls are skipped this
 * long, so that a dead daemon costs the agent nothing. */
const DOWN_MS = 30_000;

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

export const PostcompactPlugin: Plugin = async (input: PluginInput, raw?: PluginOptions) => {
  const options = (raw ?? {}) as PostcompactPluginOptions;
  const client = new PostcompactClient({
    ...(options.address ? { address: options.address } : {}),
    ...(options.autoStart !== undefined ? { autoStart: options.autoStart } : {}),
  });
  const prefix = options.sessionPrefix ?? "opencode-";
  const sessions = new Map<string, SessionState>();
  const roots = [...new Set([input.directory, input.worktree].filter((d) => d && d !== "/"))];
  const warned = new Set<string>();

  const log = (level: "debug" | "warn", message: string, extra?: Record<string, unknown>) => {
    if (level === "warn") {
      if (warned.has(message)) return; // once per kind of failure, not per call
      warned.add(message);
    }
    input.client.app.log({ body: { service: SERVICE, level, message, extra } }).catch(() => {});
  };

  const state = (sessionID: string): SessionState => {
    let s = sessions.get(sessionID);
    if (!s) {
      const session = client.openSession({
        cwd: input.directory,
        sessionId: prefix + sessionID,
        roots,
        templates: options.templates ?? { preset: "neutral" },
        ...(options.profile ? { profile: options.profile } : {}),
      });
      session.catch(() => sessions.delete(sessionID)); // the next call tries again
      s = { session, queue: Promise.resolve() };
      sessions.set(sessionID, s);
    }
    return s;
  };

  let downUntil = 0;
  /** Run `work` after the session's earlier records; failures are logged, never thrown. */
  const enqueue = (sessionID: string, what: string, work: () => Promise<void>) => {
    const s = state(sessionID);
    s.queue = s.queue.then(async () => {
      if (Date.now() < downUntil) return;
      try {
        await work();
      } catch (e) {
        if (isPostcompactError(e) && (e.reason === ClientReason.DAEMON_UNAVAILABLE || e.reason === ClientReason.DAEMON_START_FAILED)) {
          downUntil = Date.now() + DOWN_MS;
        }
        log("warn", `postcompact: ${what} failed`, { error: String(e) });
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
    enqueue(sessionID, "recording a read", async () => {
      const session = await state(sessionID).session;
      await session.recordRead(path, content, {
        timestampMs: file.mtimeMs,
        offset: ranged ? (offset ?? 1) : 1,
        ...(limit !== undefined ? { limit } : {}),
      });
    });
  };

  /** The file as an edit or write left it, from disk now; the daemon is told in turn. */
  const recordWrite = async (sessionID: string, given: string) => {
    const path = absolute(given);
    const file = await onDisk(path);
    if (!file) return;
    enqueue(sessionID, "recording a write", async () => {
      const session = await state(sessionID).session;
      await session.recordWrite(path, file.content, file.mtimeMs);
    });
  };

  /** A loaded skill, as the `skill` tool's output shows it; the daemon is told in turn. */
  const recordSkill = (sessionID: string, name: string, output: string) => {
    const skill = loadedSkill(name, output);
    if (!skill) {
      log("warn", "postcompact: a skill's output was not in the expected form; not recorded", { name });
      return;
    }
    enqueue(sessionID, "recording a skill", async () => {
      const session = await state(sessionID).session;
      await session.recordSkill({ name, content: skill.content, ...(skill.path ? { path: skill.path } : {}) });
    });
  };

  const compact = async (sessionID: string, summaryId: string): Promise<Restoration | undefined> => {
    const s = state(sessionID);
    await s.queue; // every read and write reported before the compaction is known
    if (Date.now() < downUntil) return undefined;
    const session = await s.session;
    const result = await session.compact();
    log("debug", "restored after compaction", {
      sessionID,
      files: result.attachments.filter((a) => a.payload === "file").map((a) => a.file?.path),
      decisions: result.decisions.length,
    });
    return { summaryId, userBlocks: result.userBlocks, systemText: result.systemText };
  };

  /** The restoration for this summary: Compact once per summary, remembered after. */
  const restorationFor = (sessionID: string, summaryId: string): Promise<Restoration | undefined> => {
    const s = state(sessionID);
    if (s.restorationFor !== summaryId || !s.restoration) {
      s.restorationFor = summaryId;
      s.restoration = compact(sessionID, summaryId).catch((e: unknown) => {
        log("warn", "postcompact: Compact failed, this compaction restores nothing", { error: String(e) });
        return undefined;
      });
    }
    return s.restoration;
  };

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

    "experimental.chat.system.transform": async (input, output) => {
      if (!input.sessionID) return;
      const s = sessions.get(input.sessionID);
      const restoration = s?.restoration ? await s.restoration : undefined;
      if (restoration?.systemText) output.system.push(restoration.systemText);
    },

    dispose: async () => {
      client.close();
    },
  };
};
