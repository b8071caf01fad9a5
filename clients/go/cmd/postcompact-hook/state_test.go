package main

import (
	"testing"
	"time"
)

func TestBackoffGrows(t *testing.T) {
	want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 10 * time.Minute, 10 * time.Minute}
	for i, w := range want {
		if got := Backoff(i + 1); got != w {
			t.Errorf("Backoff(%d) = %v, want %v", i+1, got, w)
		}
	}
}

func TestBackoffMarker(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	st := &State{Dir: t.TempDir(), Now: func() time.Time { return now }}
	if st.InBackoff() != nil {
		t.Fatal("a back-off with no failure")
	}
	st.RecordFailure("no daemon")
	if f := st.InBackoff(); f == nil || f.Reason != "no daemon" || f.Failures != 1 {
		t.Fatalf("after a failure: %+v", f)
	}
	now = now.Add(31 * time.Second)
	if st.InBackoff() != nil {
		t.Fatal("still in back-off after 31 s")
	}
	st.RecordFailure("again")
	now = now.Add(45 * time.Second)
	if f := st.InBackoff(); f == nil || f.Failures != 2 {
		t.Fatalf("the second failure backs off a minute: %+v", f)
	}
	st.ClearFailure()
	if st.LastFailure() != nil {
		t.Fatal("the marker survived ClearFailure")
	}
}

func TestOnceAndReported(t *testing.T) {
	st := &State{Dir: t.TempDir(), Now: time.Now}
	if !st.TellOnce("claude-code-s/1") || st.TellOnce("claude-code-s/1") {
		t.Fatal("TellOnce is not once")
	}
	if !st.TellOnce("claude-code-s2") {
		t.Fatal("TellOnce is per session")
	}
	st.MarkReported("s", "a", "b")
	st.MarkReported("s", "c")
	if got := st.Reported("s"); len(got) != 3 || !got["a"] || !got["c"] {
		t.Fatalf("Reported = %v", got)
	}
}
