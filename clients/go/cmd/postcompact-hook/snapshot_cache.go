package main

// Gemini CLI's BeforeModel: the restoration after a compression, appended to its snapshot.
//
// Gemini compresses a conversation into a user message holding a <state_snapshot> (the
// summary), answered by "Got it. Thanks for the additional context!", then the kept tail. No
// hook runs after that, and a BeforeModel hook's change to the request is not kept in the
// history. So on every request the hook looks for the snapshot message; for a snapshot it has
// not seen (its text's hash) it runs Compact once and caches the text in the state directory;
// for one it has seen it reads the cache. Either way it appends the same bytes to that message.
// A request with no new snapshot costs one file read, no daemon call. Hook processes share
// nothing but the state directory, and Compact is not idempotent (it commits the compaction):
// a lock per snapshot makes concurrent processes run it once.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	postcompact "github.com/postcompact/postcompact/clients/go"
	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
)

// SnapshotTag opens the summary Gemini CLI's compression writes.
const SnapshotTag = "<state_snapshot>"

// SnapshotEnd closes it.
const SnapshotEnd = "</state_snapshot>"

// LLMRequest is BeforeModel's llm_request: the request's messages, text only (Gemini leaves
// function calls and responses out and keeps them when the messages come back).
type LLMRequest struct {
	Model    string       `json:"model,omitempty"`
	Messages []LLMMessage `json:"messages"`
}

// LLMMessage is one message of an llm_request.
type LLMMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// BeforeModelOutput is what the hook prints to change the request: Gemini merges the messages
// back into the request by position, so the messages up to the snapshot's, unchanged but for
// it, are enough (the ones after stay as they are).
type BeforeModelOutput struct {
	HookSpecificOutput struct {
		HookEventName string     `json:"hookEventName"`
		LLMRequest    LLMRequest `json:"llm_request"`
	} `json:"hookSpecificOutput"`
}

// FindSnapshot returns the index of the snapshot message (the first user message holding a
// <state_snapshot>; Gemini 0.61.0 sends it as the second text part of the message that opens
// with its <session_context>), -1 when the request has none (no compression yet).
func FindSnapshot(msgs []LLMMessage) int {
	for i, m := range msgs {
		if m.Role == "user" && strings.Contains(m.Content, SnapshotTag) {
			return i
		}
	}
	return -1
}

// SnapshotKey names a snapshot: the SHA-256 of the snapshot in its message's text, from its
// <state_snapshot> to its </state_snapshot> (or the message's end). Not of the whole message:
// Gemini sends its session context (the date, the project's file tree) as a part of the same
// user message, and a resumed session writes it anew.
func SnapshotKey(text string) string {
	if i := strings.Index(text, SnapshotTag); i >= 0 {
		text = text[i:]
		if j := strings.LastIndex(text, SnapshotEnd); j >= 0 {
			text = text[:j+len(SnapshotEnd)]
		}
	}
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:16])
}

// restorationPath is where a session's restoration for a snapshot is cached.
func (s *State) restorationPath(session, key string) string {
	return s.sessionFile(session, ".snapshot-"+key+".txt")
}

// CachedRestoration is the cached text for a snapshot (ok false: none yet).
func (s *State) CachedRestoration(session, key string) (string, bool) {
	b, err := os.ReadFile(s.restorationPath(session, key))
	if err != nil {
		return "", false
	}
	return string(b), true
}

// storeRestoration writes the text for a snapshot, atomically (a rename).
func (s *State) storeRestoration(session, key, text string) error {
	path := s.restorationPath(session, key)
	if err := s.mkdir(path); err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// RestorationOnce returns the text for a snapshot: the cached one, else compact()'s, computed
// by one process only. The first process to take the snapshot's lock (flock: released if it
// dies) runs compact and caches its text; the others wait on the lock and read the cache. A
// failed compact caches nothing: the next request tries again.
func (s *State) RestorationOnce(ctx context.Context, session, key string, compact func() (string, error)) (string, error) {
	if text, ok := s.CachedRestoration(session, key); ok {
		return text, nil
	}
	unlock, err := lockFile(ctx, s.sessionFile(session, ".snapshot-"+key+".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if text, ok := s.CachedRestoration(session, key); ok {
		return text, nil
	}
	text, err := compact()
	if err != nil {
		return "", err
	}
	if err := s.storeRestoration(session, key, text); err != nil {
		return "", err
	}
	return text, nil
}

// geminiHeader opens the appended text.
const geminiHeader = "postcompact re-read these files from disk after the conversation was summarized: " +
	"the files (and skills) the agent was working on, as they are now."

// GeminiText is the text appended to the snapshot for a compaction's answer: the restored
// files, skills and the index of the files left out, each attachment's blocks; "" when it
// restored nothing.
func GeminiText(atts []*pb.Attachment) string {
	var b strings.Builder
	for _, a := range atts {
		switch a.GetKind() {
		case pb.AttachmentKind_ATTACHMENT_KIND_FILE, pb.AttachmentKind_ATTACHMENT_KIND_COMPACT_FILE_REFERENCE,
			pb.AttachmentKind_ATTACHMENT_KIND_INVOKED_SKILLS, pb.AttachmentKind_ATTACHMENT_KIND_LEFT_OUT_FILES:
		default:
			continue
		}
		text := strings.Join(a.GetBlocks(), "\n")
		if text == "" {
			continue
		}
		b.WriteString("\n\n")
		b.WriteString(text)
	}
	if b.Len() == 0 {
		return ""
	}
	return "\n\n" + geminiHeader + b.String()
}

// AppendRestoration is the hook's output for a request: its messages up to the snapshot's,
// the restoration appended to that one.
func AppendRestoration(req *LLMRequest, at int, text string) *BeforeModelOutput {
	out := &BeforeModelOutput{}
	out.HookSpecificOutput.HookEventName = "BeforeModel"
	msgs := append([]LLMMessage(nil), req.Messages[:at+1]...)
	msgs[at].Content += text
	out.HookSpecificOutput.LLMRequest.Messages = msgs
	return out
}

// geminiBeforeModel: nil (the request as it is) when there is no snapshot or nothing to add.
func geminiBeforeModel(ctx context.Context, p *Payload, req *LLMRequest, st *State, session string) *BeforeModelOutput {
	if req == nil {
		return nil
	}
	at := FindSnapshot(req.Messages)
	if at < 0 {
		return nil
	}
	key := SnapshotKey(req.Messages[at].Content)
	text, err := st.RestorationOnce(ctx, session, key, func() (string, error) {
		h, err := newGeminiHook(p, st, session)
		if err != nil {
			return "", err
		}
		defer h.Close()
		var res *postcompact.CompactResult
		err = h.Call(ctx, "", func() error {
			var err error
			res, err = h.C.Session(session).Compact(ctx, postcompact.WithPolicy(GeminiPolicy()))
			return err
		})
		if h.Down != "" && st.TellOnce(session) {
			logf(st, "gemini %s: %s", session, GeminiDownMessage(h.Down))
		}
		if err != nil {
			return "", err
		}
		return GeminiText(res.Attachments), nil
	})
	if err != nil {
		if !errors.Is(err, errDaemonDown) {
			logf(st, "BeforeModel %s: %v", session, err)
		}
		return nil
	}
	if text == "" {
		return nil
	}
	return AppendRestoration(req, at, text)
}
