// Command pcbench is the Go driver of benchmark B6 (bench/b6_clients.py): it times the daemon's
// real RPCs through this client beside a bare echo call made on the same client stack (the same
// postcompact.Client, its interceptors and dial options) in the same run.
//
//	pcbench -daemon unix:///d.sock -echo unix:///e.sock -mode small|compact -c 1|16 \
//	        -calls 2000 -warmup 100 [-rounds 4] [-project DIR]
//
// Modes:
//   - small:   echo of 100 B against EstimateTokens on 100 B;
//   - compact: echo of 100 KB against Compact of a session that read the five 20 KB files
//     DIR/src/module{0..4}.ts (one session per in-flight worker).
//
// The two series alternate in -rounds rounds. One JSON object per series is printed on stdout.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"

	postcompact "github.com/postcompact/postcompact/clients/go"
	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
)

const echoMethod = "/bench.Echo/Echo"

// rawCodec passes *[]byte through unchanged: the bare echo has no protobuf.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*v.(*[]byte))}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}

func (rawCodec) Name() string { return "proto" }

// echoRequest asks the echo server for size bytes: 8 decimal digits, padded to 100 B.
func echoRequest(size int) []byte {
	b := []byte(fmt.Sprintf("%08d", size))
	for len(b) < 100 {
		b = append(b, '-')
	}
	return b
}

type result struct {
	Client      string  `json:"client"`
	Series      string  `json:"series"`
	Mode        string  `json:"mode"`
	Concurrency int     `json:"concurrency"`
	P50         float64 `json:"p50_us"`
	P99         float64 `json:"p99_us"`
	P999        float64 `json:"p999_us"`
	QPS         float64 `json:"qps"`
	Calls       int     `json:"calls"`
}

// series is one competitor: worker w's call is call(ctx, w).
type series struct {
	name string
	call func(ctx context.Context, worker int) error
	lat  []time.Duration
	wall time.Duration
}

func (s *series) run(ctx context.Context, calls, conc int, record bool) error {
	var next atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, conc)
	start := time.Now()
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			local := make([]time.Duration, 0, calls/conc+1)
			for next.Add(1) <= int64(calls) {
				t0 := time.Now()
				if err := s.call(ctx, w); err != nil {
					errs <- fmt.Errorf("%s: %w", s.name, err)
					return
				}
				local = append(local, time.Since(t0))
			}
			mu.Lock()
			s.lat = append(s.lat, local...)
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	wall := time.Since(start)
	select {
	case err := <-errs:
		return err
	default:
	}
	if !record {
		s.lat = s.lat[:0]
	} else {
		s.wall += wall
	}
	return nil
}

func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	k := int(q*float64(len(sorted)-1) + 0.5)
	if k >= len(sorted) {
		k = len(sorted) - 1
	}
	return sorted[k]
}

func (s *series) result(mode string, conc int) result {
	us := make([]float64, len(s.lat))
	for i, d := range s.lat {
		us[i] = float64(d.Nanoseconds()) / 1e3
	}
	sort.Float64s(us)
	return result{"go", s.name, mode, conc, percentile(us, 0.5), percentile(us, 0.99), percentile(us, 0.999),
		float64(len(us)) / s.wall.Seconds(), len(us)}
}

func main() {
	daemon := flag.String("daemon", "", "daemon address (unix:///path or host:port)")
	echo := flag.String("echo", "", "echo server address")
	mode := flag.String("mode", "small", "small or compact")
	conc := flag.Int("c", 1, "calls in flight")
	calls := flag.Int("calls", 2000, "timed calls per series")
	warmup := flag.Int("warmup", 100, "untimed calls per series first")
	rounds := flag.Int("rounds", 4, "alternate the series in this many rounds")
	project := flag.String("project", "", "compact: directory holding src/module{0..4}.ts")
	token := flag.String("token", "", "the daemon's TCP token (TCP only)")
	flag.Parse()
	if err := run(*daemon, *echo, *mode, *conc, *calls, *warmup, *rounds, *project, *token); err != nil {
		fmt.Fprintln(os.Stderr, "pcbench:", err)
		os.Exit(1)
	}
}

func run(daemonAddr, echoAddr, mode string, conc, calls, warmup, rounds int, project, token string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	opts := []postcompact.Option{postcompact.WithAddress(daemonAddr), postcompact.WithAutoStart(false)}
	if token != "" {
		opts = append(opts, postcompact.WithToken(token))
	}
	dc, err := postcompact.New(opts...)
	if err != nil {
		return err
	}
	defer dc.Close()
	// The echo server through the same client type: same dial options and interceptors.
	ec, err := postcompact.New(postcompact.WithAddress(echoAddr), postcompact.WithAutoStart(false))
	if err != nil {
		return err
	}
	defer ec.Close()
	if err := dc.EnsureServing(ctx); err != nil {
		return err
	}

	var echoSize int
	var real *series
	switch mode {
	case "small":
		echoSize = 100
		req := &pb.EstimateTokensRequest{Text: make([]byte, 100)}
		for i := range req.Text {
			req.Text[i] = 'x'
		}
		real = &series{name: "EstimateTokens 100 B", call: func(ctx context.Context, _ int) error {
			_, err := dc.EstimateTokens(ctx, req)
			return err
		}}
	case "compact":
		echoSize = 100 * 1024
		sessions, err := openSessions(ctx, dc, project, conc)
		if err != nil {
			return err
		}
		real = &series{name: "Compact 5x20KB", call: func(ctx context.Context, w int) error {
			_, err := sessions[w].Compact(ctx, postcompact.SkipHooks())
			return err
		}}
	default:
		return fmt.Errorf("unknown mode %q", mode)
	}
	echoReq := echoRequest(echoSize)
	codec := grpc.ForceCodecV2(rawCodec{})
	bare := &series{name: fmt.Sprintf("echo %s", sizeLabel(echoSize)), call: func(ctx context.Context, _ int) error {
		in := echoReq
		var out []byte
		if err := ec.Conn().Invoke(ctx, echoMethod, &in, &out, codec); err != nil {
			return err
		}
		if len(out) != echoSize {
			return fmt.Errorf("echo returned %d bytes, want %d", len(out), echoSize)
		}
		return nil
	}}

	all := []*series{bare, real}
	for _, s := range all {
		if err := s.run(ctx, warmup, conc, false); err != nil {
			return err
		}
	}
	if rounds < 1 {
		rounds = 1
	}
	for r := 0; r < rounds; r++ {
		n := calls / rounds
		if r == rounds-1 {
			n = calls - n*(rounds-1)
		}
		for _, s := range all {
			if err := s.run(ctx, n, conc, true); err != nil {
				return err
			}
		}
	}
	enc := json.NewEncoder(os.Stdout)
	for _, s := range all {
		if err := enc.Encode(s.result(mode, conc)); err != nil {
			return err
		}
	}
	return nil
}

func sizeLabel(n int) string {
	if n >= 1024 {
		return fmt.Sprintf("%d KB", n/1024)
	}
	return fmt.Sprintf("%d B", n)
}

// openSessions opens n sessions that each read the five project files, and checks that one
// Compact restores all five.
func openSessions(ctx context.Context, c *postcompact.Client, project string, n int) ([]*postcompact.Session, error) {
	root, err := filepath.Abs(project)
	if err != nil {
		return nil, err
	}
	out := make([]*postcompact.Session, n)
	for i := range out {
		s, err := c.OpenSession(ctx, &pb.OpenSessionRequest{
			Cwd:    root,
			Policy: &pb.RestorePolicy{MaxFiles: ptr(int32(5)), FileTokenBudget: ptr(int64(50000)), MaxTokensPerFile: ptr(int64(8000)), MatchBudget: pb.HarnessRule_HARNESS_RULE_NONE},
		})
		if err != nil {
			return nil, err
		}
		for f := 0; f < 5; f++ {
			if _, err := s.ReadFile(ctx, filepath.Join(root, "src", fmt.Sprintf("module%d.ts", f))); err != nil {
				return nil, err
			}
		}
		res, err := s.Compact(ctx, postcompact.SkipHooks())
		if err != nil {
			return nil, err
		}
		files := 0
		for _, a := range res.Attachments {
			if a.GetKind() == pb.AttachmentKind_ATTACHMENT_KIND_FILE {
				files++
			}
		}
		if files != 5 {
			return nil, fmt.Errorf("compact restored %d files, want 5", files)
		}
		out[i] = s
	}
	return out, nil
}

func ptr[T any](v T) *T { return &v }
