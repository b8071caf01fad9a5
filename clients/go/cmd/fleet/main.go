// Command fleet is the load driver of benchmark B7 (bench/b7_agents.py): N agents in this one
// process, each a goroutine with its own connection and its own session on one daemon, doing a
// coding agent's mix of calls back to back for a fixed time. No state checks (that is the soak
// agent's job, cmd/soak-agent): only counts, latencies, errors and this process's own CPU, so
// that the driver stays light beside the daemon it loads.
//
//	fleet -address unix:///d.sock[,unix:///e.sock...] -project DIR -agents 32 -seconds 15 \
//	      [-warmup 2] [-seed 1]
//
// With several addresses (daemons), agent i uses the (i mod N)th: sessions sharded by agent.
// The project (created under DIR when absent): lib/ holds shared read-only files of 2-48 KB
// and a few of ~160 KB that are only read by line range; each agent edits its own files under
// agents/aN/. Each agent, per operation: ReadFile of a lib file (whole, or a line range of a big
// one), RecordRead of one it read itself, an edit (CheckWrite, then the write and RecordWrite;
// ReadFile first when the check asks for it), now and then RecordSkill, rarely SetCatalog or
// PreviewCompact, and a Compact every 40th operation (each agent at its own phase).
//
// Stdout: {"event":"start"} when the measured window opens (after the warm-up),
// {"event":"stop"} when it closes, then one JSON result. A call counts when it completes
// inside the window.
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
	"sync"
	"syscall"
	"time"

	postcompact "github.com/postcompact/postcompact/clients/go"
	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
)

const (
	libFiles     = 160
	bigFiles     = 8
	ownFiles     = 6
	compactEvery = 40
	rangeLines   = 200
	ts0          = int64(1_700_000_000_000)
)

type project struct {
	lib   []string // whole reads
	big   []string // ranged reads
	lines map[string]int
	files int
	bytes int64
}

// codeFile is ~size bytes of Go-like source.
func codeFile(rng *rand.Rand, tag string, size int) []byte {
	var b strings.Builder
	b.WriteString("package lib\n\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "// %s_%d scales its input by a constant picked for this file.\n", tag, i)
		fmt.Fprintf(&b, "func %s_%d(x int) int {\n\treturn x*%d + %d\n}\n\n", tag, i, rng.IntN(97)+1, rng.IntN(1000))
	}
	return []byte(b.String())
}

func write(p string, data []byte, prj *project) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	prj.files++
	prj.bytes += int64(len(data))
	prj.lines[p] = strings.Count(string(data), "\n") + 1
	return os.WriteFile(p, data, 0o600)
}

// makeProject writes the shared files (the same for every seed) and each agent's own ones.
func makeProject(root string, agents int) (*project, [][]string, error) {
	rng := rand.New(rand.NewPCG(42, 7))
	prj := &project{lines: map[string]int{}}
	for i := 0; i < libFiles; i++ {
		// Mostly small files, some medium, a few large: what an agent reads in a repository.
		var size int
		switch r := rng.Float64(); {
		case r < 0.6:
			size = 2048 + rng.IntN(6*1024)
		case r < 0.9:
			size = 8*1024 + rng.IntN(16*1024)
		default:
			size = 24*1024 + rng.IntN(24*1024)
		}
		p := filepath.Join(root, "lib", fmt.Sprintf("f%03d.go", i))
		if err := write(p, codeFile(rng, fmt.Sprintf("F%d", i), size), prj); err != nil {
			return nil, nil, err
		}
		prj.lib = append(prj.lib, p)
	}
	for i := 0; i < bigFiles; i++ {
		p := filepath.Join(root, "lib", fmt.Sprintf("big%d.go", i))
		if err := write(p, codeFile(rng, fmt.Sprintf("B%d", i), 160*1024), prj); err != nil {
			return nil, nil, err
		}
		prj.big = append(prj.big, p)
	}
	own := make([][]string, agents)
	for a := range own {
		for i := 0; i < ownFiles; i++ {
			p := filepath.Join(root, "agents", fmt.Sprintf("a%d", a), fmt.Sprintf("edit%d.go", i))
			if err := write(p, codeFile(rng, fmt.Sprintf("E%d_%d", a, i), 4096+rng.IntN(4096)), prj); err != nil {
				return nil, nil, err
			}
			own[a] = append(own[a], p)
		}
	}
	return prj, own, nil
}

type agent struct {
	id    int
	rng   *rand.Rand
	s     *postcompact.Session
	prj   *project
	own   []string
	base  map[string][]byte // an edited file is reset to this when it has grown past 2x
	n     int
	phase int
	tools []string

	start, stop time.Time
	lat         map[string][]int32 // µs, calls completed inside the window
	errs        map[string]int
}

func (a *agent) timed(method string, fn func() error) bool {
	t0 := time.Now()
	err := fn()
	t1 := time.Now()
	if t1.Before(a.start) || !t1.Before(a.stop) {
		return err == nil
	}
	if err != nil {
		code := "UNKNOWN"
		var pe *postcompact.Error
		if errors.As(err, &pe) {
			code = pe.Code.String()
			if pe.Reason != "" {
				code += " " + pe.Reason
			}
		}
		a.errs[method+" "+code]++
		return false
	}
	a.lat[method] = append(a.lat[method], int32(t1.Sub(t0).Microseconds()))
	return true
}

func (a *agent) edit(ctx context.Context) {
	path := a.own[a.rng.IntN(len(a.own))]
	var check *pb.CheckWriteResponse
	if !a.timed("CheckWrite", func() (err error) { check, err = a.s.CheckWrite(ctx, path); return }) {
		return
	}
	if check.GetResult() != pb.WriteCheck_WRITE_CHECK_ALLOWED {
		// Not read since the last compaction, or changed: read it first, as an agent must.
		a.timed("ReadFile", func() error { _, err := a.s.ReadFile(ctx, path); return err })
		return
	}
	old, err := os.ReadFile(path)
	if err != nil {
		return
	}
	text := append(old, fmt.Appendf(nil, "// edit %d by agent %d\n", a.n, a.id)...)
	if len(text) > 2*len(a.base[path]) {
		text = a.base[path]
	}
	if os.WriteFile(path, text, 0o600) != nil {
		return
	}
	st, err := os.Stat(path)
	if err != nil {
		return
	}
	a.timed("RecordWrite", func() error {
		_, err := a.s.RecordWrite(ctx, path, text, st.ModTime().UnixMilli())
		return err
	})
}

func (a *agent) step(ctx context.Context) {
	a.n++
	if a.n%compactEvery == a.phase {
		a.timed("Compact", func() error { _, err := a.s.Compact(ctx); return err })
		return
	}
	switch r := a.rng.Float64(); {
	case r < 0.34:
		path := a.prj.lib[a.rng.IntN(len(a.prj.lib))]
		a.timed("ReadFile", func() error { _, err := a.s.ReadFile(ctx, path); return err })
	case r < 0.44:
		path := a.prj.big[a.rng.IntN(len(a.prj.big))]
		offset := int64(1 + a.rng.IntN(a.prj.lines[path]-rangeLines))
		a.timed("ReadFile", func() error {
			_, err := a.s.ReadFile(ctx, path, postcompact.Lines(offset, rangeLines))
			return err
		})
	case r < 0.58:
		// The harness read the file itself and tells the daemon.
		path := a.prj.lib[a.rng.IntN(len(a.prj.lib))]
		content, err := os.ReadFile(path)
		if err != nil {
			return
		}
		a.timed("RecordRead", func() error { _, err := a.s.RecordRead(ctx, path, content, 0); return err })
	case r < 0.91:
		a.edit(ctx)
	case r < 0.97:
		name := fmt.Sprintf("skill-%d", a.rng.IntN(12))
		body := []byte(strings.Repeat("# "+name+"\n\nWhen the task calls for "+name+", do this step by step.\n", 20))
		a.timed("RecordSkill", func() error {
			_, err := a.s.RecordSkill(ctx, name, "", body, ts0+int64(a.n))
			return err
		})
	case r < 0.985:
		// The deferred tools change now and then (an MCP server connects or leaves).
		a.tools = toolNames(a.rng)
		set := a.tools
		a.timed("SetCatalog", func() error {
			_, err := a.s.SetCatalog(ctx, &pb.SetCatalogRequest{DeferredTools: &pb.DeferredTools{Names: set}})
			return err
		})
	default:
		a.timed("PreviewCompact", func() error { _, err := a.s.PreviewCompact(ctx); return err })
	}
}

func toolNames(rng *rand.Rand) []string {
	idx := rng.Perm(40)[:12]
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = fmt.Sprintf("mcp__fleet__tool_%d", j)
	}
	sort.Strings(out)
	return out
}

type rpcResult struct {
	Calls  int     `json:"calls"`
	RPS    float64 `json:"rps"`
	P50    float64 `json:"p50_us"`
	P99    float64 `json:"p99_us"`
	Errors int     `json:"errors"`
}

type result struct {
	Agents    int                   `json:"agents"`
	Seconds   float64               `json:"seconds"`
	Calls     int                   `json:"calls"`
	RPS       float64               `json:"rps"`
	RPCs      map[string]*rpcResult `json:"rpcs"`
	Errors    map[string]int        `json:"errors"`
	CPUUser   float64               `json:"cpu_user_s"`
	CPUSys    float64               `json:"cpu_sys_s"`
	Files     int                   `json:"project_files"`
	FileBytes int64                 `json:"project_bytes"`
}

func cpuTimes() (user, sys float64) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime), tv(ru.Stime)
}

func percentile(sorted []int32, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	k := int(q*float64(len(sorted)-1) + 0.5)
	return float64(sorted[min(k, len(sorted)-1)])
}

func event(name string) {
	fmt.Printf("{\"event\":%q}\n", name)
}

func main() {
	address := flag.String("address", "", "daemon address (unix:///path); several, comma-separated: agent i uses the (i mod N)th")
	dir := flag.String("project", "", "project directory (created)")
	agents := flag.Int("agents", 8, "agents, each its own connection and session")
	seconds := flag.Float64("seconds", 15, "measured time")
	warmup := flag.Float64("warmup", 2, "unmeasured time first")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if err := run(*address, *dir, *agents, *seconds, *warmup, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
}

func run(addresses, dir string, n int, seconds, warmup float64, seed uint64) error {
	daemons := strings.Split(addresses, ",")
	root, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	prj, own, err := makeProject(root, n)
	if err != nil {
		return err
	}
	ctx := context.Background()
	all := make([]*agent, n)
	for i := range all {
		// One client each: an agent is its own process with its own connection in real use.
		c, err := postcompact.New(postcompact.WithAddress(daemons[i%len(daemons)]), postcompact.WithAutoStart(false))
		if err != nil {
			return err
		}
		defer c.Close()
		s, err := c.OpenSession(ctx, &pb.OpenSessionRequest{SessionId: fmt.Sprintf("fleet-%d", i), Cwd: root})
		if err != nil {
			return fmt.Errorf("agent %d: OpenSession: %w", i, err)
		}
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		a := &agent{id: i, rng: rng, s: s, prj: prj, own: own[i], base: map[string][]byte{},
			phase: rng.IntN(compactEvery), tools: toolNames(rng), lat: map[string][]int32{}, errs: map[string]int{}}
		for _, p := range a.own {
			if a.base[p], err = os.ReadFile(p); err != nil {
				return err
			}
		}
		all[i] = a
	}
	start := time.Now().Add(time.Duration(warmup * float64(time.Second)))
	stop := start.Add(time.Duration(seconds * float64(time.Second)))
	var wg sync.WaitGroup
	for _, a := range all {
		a.start, a.stop = start, stop
		wg.Add(1)
		go func(a *agent) {
			defer wg.Done()
			for time.Now().Before(stop) {
				a.step(ctx)
			}
		}(a)
	}
	time.Sleep(time.Until(start))
	u0, s0 := cpuTimes()
	event("start")
	time.Sleep(time.Until(stop))
	u1, s1 := cpuTimes()
	event("stop")
	wg.Wait()

	res := result{Agents: n, Seconds: seconds, RPCs: map[string]*rpcResult{}, Errors: map[string]int{},
		CPUUser: u1 - u0, CPUSys: s1 - s0, Files: prj.files, FileBytes: prj.bytes}
	lat := map[string][]int32{}
	for _, a := range all {
		for m, l := range a.lat {
			lat[m] = append(lat[m], l...)
		}
		for k, v := range a.errs {
			res.Errors[k] += v
			m := strings.SplitN(k, " ", 2)[0]
			if res.RPCs[m] == nil {
				res.RPCs[m] = &rpcResult{}
			}
			res.RPCs[m].Errors += v
		}
	}
	for m, l := range lat {
		sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
		r := res.RPCs[m]
		if r == nil {
			r = &rpcResult{}
			res.RPCs[m] = r
		}
		r.Calls, r.RPS, r.P50, r.P99 = len(l), float64(len(l))/seconds, percentile(l, 0.5), percentile(l, 0.99)
		res.Calls += len(l)
	}
	res.RPS = float64(res.Calls) / seconds
	return json.NewEncoder(os.Stdout).Encode(res)
}
