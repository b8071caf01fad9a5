package postcompact_test

// The conformance runner: every tests/conformance/*.json scenario (format in its README.md)
// against a live daemon this test starts itself (`<repo>/.venv/bin/python -m postcompact serve
// --socket <short /tmp path>`), through the public API of this package. A scenario or a step this
// runner cannot run is a failure, never a skip.
//
// Environment: POSTCOMPACT_CONFORMANCE_PYTHON overrides the interpreter; POSTCOMPACT_CONFORMANCE_RUN
// is a regexp of scenario names to run (default all); POSTCOMPACT_CONFORMANCE_DIR reads the
// scenarios from another directory (to test the runner itself).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	postcompact "github.com/postcompact/postcompact/clients/go"
	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

const rootVar = "${root}"

type scenario struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Files       map[string]string `json:"files"`
	Session     map[string]any    `json:"session"`
	Steps       []map[string]any  `json:"steps"`
}

func repoRoot(t *testing.T) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(filepath.Join(wd, "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "proto", "postcompact", "v1", "postcompact.proto")); err != nil {
		t.Fatalf("repository root not found from %s: %v", wd, err)
	}
	return root
}

// daemon is a postcompact daemon started for the conformance run.
type daemon struct {
	cmd    *exec.Cmd
	socket string
	log    *syncBuffer
	exited chan error
}

// syncBuffer is the daemon's output, written by os/exec while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func daemonPython(t *testing.T, repo string) string {
	py := os.Getenv("POSTCOMPACT_CONFORMANCE_PYTHON")
	if py == "" {
		py = filepath.Join(repo, ".venv", "bin", "python")
	}
	if _, err := os.Stat(py); err != nil {
		t.Fatalf("no Python for the daemon at %s (run `make build`): %v", py, err)
	}
	return py
}

// runtimeDir makes a short private directory for a daemon's socket, HOME and XDG directories.
func runtimeDir(t *testing.T) string {
	dir, err := os.MkdirTemp("/tmp", "pcgo-conf")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Mkdir(filepath.Join(dir, "home"), 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// daemonEnv is the environment of a daemon started by these tests: HOME and the XDG directories
// inside dir, so that nothing of the user's is read or written.
func daemonEnv(dir string) []string {
	home := filepath.Join(dir, "home")
	return append(os.Environ(), "HOME="+home, "XDG_RUNTIME_DIR="+dir, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
}

// launchDaemon starts `python -m postcompact serve --socket socket args...` and waits for health.
func launchDaemon(t *testing.T, repo, dir, socket string, args ...string) *daemon {
	py := daemonPython(t, repo)
	d := &daemon{socket: socket, log: &syncBuffer{}, exited: make(chan error, 1)}
	d.cmd = exec.Command(py, append([]string{"-m", "postcompact", "serve", "--socket", socket}, args...)...)
	d.cmd.Dir = repo
	d.cmd.Env = daemonEnv(dir)
	d.cmd.Stdout = d.log
	d.cmd.Stderr = d.log
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("start the daemon: %v", err)
	}
	go func() { d.exited <- d.cmd.Wait() }()
	t.Cleanup(func() { d.stop(t) })

	c, err := postcompact.New(postcompact.WithAddress("unix://"+socket), postcompact.WithAutoStart(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	healthy := make(chan error, 1)
	go func() { healthy <- c.WaitHealthy(ctx) }()
	select {
	case err := <-healthy:
		if err != nil {
			t.Fatalf("daemon not healthy: %v\n--- daemon output:\n%s", err, d.log.String())
		}
	case err := <-d.exited:
		d.exited <- err
		t.Fatalf("daemon exited before serving: %v\n--- daemon output:\n%s", err, d.log.String())
	}
	return d
}

func startDaemon(t *testing.T, repo string) (*daemon, *postcompact.Client) {
	dir := runtimeDir(t)
	d := launchDaemon(t, repo, dir, filepath.Join(dir, "d.sock"))
	c, err := postcompact.New(postcompact.WithAddress("unix://"+d.socket), postcompact.WithAutoStart(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return d, c
}

// stop sends SIGTERM and waits for a graceful exit (SIGKILL after 15 s).
func (d *daemon) stop(t *testing.T) {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.exited:
		if err != nil {
			t.Errorf("daemon exit after SIGTERM: %v\n--- daemon output (tail):\n%s", err, tail(d.log.String(), 4000))
		}
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		<-d.exited
		t.Errorf("daemon did not exit within 15 s of SIGTERM")
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func TestConformance(t *testing.T) {
	repo := repoRoot(t)
	dir := filepath.Join(repo, "tests", "conformance")
	if d := os.Getenv("POSTCOMPACT_CONFORMANCE_DIR"); d != "" {
		dir = d
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios in tests/conformance: %v", err)
	}
	var only *regexp.Regexp
	if re := os.Getenv("POSTCOMPACT_CONFORMANCE_RUN"); re != "" {
		only = regexp.MustCompile(re)
	}
	d, c := startDaemon(t, repo)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var sc scenario
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&sc); err != nil {
			t.Errorf("%s: cannot parse the scenario: %v", filepath.Base(f), err)
			continue
		}
		if sc.Name == "" {
			sc.Name = strings.TrimSuffix(filepath.Base(f), ".json")
		}
		if only != nil && !only.MatchString(sc.Name) {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			r := &runner{t: t, c: c}
			r.run(&sc)
			if t.Failed() {
				t.Logf("scenario: %s — %s\n--- daemon output (tail):\n%s", filepath.Base(f), sc.Description, tail(d.log.String(), 3000))
			}
		})
	}
	if only == nil {
		t.Run("examples/harness", func(t *testing.T) { runExampleHarness(t, d.socket) })
	}
}

// runExampleHarness runs the example harness against the live daemon and checks what it prints.
func runExampleHarness(t *testing.T, socket string) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	proj := t.TempDir()
	for name, content := range map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"} {
		if err := os.WriteFile(filepath.Join(proj, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(goBin, "run", "./examples/harness", "-addr", "unix://"+socket, "-no-start", "-cwd", proj, "a.txt", "b.txt")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("examples/harness: %v\n%s", err, out)
	}
	for _, want := range []string{"compaction #1", "ATTACHMENT_KIND_FILE", "1\talpha", "1\tbeta"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("examples/harness output lacks %q:\n%s", want, out)
		}
	}
}

type runner struct {
	t        *testing.T
	c        *postcompact.Client
	root     string
	s        *postcompact.Session
	imported []string // sessions made by import_transcript, closed with the scenario's
	ctx      context.Context
	step     string // "step 3 (compact)" for messages
}

func (r *runner) fatalf(format string, args ...any) {
	r.t.Helper()
	r.t.Fatalf(r.step+": "+format, args...)
}

func (r *runner) errorf(format string, args ...any) {
	r.t.Helper()
	r.t.Errorf(r.step+": "+format, args...)
}

func (r *runner) run(sc *scenario) {
	t := r.t
	root := t.TempDir()
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	r.root = root
	for rel, content := range sc.Files {
		r.writeFile(rel, content, nil)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r.ctx = ctx

	r.step = "session"
	req := &pb.OpenSessionRequest{SessionId: fmt.Sprintf("go-%s-%d", sc.Name, time.Now().UnixNano()), Cwd: root}
	sess, _ := subst(sc.Session, root).(map[string]any)
	for k, v := range sess {
		switch k {
		case "policy":
			req.Policy = r.policy(v)
		case "memory_file_names":
			req.Memory = orEmpty(req.Memory)
			req.Memory.FileNames = r.strings(v)
		case "memory_paths":
			req.Memory = orEmpty(req.Memory)
			req.Memory.Paths = r.strings(v)
		case "roots":
			for _, p := range r.strings(v) {
				req.Roots = append(req.Roots, r.abs(p))
			}
		case "profile":
			switch v {
			case "default":
				req.Profile = pb.Profile_PROFILE_DEFAULT
			case "claude-code":
				req.Profile = pb.Profile_PROFILE_CLAUDE_CODE
			case "claude-code-2.1.88":
				req.Profile = pb.Profile_PROFILE_CLAUDE_CODE_2_1_88
			default:
				r.fatalf("unknown profile %v", v)
			}
		case "plans_directory":
			req.PlansDirectory = r.abs(r.str(v))
		default:
			r.fatalf("unsupported session field %q", k)
		}
	}
	s, err := r.c.OpenSession(ctx, req)
	if err != nil {
		r.fatalf("OpenSession: %v", err)
	}
	r.s = s
	defer func() {
		_ = s.Close(context.Background())
		for _, id := range r.imported {
			_ = r.c.Session(id).Close(context.Background())
		}
	}()

	for i, raw := range sc.Steps {
		step := subst(raw, root).(map[string]any)
		op, _ := step["op"].(string)
		r.step = fmt.Sprintf("step %d (%s)", i+1, op)
		r.runStep(op, step)
	}
}

func orEmpty(m *pb.MemoryFiles) *pb.MemoryFiles {
	if m == nil {
		return &pb.MemoryFiles{}
	}
	return m
}

// subst replaces ${root} in every string of v.
func subst(v any, root string) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, rootVar, root)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = subst(e, root)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = subst(e, root)
		}
		return out
	}
	return v
}

// --- field access -------------------------------------------------------------------------------

func (r *runner) str(v any) string {
	s, ok := v.(string)
	if !ok {
		r.fatalf("want a string, got %T %v", v, v)
	}
	return s
}

func (r *runner) num(v any) int64 {
	f, ok := v.(float64)
	if !ok || f != float64(int64(f)) {
		r.fatalf("want an integer, got %T %v", v, v)
	}
	return int64(f)
}

func (r *runner) boolean(v any) bool {
	b, ok := v.(bool)
	if !ok {
		r.fatalf("want a bool, got %T %v", v, v)
	}
	return b
}

func (r *runner) strings(v any) []string {
	l, ok := v.([]any)
	if !ok {
		r.fatalf("want a list of strings, got %T %v", v, v)
	}
	out := make([]string, len(l))
	for i, e := range l {
		out[i] = r.str(e)
	}
	return out
}

// ranges reads a list of [first, last] pairs.
func (r *runner) ranges(v any) [][2]int64 {
	l, ok := v.([]any)
	if !ok {
		r.fatalf("want a list of [first, last] pairs, got %T %v", v, v)
	}
	out := make([][2]int64, len(l))
	for i, e := range l {
		pair, ok := e.([]any)
		if !ok || len(pair) != 2 {
			r.fatalf("want a [first, last] pair, got %T %v", e, e)
		}
		out[i] = [2]int64{r.num(pair[0]), r.num(pair[1])}
	}
	return out
}

func (r *runner) list(v any) []map[string]any {
	l, ok := v.([]any)
	if !ok {
		r.fatalf("want a list of objects, got %T %v", v, v)
	}
	out := make([]map[string]any, len(l))
	for i, e := range l {
		m, ok := e.(map[string]any)
		if !ok {
			r.fatalf("want an object, got %T %v", e, e)
		}
		out[i] = m
	}
	return out
}

// abs applies the path rule: relative paths are joined to the project directory.
func (r *runner) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(r.root, p)
}

// checkKeys fails on a field the runner does not know for this op.
func (r *runner) checkKeys(m map[string]any, allowed ...string) {
	r.t.Helper()
	ok := map[string]bool{"op": true, "agent": true, "expect": true, "expect_error": true}
	for _, a := range allowed {
		ok[a] = true
	}
	for k := range m {
		if !ok[k] {
			r.fatalf("unsupported field %q", k)
		}
	}
}

// enumValue parses an enum name given with or without its prefix ("FULL" or "COMPACT_KIND_FULL").
func (r *runner) enumValue(ed protoreflect.EnumDescriptor, name string) protoreflect.EnumNumber {
	for _, n := range []string{name, enumPrefix(ed) + name} {
		if v := ed.Values().ByName(protoreflect.Name(n)); v != nil {
			return v.Number()
		}
	}
	r.fatalf("%q is not a value of %s", name, ed.FullName())
	return 0
}

// enumPrefix is the UPPER_SNAKE prefix of an enum's values: WriteCheck → "WRITE_CHECK_".
func enumPrefix(ed protoreflect.EnumDescriptor) string {
	var b strings.Builder
	for i, c := range string(ed.Name()) {
		if i > 0 && c >= 'A' && c <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(c)
	}
	return strings.ToUpper(b.String()) + "_"
}

func enumName(ed protoreflect.EnumDescriptor, n protoreflect.EnumNumber) string {
	if v := ed.Values().ByNumber(n); v != nil {
		return strings.TrimPrefix(string(v.Name()), enumPrefix(ed))
	}
	return fmt.Sprint(int32(n))
}

// setFields fills a message from a JSON object by proto field name (scalars, enums by name,
// repeated scalars, nested messages).
func (r *runner) setFields(m protoreflect.Message, obj map[string]any) {
	fields := m.Descriptor().Fields()
	for k, v := range obj {
		fd := fields.ByName(protoreflect.Name(k))
		if fd == nil {
			r.fatalf("%s has no field %q", m.Descriptor().FullName(), k)
		}
		if fd.IsList() {
			l := m.Mutable(fd).List()
			vals, ok := v.([]any)
			if !ok {
				r.fatalf("%s: want a list", k)
			}
			for _, e := range vals {
				l.Append(r.scalar(fd, e))
			}
			continue
		}
		if fd.Kind() == protoreflect.MessageKind {
			sub, ok := v.(map[string]any)
			if !ok {
				r.fatalf("%s: want an object", k)
			}
			r.setFields(m.Mutable(fd).Message(), sub)
			continue
		}
		m.Set(fd, r.scalar(fd, v))
	}
}

func (r *runner) scalar(fd protoreflect.FieldDescriptor, v any) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(r.boolean(v))
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(r.num(v)))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(r.num(v))
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(r.str(v))
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte(r.str(v)))
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(r.enumValue(fd.Enum(), r.str(v)))
	}
	r.fatalf("field %s of kind %s is not supported", fd.Name(), fd.Kind())
	return protoreflect.Value{}
}

func (r *runner) policy(v any) *pb.RestorePolicy {
	obj, ok := v.(map[string]any)
	if !ok {
		r.fatalf("policy: want an object, got %T", v)
	}
	p := &pb.RestorePolicy{}
	r.setFields(p.ProtoReflect(), obj)
	return p
}

// --- disk ---------------------------------------------------------------------------------------

func (r *runner) writeFile(rel, content string, mtimeMS *int64) {
	p := r.abs(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.fatalf("%v", err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.fatalf("%v", err)
	}
	if mtimeMS != nil {
		mt := time.UnixMilli(*mtimeMS)
		if err := os.Chtimes(p, mt, mt); err != nil {
			r.fatalf("%v", err)
		}
	}
}

// content is the step's `content`, or the file's current content.
func (r *runner) content(step map[string]any) []byte {
	if v, ok := step["content"]; ok {
		return []byte(r.str(v))
	}
	b, err := os.ReadFile(r.abs(r.str(step["path"])))
	if err != nil {
		r.fatalf("no `content` and the file cannot be read: %v", err)
	}
	return b
}

// --- steps --------------------------------------------------------------------------------------

func (r *runner) agent(step map[string]any) *postcompact.Session {
	if v, ok := step["agent"]; ok {
		return r.s.Agent(r.str(v))
	}
	return r.s
}

func (r *runner) readOptions(step map[string]any) []postcompact.ReadOption {
	var opts []postcompact.ReadOption
	if v, ok := step["offset"]; ok {
		opts = append(opts, postcompact.Offset(r.num(v)))
	}
	if v, ok := step["limit"]; ok {
		opts = append(opts, postcompact.Limit(r.num(v)))
	}
	if v, ok := step["partial_view"]; ok && r.boolean(v) {
		opts = append(opts, postcompact.PartialView())
	}
	if v, ok := step["nested_memory"]; ok && r.boolean(v) {
		opts = append(opts, postcompact.NestedMemory())
	}
	return opts
}

func (r *runner) optNum(step map[string]any, key string) int64 {
	if v, ok := step[key]; ok {
		return r.num(v)
	}
	return 0
}

func (r *runner) optStr(step map[string]any, key string) string {
	if v, ok := step[key]; ok {
		return r.str(v)
	}
	return ""
}

func (r *runner) runStep(op string, step map[string]any) {
	ctx := r.ctx
	s := r.agent(step)
	var resp proto.Message // compared against `expect` by field name
	// compact: what the client's helpers compute (not response fields): `rendered_text`
	// (RenderedText), `user_blocks` and `system_text` (Join).
	var client map[string]func(want any)
	var err error
	switch op {
	case "write_file":
		r.checkKeys(step, "path", "content", "mtime_ms")
		var mt *int64
		if v, ok := step["mtime_ms"]; ok {
			n := r.num(v)
			mt = &n
		}
		r.writeFile(r.str(step["path"]), r.str(step["content"]), mt)
		return
	case "delete_file":
		r.checkKeys(step, "path")
		if err := os.Remove(r.abs(r.str(step["path"]))); err != nil {
			r.fatalf("%v", err)
		}
		return
	case "start_agent":
		r.checkKeys(step, "parent", "mode")
		mode := pb.AgentMode_AGENT_MODE_UNSPECIFIED
		if v, ok := step["mode"]; ok {
			mode = pb.AgentMode(r.enumValue(mode.Descriptor(), r.str(v)))
		}
		_, err = r.s.Agent(r.optStr(step, "parent")).StartAgent(ctx, r.str(step["agent"]), mode)
	case "attach":
		r.checkKeys(step)
		var joined *postcompact.Session
		joined, err = r.c.AttachSession(ctx, r.s.ID)
		if err == nil {
			resp = &pb.OpenSessionResponse{SessionId: joined.ID, Resumed: joined.Resumed}
		}
	case "end_agent":
		r.checkKeys(step)
		resp, err = s.EndAgent(ctx)
	case "merge_file_state":
		r.checkKeys(step, "from", "into")
		resp, err = r.s.MergeFileState(ctx, r.optStr(step, "from"), r.optStr(step, "into"))
	case "read_file":
		r.checkKeys(step, "path", "offset", "limit")
		resp, err = s.ReadFile(ctx, r.str(step["path"]), r.readOptions(step)...)
	case "record_read":
		r.checkKeys(step, "path", "timestamp_ms", "content", "offset", "limit", "partial_view", "nested_memory")
		_, err = s.RecordRead(ctx, r.str(step["path"]), r.content(step), r.optNum(step, "timestamp_ms"), r.readOptions(step)...)
	case "record_write":
		r.checkKeys(step, "path", "timestamp_ms", "content", "if_entry_timestamp_ms", "changed_lines")
		var opts []postcompact.WriteOption
		if v, ok := step["changed_lines"]; ok {
			opts = append(opts, postcompact.ChangedLines(r.ranges(v)...))
		}
		if _, conditional := step["if_entry_timestamp_ms"]; conditional {
			_, err = s.RecordWriteIf(ctx, r.str(step["path"]), r.content(step), r.optNum(step, "timestamp_ms"), r.optNum(step, "if_entry_timestamp_ms"), opts...)
		} else {
			_, err = s.RecordWrite(ctx, r.str(step["path"]), r.content(step), r.optNum(step, "timestamp_ms"), opts...)
		}
	case "check_write":
		r.checkKeys(step, "path")
		resp, err = s.CheckWrite(ctx, r.str(step["path"]))
	case "check_stale":
		r.checkKeys(step, "command", "started_at_ms")
		var cs *pb.CheckStaleResponse
		cs, err = s.CheckStale(ctx, r.optStr(step, "command"), r.optNum(step, "started_at_ms"))
		if err == nil && !r.expectsError(step) {
			exp := r.expect(step)
			if v, ok := exp["stale_paths"]; ok {
				delete(exp, "stale_paths")
				r.comparePathSet("stale_paths", cs.GetStalePaths(), r.strings(v))
			}
			r.compareMessage("", cs.ProtoReflect(), exp)
			return
		}
	case "record_skill":
		r.checkKeys(step, "name", "skill_path", "content", "invoked_at_ms")
		_, err = s.RecordSkill(ctx, r.str(step["name"]), r.optStr(step, "skill_path"), []byte(r.optStr(step, "content")),
			r.optNum(step, "invoked_at_ms"))
	case "set_plan":
		r.checkKeys(step, "plan_path")
		_, err = s.SetPlan(ctx, r.optStr(step, "plan_path"))
	case "set_mode":
		r.checkKeys(step, "mode")
		m := pb.PermissionMode_PERMISSION_MODE_UNSPECIFIED
		err = s.SetMode(ctx, pb.PermissionMode(r.enumValue(m.Descriptor(), r.str(step["mode"]))))
	case "upsert_task":
		r.checkKeys(step, "task")
		obj, ok := step["task"].(map[string]any)
		if !ok {
			r.fatalf("task: want an object")
		}
		task := &pb.Task{}
		r.setFields(task.ProtoReflect(), obj)
		err = s.UpsertTask(ctx, task)
	case "set_catalog":
		r.checkKeys(step, "deferred_tools", "agent_types", "show_concurrency_note", "mcp_servers", "skill_listing")
		var atts []*pb.Attachment
		atts, err = s.SetCatalog(ctx, r.catalog(step))
		resp = &pb.SetCatalogResponse{Attachments: atts}
	case "compact", "preview_compact":
		r.checkKeys(step, "kind", "preserved_messages", "policy", "additional_context", "skip_hooks", "include_content")
		opts := r.compactOptions(step)
		var res *postcompact.CompactResult
		if op == "compact" {
			res, err = s.Compact(ctx, opts...)
		} else {
			res, err = s.PreviewCompact(ctx, opts...)
		}
		if err == nil {
			resp = &pb.CompactResponse{Attachments: res.Attachments, Decisions: res.Decisions, Totals: res.Totals,
				Compaction: res.Compaction}
			inj := postcompact.Join(res.Attachments)
			if got := res.Injection(); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", inj) {
				r.errorf("CompactResult.Injection() = %q, Join = %q", got, inj)
			}
			client = map[string]func(want any){
				"rendered_text": func(want any) {
					if w := r.str(want); res.RenderedText != w {
						r.errorf("rendered_text =\n%s\nwant\n%s", res.RenderedText, w)
					}
				},
				"user_blocks": func(want any) { r.compareStrings("user_blocks", inj.UserBlocks, r.strings(want)) },
				"system_text": func(want any) {
					if w := r.str(want); inj.SystemText != w {
						r.errorf("system_text =\n%s\nwant\n%s", inj.SystemText, w)
					}
				},
			}
		}
	case "import_transcript":
		r.checkKeys(step, "transcript", "session_id")
		var jsonl bytes.Buffer
		enc := json.NewEncoder(&jsonl) // one record a line, each followed by "\n"
		enc.SetEscapeHTML(false)
		for _, rec := range r.list(step["transcript"]) {
			if err := enc.Encode(rec); err != nil {
				r.fatalf("transcript record: %v", err)
			}
		}
		id := r.s.ID + "-" + r.str(step["session_id"])
		var ir *pb.ImportTranscriptResponse
		ir, err = r.c.ImportTranscript(ctx, jsonl.Bytes(), postcompact.ImportOptions{Cwd: r.root, SessionID: id})
		if err == nil {
			r.imported = append(r.imported, ir.GetSessionId())
			if ir.GetSessionId() != id {
				r.errorf("session_id = %q, want %q", ir.GetSessionId(), id)
			}
			resp = ir
			client = map[string]func(want any){
				"warnings": func(want any) { // a count: the texts are the daemon's own
					if n := int64(len(ir.GetWarnings())); n != r.num(want) {
						r.errorf("warnings: %d %q, want %d", n, ir.GetWarnings(), r.num(want))
					}
				},
			}
		}
	case "estimate_tokens":
		r.checkKeys(step, "text", "ext")
		resp, err = r.c.EstimateTokens(ctx, &pb.EstimateTokensRequest{Text: []byte(r.str(step["text"])), Ext: r.optStr(step, "ext")})
	case "count_tokens":
		r.checkKeys(step, "text", "encoding")
		resp, err = r.c.CountTokens(ctx, &pb.CountTokensRequest{Text: []byte(r.str(step["text"])), Encoding: r.optStr(step, "encoding")})
	case "truncate_tokens":
		r.checkKeys(step, "text", "max_tokens", "marker", "counter", "encoding")
		req := &pb.TruncateTokensRequest{Text: []byte(r.str(step["text"])), MaxTokens: r.optNum(step, "max_tokens"),
			Marker: r.optStr(step, "marker"), Encoding: r.optStr(step, "encoding")}
		if v, ok := step["counter"]; ok {
			req.Counter = pb.TokenCounter(r.enumValue(req.Counter.Descriptor(), r.str(v)))
		}
		resp, err = r.c.TruncateTokens(ctx, req)
	default:
		r.fatalf("unknown op %q", op)
	}

	if r.expectsError(step) {
		r.checkError(step, err)
		return
	}
	if err != nil {
		r.errorf("unexpected error: %v", err)
		return
	}
	exp := r.expect(step)
	if len(exp) == 0 {
		return
	}
	if resp == nil {
		r.fatalf("op %q has no response to check `expect` against", op)
	}
	rest := make(map[string]any, len(exp))
	for k, v := range exp {
		if check, ok := client[k]; ok {
			check(v)
		} else {
			rest[k] = v
		}
	}
	r.compareMessage("", resp.ProtoReflect(), rest)
}

func (r *runner) expectsError(step map[string]any) bool {
	_, ok := step["expect_error"]
	return ok
}

func (r *runner) expect(step map[string]any) map[string]any {
	v, ok := step["expect"]
	if !ok {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		r.fatalf("expect: want an object")
	}
	return m
}

// codeNames maps canonical gRPC code names ("INVALID_ARGUMENT") to codes.
var codeNames = func() map[string]codes.Code {
	m := map[string]codes.Code{}
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		var b strings.Builder
		for i, ch := range c.String() {
			if i > 0 && ch >= 'A' && ch <= 'Z' {
				b.WriteByte('_')
			}
			b.WriteRune(ch)
		}
		m[strings.ToUpper(b.String())] = c
	}
	m["OK"] = codes.OK
	return m
}()

func (r *runner) checkError(step map[string]any, err error) {
	want, ok := step["expect_error"].(map[string]any)
	if !ok {
		r.fatalf("expect_error: want an object")
	}
	for k := range want {
		if k != "code" && k != "reason" {
			r.fatalf("expect_error: unsupported field %q", k)
		}
	}
	code, ok := codeNames[r.str(want["code"])]
	if !ok {
		r.fatalf("expect_error: unknown code %v", want["code"])
	}
	if err == nil {
		r.errorf("succeeded, want %s", want["code"])
		return
	}
	var pe *postcompact.Error
	if !errors.As(err, &pe) {
		r.errorf("error %v (%T) is not a *postcompact.Error", err, err)
		return
	}
	if pe.Code != code {
		r.errorf("code %s (reason %q: %s), want %s", pe.Code, pe.Reason, pe.Message, want["code"])
	}
	if reason, ok := want["reason"]; ok && pe.Reason != r.str(reason) {
		r.errorf("reason %q, want %q (%v)", pe.Reason, reason, pe)
	}
	if pe.Reason == "" {
		r.errorf("the daemon sent no postcompact-error-reason: %v", pe)
	}
}

func (r *runner) catalog(step map[string]any) *pb.SetCatalogRequest {
	req := &pb.SetCatalogRequest{}
	if v, ok := step["deferred_tools"]; ok {
		req.DeferredTools = &pb.DeferredTools{Names: r.strings(v)}
	}
	if v, ok := step["agent_types"]; ok {
		req.AgentTypes = &pb.AgentTypes{}
		for _, at := range r.list(v) {
			m := &pb.AgentType{}
			r.setFields(m.ProtoReflect(), at)
			req.AgentTypes.AgentTypes = append(req.AgentTypes.AgentTypes, m)
		}
	}
	if v, ok := step["show_concurrency_note"]; ok {
		if req.AgentTypes == nil {
			r.fatalf("show_concurrency_note without agent_types")
		}
		req.AgentTypes.ShowConcurrencyNote = r.boolean(v)
	}
	if v, ok := step["mcp_servers"]; ok {
		req.McpServers = &pb.McpServers{}
		for _, srv := range r.list(v) {
			m := &pb.McpServer{}
			r.setFields(m.ProtoReflect(), srv)
			req.McpServers.Servers = append(req.McpServers.Servers, m)
		}
	}
	if v, ok := step["skill_listing"]; ok {
		req.SkillListing = &pb.SkillListing{}
		for _, e := range r.list(v) {
			m := &pb.SkillListingEntry{}
			r.setFields(m.ProtoReflect(), e)
			req.SkillListing.Skills = append(req.SkillListing.Skills, m)
		}
	}
	return req
}

func (r *runner) compactOptions(step map[string]any) []postcompact.CompactOption {
	var opts []postcompact.CompactOption
	kind := "FULL"
	if v, ok := step["kind"]; ok {
		kind = r.str(v)
	}
	var preserved []*pb.ConversationMessage
	if v, ok := step["preserved_messages"]; ok {
		for _, m := range r.list(v) {
			preserved = append(preserved, r.message(m))
		}
	}
	switch kind {
	case "FULL", "COMPACT_KIND_FULL":
		if len(preserved) > 0 {
			r.fatalf("preserved_messages with a FULL compaction")
		}
	case "PARTIAL", "COMPACT_KIND_PARTIAL":
		opts = append(opts, postcompact.Partial(preserved...))
	default:
		r.fatalf("unknown kind %q", kind)
	}
	if v, ok := step["policy"]; ok {
		opts = append(opts, postcompact.WithPolicy(r.policy(v)))
	}
	if v, ok := step["additional_context"]; ok {
		opts = append(opts, postcompact.AdditionalContext(r.strings(v)...))
	}
	if v, ok := step["skip_hooks"]; ok && r.boolean(v) {
		opts = append(opts, postcompact.SkipHooks())
	}
	if v, ok := step["include_content"]; ok && r.boolean(v) {
		opts = append(opts, postcompact.IncludeContent())
	}
	return opts
}

func (r *runner) message(m map[string]any) *pb.ConversationMessage {
	msg := &pb.ConversationMessage{}
	for k, v := range m {
		switch k {
		case "role":
			msg.Role = pb.Role(r.enumValue(msg.Role.Descriptor(), strings.ToUpper(r.str(v))))
		case "content":
			for _, b := range r.list(v) {
				msg.Content = append(msg.Content, r.block(b))
			}
		default:
			r.fatalf("preserved message: unsupported field %q", k)
		}
	}
	return msg
}

func (r *runner) block(b map[string]any) *pb.ContentBlock {
	if len(b) != 1 {
		r.fatalf("a content block has exactly one of text, tool_use, tool_result: %v", b)
	}
	for k, v := range b {
		switch k {
		case "text":
			return &pb.ContentBlock{Block: &pb.ContentBlock_Text{Text: []byte(r.str(v))}}
		case "tool_use":
			tu, ok := v.(map[string]any)
			if !ok {
				r.fatalf("tool_use: want an object")
			}
			use := &pb.ToolUse{}
			for f, fv := range tu {
				switch f {
				case "id":
					use.Id = r.str(fv)
				case "name":
					use.Name = r.str(fv)
				case "input":
					js, err := json.Marshal(fv)
					if err != nil {
						r.fatalf("tool_use input: %v", err)
					}
					use.InputJson = string(js)
				case "input_json":
					use.InputJson = r.str(fv)
				default:
					r.fatalf("tool_use: unsupported field %q", f)
				}
			}
			return &pb.ContentBlock{Block: &pb.ContentBlock_ToolUse{ToolUse: use}}
		case "tool_result":
			tr, ok := v.(map[string]any)
			if !ok {
				r.fatalf("tool_result: want an object")
			}
			res := &pb.ToolResult{}
			r.setFields(res.ProtoReflect(), tr)
			return &pb.ContentBlock{Block: &pb.ContentBlock_ToolResult{ToolResult: res}}
		}
		r.fatalf("content block: unsupported kind %q", k)
	}
	return nil
}

// --- expectations -------------------------------------------------------------------------------

// compareMessage checks every key of exp against the field of the same name in m.
func (r *runner) compareMessage(where string, m protoreflect.Message, exp map[string]any) {
	r.t.Helper()
	keys := make([]string, 0, len(exp))
	for k := range exp {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	exact := false
	if v, ok := exp["decisions_exact"]; ok {
		exact = r.boolean(v)
	}
	for _, k := range keys {
		v := exp[k]
		switch {
		case k == "decisions_exact":
			continue
		case k == "attachments" && m.Descriptor().Fields().ByName("attachments") != nil:
			r.compareAttachments(where+"attachments", m.Get(m.Descriptor().Fields().ByName("attachments")).List(), r.list(v))
			continue
		case k == "decisions" && m.Descriptor().Fields().ByName("decisions") != nil:
			r.compareDecisions(m.Get(m.Descriptor().Fields().ByName("decisions")).List(), r.list(v), exact)
			continue
		}
		fd := m.Descriptor().Fields().ByName(protoreflect.Name(k))
		if fd == nil {
			r.fatalf("expect: %s has no field %q", m.Descriptor().FullName(), k)
		}
		r.compareValue(where+k, fd, m.Get(fd), v)
	}
}

func (r *runner) compareValue(where string, fd protoreflect.FieldDescriptor, got protoreflect.Value, want any) {
	r.t.Helper()
	if fd.IsList() {
		l := got.List()
		wl, ok := want.([]any)
		if !ok {
			r.fatalf("expect %s: want a list", where)
		}
		if l.Len() != len(wl) {
			r.errorf("%s: %d items, want %d (%v)", where, l.Len(), len(wl), want)
			return
		}
		for i := range wl {
			at := fmt.Sprintf("%s[%d]", where, i)
			if fd.Kind() == protoreflect.MessageKind {
				sub, ok := wl[i].(map[string]any)
				if !ok {
					r.fatalf("expect %s: want an object", at)
				}
				r.compareMessage(at+".", l.Get(i).Message(), sub)
				continue
			}
			r.compareScalar(at, fd, l.Get(i), wl[i])
		}
		return
	}
	if fd.Kind() == protoreflect.MessageKind {
		sub, ok := want.(map[string]any)
		if !ok {
			r.fatalf("expect %s: want an object", where)
		}
		r.compareMessage(where+".", got.Message(), sub)
		return
	}
	r.compareScalar(where, fd, got, want)
}

func (r *runner) compareScalar(where string, fd protoreflect.FieldDescriptor, got protoreflect.Value, want any) {
	r.t.Helper()
	var g, w any
	switch fd.Kind() {
	case protoreflect.BoolKind:
		g, w = got.Bool(), r.boolean(want)
	case protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Sint32Kind, protoreflect.Sint64Kind,
		protoreflect.Sfixed32Kind, protoreflect.Sfixed64Kind:
		g, w = got.Int(), r.num(want)
	case protoreflect.StringKind:
		g, w = got.String(), r.str(want)
	case protoreflect.BytesKind:
		g, w = string(got.Bytes()), r.str(want)
	case protoreflect.EnumKind:
		g = enumName(fd.Enum(), got.Enum())
		w = enumName(fd.Enum(), r.enumValue(fd.Enum(), r.str(want)))
	default:
		r.fatalf("expect %s: unsupported kind %s", where, fd.Kind())
	}
	if g != w {
		r.errorf("%s = %s, want %s", where, quote(g), quote(w))
	}
}

func quote(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}

func attachmentPath(a *pb.Attachment) (string, bool) {
	switch p := a.GetPayload().(type) {
	case *pb.Attachment_File:
		return p.File.GetPath(), true
	case *pb.Attachment_FileReference:
		return p.FileReference.GetPath(), true
	}
	return "", false
}

func summary(l protoreflect.List) string {
	var parts []string
	for i := 0; i < l.Len(); i++ {
		a := l.Get(i).Message().Interface().(*pb.Attachment)
		s := enumName(a.GetKind().Descriptor(), protoreflect.EnumNumber(a.GetKind()))
		if p, ok := attachmentPath(a); ok {
			s += " " + p
		}
		parts = append(parts, s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (r *runner) compareAttachments(where string, got protoreflect.List, want []map[string]any) {
	r.t.Helper()
	if got.Len() != len(want) {
		r.errorf("%s: %d attachments %s, want %d", where, got.Len(), summary(got), len(want))
		return
	}
	for i, w := range want {
		a := got.Get(i).Message().Interface().(*pb.Attachment)
		at := fmt.Sprintf("%s[%d]", where, i)
		for k, v := range w {
			switch k {
			case "kind":
				wk := pb.AttachmentKind(r.enumValue(a.GetKind().Descriptor(), r.str(v)))
				if a.GetKind() != wk {
					r.errorf("%s.kind = %s, want %s (all: %s)", at, a.GetKind(), wk, summary(got))
				}
			case "path":
				p, ok := attachmentPath(a)
				if !ok {
					r.errorf("%s: a %s attachment has no path", at, a.GetKind())
				} else if p != r.abs(r.str(v)) {
					r.errorf("%s.path = %q, want %q", at, p, r.abs(r.str(v)))
				}
			case "placement":
				wp := pb.Placement(r.enumValue(a.GetPlacement().Descriptor(), r.str(v)))
				if a.GetPlacement() != wp {
					r.errorf("%s.placement = %s, want %s", at, a.GetPlacement(), wp)
				}
			case "blocks":
				r.compareStrings(at+".blocks", a.GetBlocks(), r.strings(v))
			case "rendered_text": // that attachment's blocks joined by "\n"
				if got := strings.Join(a.GetBlocks(), "\n"); got != r.str(v) {
					r.errorf("%s.rendered_text =\n%s\nwant\n%s", at, got, r.str(v))
				}
			case "rendered_contains":
				got := strings.Join(a.GetBlocks(), "\n")
				for _, sub := range r.strings(v) {
					if !strings.Contains(got, sub) {
						r.errorf("%s.rendered_text does not contain %q:\n%s", at, sub, got)
					}
				}
			case "file_content":
				if a.GetFile() == nil {
					r.errorf("%s: a %s attachment has no file content", at, a.GetKind())
				} else if got := string(a.GetFile().GetContent()); got != r.str(v) {
					r.errorf("%s.file_content = %q, want %q", at, got, r.str(v))
				}
			default:
				fd := a.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(k))
				if fd == nil {
					r.fatalf("expect %s: unsupported attachment field %q", at, k)
				}
				r.compareValue(at+"."+k, fd, a.ProtoReflect().Get(fd), v)
			}
		}
	}
}

func (r *runner) compareDecisions(got protoreflect.List, want []map[string]any, exact bool) {
	r.t.Helper()
	var all []*pb.Decision
	for i := 0; i < got.Len(); i++ {
		all = append(all, got.Get(i).Message().Interface().(*pb.Decision))
	}
	show := func() string {
		var parts []string
		for _, d := range all {
			parts = append(parts, fmt.Sprintf("%s %s %s", enumName(d.GetSubject().Descriptor(), protoreflect.EnumNumber(d.GetSubject())),
				d.GetName(), enumName(d.GetOutcome().Descriptor(), protoreflect.EnumNumber(d.GetOutcome()))))
		}
		return strings.Join(parts, "; ")
	}
	for _, w := range want {
		for k := range w {
			if k != "subject" && k != "name" && k != "outcome" && k != "tokens" && k != "rank" && k != "detail" {
				r.fatalf("expect decisions: unsupported field %q", k)
			}
		}
		found := false
		for _, d := range all {
			if r.decisionMatches(d, w) {
				found = true
				break
			}
		}
		if !found {
			r.errorf("decision %v not found in [%s]", w, show())
		}
	}
	if exact && len(all) != len(want) {
		r.errorf("decisions_exact: %d decisions, want %d: [%s]", len(all), len(want), show())
	}
}

func (r *runner) decisionMatches(d *pb.Decision, w map[string]any) bool {
	if v, ok := w["subject"]; ok && d.GetSubject() != pb.Subject(r.enumValue(d.GetSubject().Descriptor(), r.str(v))) {
		return false
	}
	if v, ok := w["outcome"]; ok && d.GetOutcome() != pb.Outcome(r.enumValue(d.GetOutcome().Descriptor(), r.str(v))) {
		return false
	}
	if v, ok := w["name"]; ok {
		name := r.str(v)
		if d.GetSubject() == pb.Subject_SUBJECT_FILE {
			name = r.abs(name)
		}
		if d.GetName() != name {
			return false
		}
	}
	if v, ok := w["tokens"]; ok && d.GetTokens() != r.num(v) {
		return false
	}
	if v, ok := w["rank"]; ok && int64(d.GetRank()) != r.num(v) {
		return false
	}
	if v, ok := w["detail"]; ok && d.GetDetail() != r.str(v) {
		return false
	}
	return true
}

// compareStrings checks an exact list of strings (same length, same order).
func (r *runner) compareStrings(where string, got, want []string) {
	r.t.Helper()
	if len(got) != len(want) {
		r.errorf("%s: %d items, want %d:\n got %q\nwant %q", where, len(got), len(want), got, want)
		return
	}
	for i := range want {
		if got[i] != want[i] {
			r.errorf("%s[%d] =\n%s\nwant\n%s", where, i, got[i], want[i])
		}
	}
}

func (r *runner) comparePathSet(where string, got []string, want []string) {
	r.t.Helper()
	g := append([]string(nil), got...)
	w := make([]string, len(want))
	for i, p := range want {
		w[i] = r.abs(p)
	}
	sort.Strings(g)
	sort.Strings(w)
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		r.errorf("%s = %q, want %q", where, g, w)
	}
}
