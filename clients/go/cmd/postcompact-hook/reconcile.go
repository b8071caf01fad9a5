package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"time"
)

// ToolUse is one finished tool call of the transcript: its name, input, structured result and
// when the result was written.
type ToolUse struct {
	ID       string
	Name     string
	Input    json.RawMessage
	Response json.RawMessage
	AtMS     int64
}

var tracked = map[string]bool{"Read": true, "Edit": true, "Write": true, "Skill": true}

type record struct {
	Type          string          `json:"type"`
	Subtype       string          `json:"subtype"`
	IsSidechain   bool            `json:"isSidechain"`
	Timestamp     string          `json:"timestamp"`
	ToolUseResult json.RawMessage `json:"toolUseResult"`
	Message       *struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

type block struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
}

// SweepTranscript returns the successful Read, Edit, Write and Skill calls of the main thread
// since the transcript's last compact boundary, in the order their results were written. At
// PreCompact every earlier record is in the file (Claude Code writes it lazily, but before the
// compaction).
func SweepTranscript(r io.Reader) ([]ToolUse, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	pending := map[string]ToolUse{}
	var uses []ToolUse
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			var rec record
			if json.Unmarshal(line, &rec) == nil && !rec.IsSidechain {
				switch {
				case rec.Type == "system" && rec.Subtype == "compact_boundary":
					pending, uses = map[string]ToolUse{}, nil
				case rec.Type == "assistant" && rec.Message != nil:
					for _, b := range blocks(rec.Message.Content) {
						if b.Type == "tool_use" && tracked[b.Name] && b.ID != "" {
							pending[b.ID] = ToolUse{ID: b.ID, Name: b.Name, Input: b.Input}
						}
					}
				case rec.Type == "user" && rec.Message != nil:
					for _, b := range blocks(rec.Message.Content) {
						u, ok := pending[b.ToolUseID]
						if b.Type != "tool_result" || !ok {
							continue
						}
						delete(pending, b.ToolUseID)
						// A failed call (an error result; toolUseResult is then its message).
						if b.IsError || len(rec.ToolUseResult) == 0 || rec.ToolUseResult[0] != '{' {
							continue
						}
						u.Response = rec.ToolUseResult
						u.AtMS = parseTime(rec.Timestamp)
						uses = append(uses, u)
					}
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return uses, nil
			}
			return uses, err
		}
	}
}

func blocks(raw json.RawMessage) []block {
	var out []block
	if len(raw) == 0 || raw[0] != '[' {
		return nil
	}
	_ = json.Unmarshal(raw, &out)
	return out
}

func parseTime(s string) int64 {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

// PreCompact records, before the compaction, every tool call of the main thread an async
// report missed (not yet sent, or lost): the transcript holds them all by now. Each keeps the
// time of its result, so it ranks where it happened. Prints nothing: PreCompact's output would
// reach the summary's instructions.
func (h *Hook) PreCompact(ctx context.Context) {
	if h.P.TranscriptPath == "" || h.P.AgentID != "" {
		return
	}
	f, err := os.Open(h.P.TranscriptPath)
	if err != nil {
		logf(h.St, "PreCompact: %v", err)
		return
	}
	uses, err := SweepTranscript(f)
	f.Close()
	if err != nil {
		logf(h.St, "PreCompact: reading %s: %v", h.P.TranscriptPath, err)
	}
	reported := h.St.Reported(h.SessionID)
	var done []string
	for _, u := range uses {
		if reported[u.ID] {
			continue
		}
		at := u.AtMS
		if at == 0 {
			at = h.St.Now().UnixMilli()
		}
		r := ReportFor(u.Name, u.Input, u.Response, h.Project, h.Home, at)
		if r == nil {
			done = append(done, u.ID)
			continue
		}
		err := h.Send(ctx, "", r)
		if errors.Is(err, errDaemonDown) {
			break
		}
		if err != nil && !ignorable(err) {
			logf(h.St, "PreCompact: %s %s: %v", u.Name, r.Path, err)
			continue
		}
		done = append(done, u.ID)
	}
	h.St.MarkReported(h.SessionID, done...)
}
