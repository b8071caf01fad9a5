package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
)

func compressed(snapshot string) *LLMRequest {
	return &LLMRequest{Model: "gemini-2.5-flash", Messages: []LLMMessage{
		{Role: "user", Content: "<session_context>\nThis is the Gemini CLI.\n</session_context>"},
		{Role: "user", Content: snapshot},
		{Role: "model", Content: "Got it. Thanks for the additional context!"},
		{Role: "user", Content: "go on"},
	}}
}

func TestFindSnapshot(t *testing.T) {
	if at := FindSnapshot(compressed("<state_snapshot>\n<overall_goal>x</overall_goal>\n</state_snapshot>").Messages); at != 1 {
		t.Errorf("snapshot at %d", at)
	}
	plain := []LLMMessage{{Role: "user", Content: "hello"}, {Role: "model", Content: "a <state_snapshot> named by the model"}}
	if at := FindSnapshot(plain); at != -1 {
		t.Errorf("no compression, yet a snapshot at %d", at)
	}
	if SnapshotKey("a") == SnapshotKey("b") || SnapshotKey("a") != SnapshotKey("a") {
		t.Error("SnapshotKey is not the text's hash")
	}
	// The session context around it (rewritten by a resumed session) is not the snapshot.
	snap := "<state_snapshot>\n<overall_goal>g</overall_goal>\n</state_snapshot>"
	if SnapshotKey("<session_context>a</session_context>"+snap) != SnapshotKey("<session_context>b, new.py</session_context>"+snap) {
		t.Error("the session context changed the snapshot's key")
	}
	if SnapshotKey("ctx"+snap) == SnapshotKey("ctx"+strings.Replace(snap, "g", "h", 1)) {
		t.Error("another snapshot, the same key")
	}
}

func TestAppendRestorationKeepsTheOthers(t *testing.T) {
	req := compressed("<state_snapshot>s</state_snapshot>")
	out := AppendRestoration(req, 1, "\n\nRESTORED")
	msgs := out.HookSpecificOutput.LLMRequest.Messages
	if len(msgs) != 2 || msgs[0] != req.Messages[0] || msgs[1].Content != "<state_snapshot>s</state_snapshot>\n\nRESTORED" || msgs[1].Role != "user" {
		t.Fatalf("output messages: %+v", msgs)
	}
	if req.Messages[1].Content != "<state_snapshot>s</state_snapshot>" {
		t.Error("the request itself was changed")
	}
	b, _ := json.Marshal(out)
	if !strings.Contains(string(b), `"hookEventName":"BeforeModel"`) || !strings.Contains(string(b), `"llm_request":{"messages":[`) {
		t.Errorf("output JSON: %s", b)
	}
}

// Concurrent hook processes (here: goroutines, each with its own State and lock file descriptor,
// as processes have) run Compact once for a snapshot and all get the same text.
func TestRestorationOnceAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	var calls atomic.Int32
	compact := func() (string, error) {
		calls.Add(1)
		time.Sleep(20 * time.Millisecond) // hold the lock while the others arrive
		return "\n\nTEXT", nil
	}
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := &State{Dir: dir, Now: time.Now}
			text, err := st.RestorationOnce(context.Background(), "gemini-s", "k1", compact)
			if err != nil {
				t.Error(err)
			}
			got[i] = text
		}()
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Fatalf("Compact ran %d times for one snapshot", n)
	}
	for _, g := range got {
		if g != "\n\nTEXT" {
			t.Fatalf("texts differ: %q", got)
		}
	}
	// A later request: the cache, no Compact.
	st := &State{Dir: dir, Now: time.Now}
	if text, _ := st.RestorationOnce(context.Background(), "gemini-s", "k1", compact); text != "\n\nTEXT" || calls.Load() != 1 {
		t.Fatalf("a cached snapshot compacted again: %q, %d calls", text, calls.Load())
	}
	// Another snapshot (the next compression): its own Compact.
	if text, _ := st.RestorationOnce(context.Background(), "gemini-s", "k2", func() (string, error) { return "\n\nNEXT", nil }); text != "\n\nNEXT" {
		t.Fatalf("the next snapshot: %q", text)
	}
}

func TestRestorationOnceCachesNoFailure(t *testing.T) {
	st := &State{Dir: t.TempDir(), Now: time.Now}
	if _, err := st.RestorationOnce(context.Background(), "gemini-s", "k", func() (string, error) { return "", errDaemonDown }); !errors.Is(err, errDaemonDown) {
		t.Fatalf("the failure was not returned: %v", err)
	}
	if _, ok := st.CachedRestoration("gemini-s", "k"); ok {
		t.Fatal("a failed Compact was cached")
	}
	// An empty restoration is an answer: cached, no Compact again.
	st.RestorationOnce(context.Background(), "gemini-s", "k", func() (string, error) { return "", nil })
	if text, ok := st.CachedRestoration("gemini-s", "k"); !ok || text != "" {
		t.Fatalf("an empty restoration was not cached: %q %v", text, ok)
	}
}

func TestGeminiText(t *testing.T) {
	atts := []*pb.Attachment{
		{Kind: pb.AttachmentKind_ATTACHMENT_KIND_FILE, Blocks: []string{"call a", "result a"}},
		{Kind: pb.AttachmentKind_ATTACHMENT_KIND_PLAN_MODE, Blocks: []string{"plan mode"}},
		{Kind: pb.AttachmentKind_ATTACHMENT_KIND_INVOKED_SKILLS, Blocks: []string{"skill s"}},
	}
	text := GeminiText(atts)
	if !strings.HasPrefix(text, "\n\n"+geminiHeader) || !strings.Contains(text, "call a\nresult a\n\nskill s") || strings.Contains(text, "plan mode") {
		t.Fatalf("text: %q", text)
	}
	if GeminiText(nil) != "" {
		t.Fatal("text for nothing restored")
	}
}

// The whole hook on a BeforeModel: a snapshot already cached is appended without a daemon (none
// answers at the address), byte for byte; a request with no snapshot is left alone.
func TestRunBeforeModelFromCache(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("POSTCOMPACT_HOOK_STATE", dir)
	t.Setenv("POSTCOMPACT_ADDRESS", "unix://"+dir+"/none.sock")
	t.Setenv("GEMINI_SESSION_ID", "s9")
	snap := "<state_snapshot>\n<overall_goal>g</overall_goal>\n</state_snapshot>"
	st := &State{Dir: dir, Now: time.Now}
	if err := st.storeRestoration("gemini-s9", SnapshotKey(snap), "\n\nRESTORED"); err != nil {
		t.Fatal(err)
	}
	payload := func(req *LLMRequest) *bytes.Reader {
		b, _ := json.Marshal(map[string]any{"session_id": "s9", "hook_event_name": "BeforeModel", "cwd": dir, "llm_request": req})
		return bytes.NewReader(b)
	}
	var out bytes.Buffer
	if code := run(payload(compressed(snap)), &out, 0, false); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var got BeforeModelOutput
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("output %q: %v", out.String(), err)
	}
	msgs := got.HookSpecificOutput.LLMRequest.Messages
	if len(msgs) != 2 || msgs[1].Content != snap+"\n\nRESTORED" {
		t.Fatalf("messages: %+v", msgs)
	}
	out.Reset()
	run(payload(&LLMRequest{Messages: []LLMMessage{{Role: "user", Content: "hi"}}}), &out, 0, false)
	if out.Len() != 0 {
		t.Fatalf("output for a request with no snapshot: %q", out.String())
	}
}
