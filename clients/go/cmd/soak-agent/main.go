// Command soak-agent is the Go agent of the soak run (bench/soak, `make soak`): the same mixed
// workload and the same state checks as bench/soak/agent.py, through this client.
//
//	soak-agent -address unix:///d.sock -name go4 -dir DIR -seconds 120 -epoch-file F -out R.json
//
// It tracks what the daemon must hold (the files it recorded or that its last Compact restored,
// the skills it recorded, the catalogue it last set) and checks it after every daemon restart
// (the orchestrator changes -epoch-file once the new daemon serves) and at the end. A call that
// fails after the request may have reached the daemon (a non-idempotent ReadFile, Compact or
// SetCatalog caught by a kill) makes that one expectation unknown; it is dropped, not guessed.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	postcompact "github.com/postcompact/postcompact/clients/go"
	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
)

const (
	nFiles  = 24
	nSkills = 12
	ts0     = int64(1_700_000_000_000)
)

type agent struct {
	name      string
	rng       *rand.Rand
	epochFile string
	epoch     string
	c         *postcompact.Client
	s         *postcompact.Session
	sessionID string
	paths     []string
	ops       map[string]int
	lat       map[string][]int64
	errs      map[string]int
	lost      []string
	checks    int
	restarts  int
	files     map[string]bool
	skills    map[string]bool
	catalog   []string // nil: unknown
	catNow    []string
	n         int64
}

func (a *agent) readEpoch() string {
	b, _ := os.ReadFile(a.epochFile)
	return string(b)
}

// timed runs one call, recording its latency or its error kind; it reports success.
func (a *agent) timed(method string, fn func() error) bool {
	t0 := time.Now()
	if err := fn(); err != nil {
		var pe *postcompact.Error
		kind := "transport"
		code := "UNKNOWN"
		if errors.As(err, &pe) {
			code = strings.ToUpper(strings.ReplaceAll(pe.Code.String(), " ", "_"))
			switch {
			case pe.Reason != "":
				kind = pe.Reason
			case strings.Contains(pe.Message, "not retried"):
				kind = "not retried"
			}
		} else {
			kind = err.Error()
		}
		a.errs[method+" "+code+" "+kind]++
		return false
	}
	a.lat[method] = append(a.lat[method], time.Since(t0).Microseconds())
	a.ops[method]++
	return true
}

func tools(rng *rand.Rand) []string {
	idx := rng.Perm(30)[:8]
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = fmt.Sprintf("mcp__soak__tool_%d", j)
	}
	sort.Strings(out)
	return out
}

func (a *agent) step(ctx context.Context) {
	a.n++
	s := a.s
	path := a.paths[a.rng.IntN(len(a.paths))]
	roll := a.rng.Float64()
	switch {
	case roll < 0.22:
		if a.timed("ReadFile", func() error { _, err := s.ReadFile(ctx, path); return err }) {
			a.files[path] = true
		}
	case roll < 0.40:
		content, _ := os.ReadFile(path)
		st, _ := os.Stat(path)
		if a.timed("RecordRead", func() error {
			_, err := s.RecordRead(ctx, path, content, st.ModTime().UnixMilli())
			return err
		}) {
			a.files[path] = true
		}
	case roll < 0.55:
		var check *pb.CheckWriteResponse
		if a.timed("CheckWrite", func() (err error) { check, err = s.CheckWrite(ctx, path); return }) &&
			check.GetResult() == pb.WriteCheck_WRITE_CHECK_ALLOWED {
			old, _ := os.ReadFile(path)
			text := append(old, []byte(fmt.Sprintf("// edit %d\n", a.n))...)
			_ = os.WriteFile(path, text, 0o600)
			st, _ := os.Stat(path)
			if a.timed("RecordWrite", func() error {
				_, err := s.RecordWrite(ctx, path, text, st.ModTime().UnixMilli())
				return err
			}) {
				a.files[path] = true
			} else {
				delete(a.files, path) // on disk but maybe not recorded: unknown
			}
		}
	case roll < 0.67:
		name := fmt.Sprintf("skill-%d", a.rng.IntN(nSkills))
		body := []byte(strings.Repeat("# "+name+"\n\nDo the thing "+name+" says.\n", 4))
		if a.timed("RecordSkill", func() error {
			_, err := s.RecordSkill(ctx, name, "", body, ts0+a.n)
			return err
		}) {
			a.skills[name] = true
		}
	case roll < 0.74:
		status := pb.TaskStatus_TASK_STATUS_RUNNING
		if a.rng.IntN(2) == 0 {
			status = pb.TaskStatus_TASK_STATUS_COMPLETED
		}
		task := &pb.Task{TaskId: fmt.Sprintf("%s-t%d", a.name, a.rng.IntN(20)), TaskType: "local_agent",
			Description: "background work", Status: status}
		a.timed("UpsertTask", func() error { return s.UpsertTask(ctx, task) })
	case roll < 0.80:
		if a.rng.IntN(2) == 0 {
			a.catNow = tools(a.rng)
		}
		set := a.catNow
		if a.timed("SetCatalog", func() error {
			_, err := s.SetCatalog(ctx, &pb.SetCatalogRequest{DeferredTools: &pb.DeferredTools{Names: set}})
			return err
		}) {
			a.catalog = set
		} else {
			a.catalog = nil
		}
	case roll < 0.86:
		a.timed("CheckStale", func() error { _, err := s.CheckStale(ctx, "", 0); return err })
	case roll < 0.93:
		text, _ := os.ReadFile(path)
		a.timed("EstimateTokens", func() error {
			_, err := a.c.EstimateTokens(ctx, &pb.EstimateTokensRequest{Text: text})
			return err
		})
	case roll < 0.97:
		a.timed("PreviewCompact", func() error { _, err := s.PreviewCompact(ctx); return err })
	default:
		var res *postcompact.CompactResult
		if a.timed("Compact", func() (err error) { res, err = s.Compact(ctx); return }) {
			a.files = map[string]bool{}
			for _, d := range res.Decisions {
				if d.GetSubject() == pb.Subject_SUBJECT_FILE && d.GetOutcome() == pb.Outcome_OUTCOME_RESTORED {
					a.files[d.GetName()] = true
				}
			}
		} else { // may or may not have run: the cache and announcements are unknown
			a.files = map[string]bool{}
			a.catalog = nil
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (a *agent) verify(ctx context.Context, when string) {
	a.checks++
	s := a.s
	var sessions []*pb.SessionInfo
	if a.timed("ListSessions", func() (err error) {
		sessions, err = a.c.ListSessions(ctx)
		return
	}) {
		found := false
		for _, i := range sessions {
			found = found || i.GetSessionId() == a.sessionID
		}
		if !found {
			a.lost = append(a.lost, when+": session "+a.sessionID+" missing")
		}
	}
	var preview *postcompact.CompactResult
	if a.timed("PreviewCompact", func() (err error) { preview, err = s.PreviewCompact(ctx); return }) {
		names := map[string]bool{}
		for _, d := range preview.Decisions {
			names[d.GetSubject().String()+"|"+d.GetName()] = true
		}
		for _, f := range sortedKeys(a.files) {
			if !names[pb.Subject_SUBJECT_FILE.String()+"|"+f] {
				a.lost = append(a.lost, when+": file entry "+f+" missing")
			}
		}
		for _, k := range sortedKeys(a.skills) {
			if !names[pb.Subject_SUBJECT_SKILL.String()+"|"+k] {
				a.lost = append(a.lost, when+": skill "+k+" missing")
			}
		}
	}
	for _, f := range sortedKeys(a.files) {
		var r *pb.CheckWriteResponse
		if a.timed("CheckWrite", func() (err error) { r, err = s.CheckWrite(ctx, f); return }) &&
			r.GetResult() != pb.WriteCheck_WRITE_CHECK_ALLOWED {
			a.lost = append(a.lost, fmt.Sprintf("%s: CheckWrite %s: %s", when, f, r.GetResult()))
		}
	}
	if a.catalog != nil {
		var delta []*pb.Attachment
		set := a.catalog
		if a.timed("SetCatalog", func() (err error) {
			delta, err = s.SetCatalog(ctx, &pb.SetCatalogRequest{DeferredTools: &pb.DeferredTools{Names: set}})
			return
		}) {
			if len(delta) > 0 {
				a.lost = append(a.lost, fmt.Sprintf("%s: catalogue re-announced %d attachment(s)", when, len(delta)))
			}
		} else {
			a.catalog = nil
		}
	}
}

func makeProject(root string, rng *rand.Rand) ([]string, error) {
	var paths []string
	for i := 0; i < nFiles; i++ {
		p := filepath.Join(root, "src", fmt.Sprintf("mod%02d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return nil, err
		}
		var b strings.Builder
		b.WriteString("package src\n\n")
		for j := 0; j < 40; j++ {
			fmt.Fprintf(&b, "func F%d_%d(x int) int {\n\treturn x * %d\n}\n", i, j, rng.IntN(99)+1)
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

func main() {
	address := flag.String("address", "", "daemon address")
	name := flag.String("name", "go", "agent name")
	dir := flag.String("dir", "", "project directory")
	seconds := flag.Float64("seconds", 120, "run time")
	epochFile := flag.String("epoch-file", "", "changes after each daemon restart")
	out := flag.String("out", "", "result JSON")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if err := run(*address, *name, *dir, *seconds, *epochFile, *out, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "soak-agent:", err)
		os.Exit(1)
	}
}

func run(address, name, dir string, seconds float64, epochFile, out string, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 7))
	paths, err := makeProject(dir, rng)
	if err != nil {
		return err
	}
	c, err := postcompact.New(postcompact.WithAddress(address))
	if err != nil {
		return err
	}
	defer c.Close()
	ctx := context.Background()
	a := &agent{name: name, rng: rng, epochFile: epochFile, c: c, sessionID: "soak-" + name, paths: paths,
		ops: map[string]int{}, lat: map[string][]int64{}, errs: map[string]int{}, files: map[string]bool{},
		skills: map[string]bool{}, catNow: tools(rng)}
	a.epoch = a.readEpoch()
	a.s, err = c.OpenSession(ctx, &pb.OpenSessionRequest{SessionId: a.sessionID, Cwd: dir})
	if err != nil {
		return err
	}
	deadline := time.Now().Add(time.Duration(seconds * float64(time.Second)))
	for time.Now().Before(deadline) {
		if e := a.readEpoch(); e != a.epoch {
			a.epoch = e
			a.restarts++
			a.verify(ctx, "after restart "+strings.TrimSpace(e))
		}
		a.step(ctx)
	}
	a.verify(ctx, "at the end")
	lost := append([]string{}, a.lost...)
	if len(lost) > 20 {
		lost = lost[:20]
	}
	res := map[string]any{"agent": name, "lang": "go", "ops": a.ops, "lat_us": a.lat, "errors": a.errs,
		"checks": a.checks, "restarts_seen": a.restarts, "lost": len(a.lost), "lost_detail": lost}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	if err := os.WriteFile(out+".tmp", b, 0o600); err != nil {
		return err
	}
	return os.Rename(out+".tmp", out)
}
