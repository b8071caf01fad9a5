package main

import (
	"context"
	"errors"
	"slices"

	postcompact "github.com/postcompact/postcompact/clients/go"
)

// Output is what a hook prints on stdout (JSON), when it has something to say.
type Output struct {
	SystemMessage      string          `json:"systemMessage,omitempty"`
	HookSpecificOutput *SpecificOutput `json:"hookSpecificOutput,omitempty"`
}

// SpecificOutput carries SessionStart's additionalContext.
type SpecificOutput struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext"`
}

// preview is what the compaction would restore now, laid out in parts. Every part command and
// PostCompact compute it from the same PreviewCompact (idempotent: nothing changes in between),
// so they agree on the parts.
func (h *Hook) preview(ctx context.Context) (Plan, error) {
	var res *postcompact.CompactResult
	err := h.Call(ctx, "", func() error {
		var err error
		res, err = h.C.Session(h.SessionID).PreviewCompact(ctx, postcompact.WithPolicy(SessionPolicy()))
		return err
	})
	if err != nil {
		return Plan{}, err
	}
	return Pack(Items(res.Attachments), Parts, PartChars), nil
}

// SessionStart: at startup (and resume, clear) the daemon is made to serve (started when it is
// not: once per machine boot, not per tool call) and the session opened; after a compaction
// (source "compact") this command prints its part of the restoration.
func (h *Hook) SessionStart(ctx context.Context, part int) Output {
	var out Output
	var notes []string
	if h.P.Source == "compact" {
		if part >= 1 {
			plan, err := h.preview(ctx)
			switch {
			case err == nil:
				if text := plan.Text(part); text != "" {
					out.HookSpecificOutput = &SpecificOutput{HookEventName: "SessionStart", AdditionalContext: text}
				}
			case !errors.Is(err, errDaemonDown):
				logf(h.St, "SessionStart(compact) part %d: %v", part, err)
			}
		}
	} else {
		h.St.Prune()
		if err := h.Call(ctx, "", func() error { return h.Open(ctx) }); err != nil && !errors.Is(err, errDaemonDown) {
			logf(h.St, "SessionStart(%s): %v", h.P.Source, err)
		}
		if w := VersionWarning(h.St, ClaudeCodeVersion(h.P)); w != "" {
			notes = append(notes, w)
		}
	}
	if h.Down != "" && h.St.TellOnce(h.SessionID) {
		notes = append([]string{DownMessage(h.Down)}, notes...)
	}
	if len(notes) > 0 {
		out.SystemMessage = notes[0]
		for _, n := range notes[1:] {
			out.SystemMessage += "\n" + n
		}
	}
	return out
}

// PostCompact commits the compaction: Compact with the same policy the parts were computed
// with, its file budget cut to the parts' files when some had to be dropped (the daemon's budget
// then drops exactly those, with their decisions). Prints nothing: Claude Code shows this hook's
// output to the model.
func (h *Hook) PostCompact(ctx context.Context) {
	if h.P.AgentID != "" {
		return
	}
	plan, err := h.preview(ctx)
	if err != nil {
		if !errors.Is(err, errDaemonDown) {
			logf(h.St, "PostCompact: preview: %v", err)
		}
		return
	}
	policy := SessionPolicy()
	if len(plan.Dropped) > 0 {
		budget := plan.KeptTokens
		policy.FileTokenBudget = &budget
		logf(h.St, "PostCompact %s: %d file(s) did not fit %d parts and were dropped", h.SessionID, len(plan.Dropped), Parts)
	}
	var res *postcompact.CompactResult
	err = h.Call(ctx, "", func() error {
		var err error
		res, err = h.C.Session(h.SessionID).Compact(ctx, postcompact.WithPolicy(policy))
		return err
	})
	if err != nil {
		if !errors.Is(err, errDaemonDown) {
			logf(h.St, "PostCompact: compact: %v", err)
		}
		return
	}
	committed, shown := paths(Items(res.Attachments)), paths(plan.Kept)
	if !slices.Equal(committed, shown) {
		logf(h.St, "PostCompact %s: committed %v, the parts showed %v (a file changed in between)", h.SessionID, committed, shown)
	}
}

func paths(items []Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Path
	}
	return out
}
