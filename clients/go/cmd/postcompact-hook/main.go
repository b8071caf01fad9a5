// Command postcompact-hook is the hook command of postcompact's Claude Code plugin
// (clients/claude-code): Claude Code runs it on its hook events with the event's JSON on stdin.
//
//	postcompact-hook              PostToolUse (Read, Edit, Write, Skill), PreCompact, PostCompact,
//	                              SessionStart (startup, resume, clear), SubagentStop
//	postcompact-hook --part N     SessionStart (compact): prints part N of the restoration
//	postcompact-hook --codex ...  the same events run by Codex CLI (its hooks/codex.json; codex.go)
//	postcompact-hook --codex-trust  trusts the plugin's hooks in Codex's config.toml (codextrust.go)
//
// It reports each read, write and invoked skill to the daemon (a sub-agent's to its own agent),
// records at PreCompact what an asynchronous report missed, prints the restoration after a
// compaction in parts that each fit Claude Code's 10,000 characters, and commits the compaction
// at PostCompact, in complement mode: only the files Claude Code does not restore itself. It
// starts the daemon when none runs. It always exits 0: whatever fails, Claude Code goes on as
// without the plugin (one message per session says why; details in hook.log in the state
// directory). It is compiled so that a tool call costs a few milliseconds, not a Python start.
// Gemini CLI runs it too (clients/gemini-cli): gemini.go, snapshot_cache.go.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"time"
)

// Deadlines per event: a start of the daemon takes up to 15 s; PreCompact may record many calls.
var deadlines = map[string]time.Duration{
	"PostToolUse":  20 * time.Second,
	"SessionStart": 25 * time.Second,
	"PreCompact":   50 * time.Second,
	"PostCompact":  20 * time.Second,
	"SubagentStop": 10 * time.Second,
}

func main() {
	part := flag.Int("part", 0, "SessionStart(compact): print part `N` of the restoration")
	codex := flag.Bool("codex", false, "the event is Codex CLI's (its hooks/codex.json says so)")
	trust := flag.Bool("codex-trust", false, "trust the plugin's hooks in Codex's config.toml, then exit")
	flag.Parse()
	if *trust {
		os.Exit(CodexTrust(os.Stdout, os.Stderr))
	}
	os.Exit(run(os.Stdin, os.Stdout, *part, *codex))
}

func run(stdin io.Reader, stdout io.Writer, part int, codex bool) (code int) {
	st := newState()
	defer func() {
		if r := recover(); r != nil {
			logf(st, "panic: %v", r)
			code = 0
		}
	}()
	raw, err := io.ReadAll(stdin)
	if err != nil {
		logf(st, "reading the payload: %v", err)
		return 0
	}
	var p Payload
	if err := json.Unmarshal(raw, &p); err != nil || p.SessionID == "" {
		logf(st, "not a hook payload (%v): %.200q", err, raw)
		return 0
	}
	harness := DetectHarness(&p, os.Getenv)
	switch {
	case codex || harness == HarnessCodex:
		runCodex(&p, st, stdout, part) // codex.go
		return 0
	case harness == HarnessGemini:
		return runGemini(&p, raw, st, stdout) // gemini.go
	}
	limit, ok := deadlines[p.HookEventName]
	if !ok {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	h, err := newHook(&p, st)
	if err != nil {
		logf(st, "%s: %v", p.HookEventName, err)
		return 0
	}
	defer h.Close()
	var out Output
	switch p.HookEventName {
	case "PostToolUse":
		h.PostToolUse(ctx)
	case "PreCompact":
		h.PreCompact(ctx)
	case "SessionStart":
		out = h.SessionStart(ctx, part)
	case "PostCompact":
		h.PostCompact(ctx)
	case "SubagentStop":
		h.SubagentStop(ctx)
	}
	if out.SystemMessage != "" || out.HookSpecificOutput != nil {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false) // the text as it is: `<` stays `<`
		if err := enc.Encode(out); err != nil {
			logf(st, "%s: writing the output: %v", p.HookEventName, err)
		}
	}
	return 0
}
