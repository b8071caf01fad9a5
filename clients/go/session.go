package postcompact

import (
	"context"
	"sort"
	"strings"

	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
	"google.golang.org/grpc"
)

// Session is one conversation on the daemon, seen as one agent ("" = the main thread). Agent
// returns the same session seen as another agent. A Session is a small value: copy it freely.
type Session struct {
	c       *Client
	ID      string
	AgentID string
	// Resumed is true when OpenSession found the session already there.
	Resumed bool
	// Info is the daemon's description of the session when it was opened.
	Info *pb.SessionInfo
}

// OpenSession opens (or resumes, when req.SessionId names a live one) a session. req.Cwd is
// required and absolute.
func (c *Client) OpenSession(ctx context.Context, req *pb.OpenSessionRequest, opts ...grpc.CallOption) (*Session, error) {
	resp, err := c.api.OpenSession(ctx, req, opts...)
	if err != nil {
		return nil, err
	}
	return &Session{c: c, ID: resp.GetSessionId(), Resumed: resp.GetResumed(), Info: resp.GetSession()}, nil
}

// AttachSession joins the existing session id as it is, without restating its settings (its
// cwd, roots, policy... are the session's); NOT_FOUND SESSION_NOT_FOUND when there is none.
// OpenSession with the id and settings that differ is refused instead
// (SESSION_SETTINGS_MISMATCH): settings are never silently dropped.
func (c *Client) AttachSession(ctx context.Context, id string, opts ...grpc.CallOption) (*Session, error) {
	return c.OpenSession(ctx, &pb.OpenSessionRequest{SessionId: id}, opts...)
}

// ImportOptions tunes ImportTranscript.
type ImportOptions struct {
	// Cwd is where the transcript's working directory is on this machine (absolute; required):
	// paths under the transcript's cwd are mapped under it.
	Cwd string
	// SessionID is the imported session's id ("" = the transcript's own session id).
	SessionID string
	// PathMap maps further transcript path prefixes (POSIX or Windows form, as in the transcript)
	// to absolute local directories; the longest match wins.
	PathMap map[string]string
	// Profile is the imported session's profile (PROFILE_UNSPECIFIED = the daemon's default).
	Profile pb.Profile
	// Policy is the imported session's restore policy (nil = inherit).
	Policy *pb.RestorePolicy
	// Home is the imported session's home for ~ expansion ("" = the daemon user's).
	Home string
	// Replace replaces a session with that id (else the call fails with ALREADY_EXISTS).
	Replace bool
	// FileMtimes stamps reads and writes with the files' mtimes here (as a running Claude Code
	// does), not with the records' times (as its --resume does).
	FileMtimes bool
}

// ImportTranscript builds a new session on the daemon from a Claude Code transcript (its JSONL
// bytes): its reads, edits, writes, skills, plan, mode and tasks become the session's state, and
// each compaction in it is replayed (the response's Boundaries hold what Claude Code recorded and
// what postcompact restored). c.Session(resp.GetSessionId()) then works on the imported session.
// The call is not idempotent (a repeat of one that succeeded answers ALREADY_EXISTS): after a
// transport failure it is retried only when it was never sent. c.API().ImportTranscript is the
// raw call.
func (c *Client) ImportTranscript(ctx context.Context, transcript []byte, o ImportOptions, opts ...grpc.CallOption) (*pb.ImportTranscriptResponse, error) {
	return c.api.ImportTranscript(ctx, importRequest(transcript, o), opts...)
}

func importRequest(transcript []byte, o ImportOptions) *pb.ImportTranscriptRequest {
	req := &pb.ImportTranscriptRequest{
		Transcript: transcript, SessionId: o.SessionID, Cwd: o.Cwd, Profile: o.Profile, Policy: o.Policy,
		Home: o.Home, Replace: o.Replace, FileMtimes: o.FileMtimes,
	}
	sources := make([]string, 0, len(o.PathMap))
	for src := range o.PathMap {
		sources = append(sources, src)
	}
	sort.Strings(sources) // a stable request; the daemon picks the longest match whatever the order
	for _, src := range sources {
		req.PathMap = append(req.PathMap, &pb.PathMapping{Source: src, Target: o.PathMap[src]})
	}
	return req
}

// Session returns a handle on an existing session without a call.
func (c *Client) Session(sessionID string) *Session { return &Session{c: c, ID: sessionID} }

// Client returns the client the session uses.
func (s *Session) Client() *Client { return s.c }

// Agent returns the same session seen as agentID.
func (s *Session) Agent(agentID string) *Session {
	t := *s
	t.AgentID = agentID
	return &t
}

// StartAgent starts a sub-agent of this session's agent and returns the session seen as it.
// mode is AGENT_MODE_FRESH (an empty file state) or AGENT_MODE_CLONE_PARENT (a fork).
func (s *Session) StartAgent(ctx context.Context, agentID string, mode pb.AgentMode) (*Session, error) {
	_, err := s.c.api.StartAgent(ctx, &pb.StartAgentRequest{
		SessionId: s.ID, AgentId: agentID, ParentAgentId: s.AgentID, Mode: mode,
	})
	if err != nil {
		return nil, err
	}
	return s.Agent(agentID), nil
}

// EndAgent ends this sub-agent: its file state, skills and catalogue are forgotten and its slot
// in the session (limits.max_agents_per_session) is free. The main thread cannot end
// (INVALID_ARGUMENT MAIN_AGENT): close the session.
func (s *Session) EndAgent(ctx context.Context) (*pb.EndAgentResponse, error) {
	return s.c.api.EndAgent(ctx, &pb.EndAgentRequest{SessionId: s.ID, AgentId: s.AgentID})
}

// MergeFileState merges the file state of agent from into agent into.
func (s *Session) MergeFileState(ctx context.Context, from, into string) (*pb.MergeFileStateResponse, error) {
	return s.c.api.MergeFileState(ctx, &pb.MergeFileStateRequest{SessionId: s.ID, FromAgentId: from, IntoAgentId: into})
}

// Close closes the session on the daemon (every agent's state is dropped).
func (s *Session) Close(ctx context.Context) error {
	if s.AgentID != "" {
		_, err := s.EndAgent(ctx)
		return err
	}
	_, err := s.c.api.CloseSession(ctx, &pb.CloseSessionRequest{SessionId: s.ID})
	return err
}

// ReadOption tunes ReadFile and RecordRead.
type ReadOption func(*readOptions)

type readOptions struct {
	offset, limit         *int64
	partial, nestedMemory bool
}

// Lines restricts a read to limit lines from the 1-based line offset (0 leaves either unset).
func Lines(offset, limit int64) ReadOption {
	return func(o *readOptions) {
		if offset > 0 {
			o.offset = &offset
		}
		if limit > 0 {
			o.limit = &limit
		}
	}
}

// Offset sets the 1-based first line of a read, even when it is 0 (which the daemon refuses).
func Offset(n int64) ReadOption { return func(o *readOptions) { o.offset = &n } }

// Limit sets the number of lines of a read, even when it is 0.
func Limit(n int64) ReadOption { return func(o *readOptions) { o.limit = &n } }

// PartialView marks a recorded read whose text differs from the disk (e.g. an injected memory file).
func PartialView() ReadOption { return func(o *readOptions) { o.partial = true } }

// NestedMemory marks a recorded read of a nested memory file loaded by the harness.
func NestedMemory() ReadOption { return func(o *readOptions) { o.nestedMemory = true } }

func readOpts(opts []ReadOption) readOptions {
	var o readOptions
	for _, f := range opts {
		f(&o)
	}
	return o
}

// ReadFile reads a file through the daemon, which records it: the response's Text is the
// model-facing tool result (numbered lines, or the "unchanged" stub when Unchanged).
func (s *Session) ReadFile(ctx context.Context, path string, opts ...ReadOption) (*pb.ReadFileResponse, error) {
	o := readOpts(opts)
	return s.c.api.ReadFile(ctx, &pb.ReadFileRequest{
		SessionId: s.ID, AgentId: s.AgentID, Path: path, Offset: o.offset, Limit: o.limit,
	})
}

// RecordRead records a read the harness did itself. timestampMS is the harness's timestamp (mtime
// or read time; 0 = now). It returns the normalised path.
func (s *Session) RecordRead(ctx context.Context, path string, content []byte, timestampMS int64, opts ...ReadOption) (string, error) {
	o := readOpts(opts)
	resp, err := s.c.api.RecordRead(ctx, &pb.RecordReadRequest{
		SessionId: s.ID, AgentId: s.AgentID, Path: path, Content: content, TimestampMs: timestampMS,
		Offset: o.offset, Limit: o.limit, PartialView: o.partial, NestedMemory: o.nestedMemory,
	})
	return resp.GetPath(), err
}

// WriteOption tunes RecordWrite and RecordWriteIf.
type WriteOption func(*pb.RecordWriteRequest)

// ChangedLines names the lines of the new content the write added or changed (an Edit's hunks),
// each a {first, last} pair, 1-based and inclusive; none: the write only deleted lines. Without
// this option the daemon diffs the content against what the agent held. They widen the span of
// lines the agent saw of the file (docs/eval.md §2).
func ChangedLines(ranges ...[2]int64) WriteOption {
	return func(r *pb.RecordWriteRequest) {
		c := &pb.ChangedLines{Ranges: make([]*pb.LineRange, 0, len(ranges))}
		for _, x := range ranges {
			c.Ranges = append(c.Ranges, &pb.LineRange{First: x[0], Last: x[1]})
		}
		r.ChangedLines = c
	}
}

func (s *Session) recordWrite(ctx context.Context, req *pb.RecordWriteRequest, opts []WriteOption) (string, error) {
	for _, f := range opts {
		f(req)
	}
	resp, err := s.c.api.RecordWrite(ctx, req)
	return resp.GetPath(), err
}

// RecordWrite records an Edit/Write: content after it and the file's mtime (0 = stat the file).
func (s *Session) RecordWrite(ctx context.Context, path string, content []byte, timestampMS int64, opts ...WriteOption) (string, error) {
	return s.recordWrite(ctx, &pb.RecordWriteRequest{
		SessionId: s.ID, AgentId: s.AgentID, Path: path, Content: content, TimestampMs: timestampMS,
	}, opts)
}

// RecordWriteIf records a write only if no other read or write of path was recorded since the
// CheckWrite that allowed it (ifEntryTimestampMS: its EntryTimestampMs): FAILED_PRECONDITION
// WRITE_CONFLICT otherwise, and nothing changes.
func (s *Session) RecordWriteIf(ctx context.Context, path string, content []byte, timestampMS, ifEntryTimestampMS int64, opts ...WriteOption) (string, error) {
	return s.recordWrite(ctx, &pb.RecordWriteRequest{
		SessionId: s.ID, AgentId: s.AgentID, Path: path, Content: content, TimestampMs: timestampMS,
		IfEntryTimestampMs: &ifEntryTimestampMS,
	}, opts)
}

// CheckWrite says whether a write to path is allowed (read first, not modified since).
func (s *Session) CheckWrite(ctx context.Context, path string) (*pb.CheckWriteResponse, error) {
	return s.c.api.CheckWrite(ctx, &pb.CheckWriteRequest{SessionId: s.ID, AgentId: s.AgentID, Path: path})
}

// CheckStale lists read files modified on disk since, with the hint for a shell command ("" = any).
func (s *Session) CheckStale(ctx context.Context, command string, startedAtMS int64) (*pb.CheckStaleResponse, error) {
	return s.c.api.CheckStale(ctx, &pb.CheckStaleRequest{
		SessionId: s.ID, AgentId: s.AgentID, Command: command, StartedAtMs: startedAtMS,
	})
}

// RecordSkill records an invoked skill; it returns how many skills the agent now holds.
func (s *Session) RecordSkill(ctx context.Context, name, path string, content []byte, invokedAtMS int64) (int32, error) {
	resp, err := s.c.api.RecordSkill(ctx, &pb.RecordSkillRequest{
		SessionId: s.ID, AgentId: s.AgentID, Name: name, Path: path, Content: content, InvokedAtMs: invokedAtMS,
	})
	return resp.GetSkills(), err
}

// SetPlan sets the agent's plan file ("" = the default, in the plans directory) and returns
// the path the daemon will use, normalised.
func (s *Session) SetPlan(ctx context.Context, planFilePath string) (string, error) {
	resp, err := s.c.api.SetPlan(ctx, &pb.SetPlanRequest{SessionId: s.ID, AgentId: s.AgentID, PlanFilePath: planFilePath})
	return resp.GetPlanFilePath(), err
}

// SetMode sets the agent's permission mode.
func (s *Session) SetMode(ctx context.Context, mode pb.PermissionMode) error {
	_, err := s.c.api.SetMode(ctx, &pb.SetModeRequest{SessionId: s.ID, AgentId: s.AgentID, Mode: mode})
	return err
}

// UpsertTask creates or updates a background task of the session.
func (s *Session) UpsertTask(ctx context.Context, task *pb.Task) error {
	_, err := s.c.api.UpsertTask(ctx, &pb.UpsertTaskRequest{SessionId: s.ID, Task: task})
	return err
}

// SetCatalog replaces the parts of the catalogue set in req (SessionId and AgentId are filled in)
// and returns the delta attachments to announce now.
func (s *Session) SetCatalog(ctx context.Context, req *pb.SetCatalogRequest) ([]*pb.Attachment, error) {
	r := &pb.SetCatalogRequest{
		SessionId: s.ID, AgentId: s.AgentID, DeferredTools: req.GetDeferredTools(),
		AgentTypes: req.GetAgentTypes(), McpServers: req.GetMcpServers(), SkillListing: req.GetSkillListing(),
	}
	resp, err := s.c.api.SetCatalog(ctx, r)
	return resp.GetAttachments(), err
}

// CompactOption tunes Compact and PreviewCompact.
type CompactOption func(*pb.CompactRequest)

// Partial makes a PARTIAL compaction: preserved stays in context.
func Partial(preserved ...*pb.ConversationMessage) CompactOption {
	return func(r *pb.CompactRequest) {
		r.Kind = pb.CompactKind_COMPACT_KIND_PARTIAL
		r.PreservedMessages = preserved
	}
}

// WithPolicy overrides restoration knobs for this compaction.
func WithPolicy(p *pb.RestorePolicy) CompactOption {
	return func(r *pb.CompactRequest) { r.Policy = p }
}

// AdditionalContext adds text to the session-start hook context.
func AdditionalContext(text ...string) CompactOption {
	return func(r *pb.CompactRequest) { r.AdditionalContext = append(r.AdditionalContext, text...) }
}

// SkipHooks skips the session-start hooks.
func SkipHooks() CompactOption { return func(r *pb.CompactRequest) { r.SkipHooks = true } }

// IncludeContent also fills the raw copies: FileAttachment.Content, PlanFileReference.PlanContent
// and InvokedSkill.Content. Without it they are empty: the same text is in each attachment's
// Blocks, so by default it crosses the socket once.
func IncludeContent() CompactOption { return func(r *pb.CompactRequest) { r.IncludeContent = true } }

// CompactResult is what a compaction restores: the attachments in injection order (each with its
// Placement and its text Blocks), a decision for every candidate file and skill, per-category
// totals, and all the attachments' blocks joined by "\n" (joined here: the daemon does not send
// it). Injection lays the text out as a harness injects it (Join).
type CompactResult struct {
	Attachments  []*pb.Attachment
	Decisions    []*pb.Decision
	Totals       []*pb.CategoryTotals
	RenderedText string // JoinRenderedText(Attachments)
	Compaction   int64  // the agent's compaction count after the call
}

// Injection returns the result's text laid out for the request: Join(r.Attachments).
func (r *CompactResult) Injection() Injection { return Join(r.Attachments) }

// Injection is where a harness puts the attachments' text, as Claude Code lays out a request.
type Injection struct {
	// UserBlocks are the text blocks of the user message after the summary, in order: the blocks
	// of every attachment not placed in the system message (a restored file is several blocks:
	// the Read call, the Read result, and a note when its text had to be escaped).
	UserBlocks []string
	// SystemText is one system message to put at the end: the sections of the system-placed
	// attachments joined by "\n\n" ("" when there is none).
	SystemText string
}

// Join lays attachments out for the request: the blocks of those whose Placement is not
// PLACEMENT_SYSTEM, in order, as the user message's text blocks, and the blocks (one section
// each) of the PLACEMENT_SYSTEM ones joined by "\n\n" as the system text. Under the default and
// claude-code-2.1.88 profiles every attachment is user-placed; under claude-code only restored
// files are. It takes a compaction's attachments or SetCatalog's deltas alike.
func Join(attachments []*pb.Attachment) Injection {
	var inj Injection
	var system []string
	for _, a := range attachments {
		if a.GetPlacement() == pb.Placement_PLACEMENT_SYSTEM {
			system = append(system, a.GetBlocks()...)
		} else {
			inj.UserBlocks = append(inj.UserBlocks, a.GetBlocks()...)
		}
	}
	inj.SystemText = strings.Join(system, "\n\n")
	return inj
}

// JoinRenderedText is all the text as one string: every attachment's blocks, in order, joined by
// "\n" (where everything is user-placed, the user message's text; Join keeps the placement).
func JoinRenderedText(attachments []*pb.Attachment) string {
	n := 0
	for _, a := range attachments {
		for _, b := range a.GetBlocks() {
			n += len(b) + 1
		}
	}
	var b strings.Builder
	b.Grow(n)
	first := true
	for _, a := range attachments {
		for _, blk := range a.GetBlocks() {
			if !first {
				b.WriteByte('\n')
			}
			first = false
			b.WriteString(blk)
		}
	}
	return b.String()
}

func newCompactResult(atts []*pb.Attachment, decisions []*pb.Decision, totals []*pb.CategoryTotals, compaction int64) *CompactResult {
	return &CompactResult{atts, decisions, totals, JoinRenderedText(atts), compaction}
}

func (s *Session) compactRequest(opts []CompactOption) *pb.CompactRequest {
	r := &pb.CompactRequest{SessionId: s.ID, AgentId: s.AgentID, Kind: pb.CompactKind_COMPACT_KIND_FULL}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Compact compacts the agent: its file state is cleared and the restoration attachments returned.
func (s *Session) Compact(ctx context.Context, opts ...CompactOption) (*CompactResult, error) {
	resp, err := s.c.api.Compact(ctx, s.compactRequest(opts))
	if err != nil {
		return nil, err
	}
	return newCompactResult(resp.GetAttachments(), resp.GetDecisions(), resp.GetTotals(), resp.GetCompaction()), nil
}

// PreviewCompact answers what Compact would, changing nothing.
func (s *Session) PreviewCompact(ctx context.Context, opts ...CompactOption) (*CompactResult, error) {
	r := s.compactRequest(opts)
	resp, err := s.c.api.PreviewCompact(ctx, &pb.PreviewCompactRequest{
		SessionId: r.SessionId, AgentId: r.AgentId, Kind: r.Kind, PreservedMessages: r.PreservedMessages,
		Policy: r.Policy, AdditionalContext: r.AdditionalContext, SkipHooks: r.SkipHooks,
		IncludeContent: r.IncludeContent,
	})
	if err != nil {
		return nil, err
	}
	return newCompactResult(resp.GetAttachments(), resp.GetDecisions(), resp.GetTotals(), resp.GetCompaction()), nil
}
