package postcompact

// Every RPC of postcompact.v1 on *Client, with the generated request and response messages
// (OpenSession, which returns a *Session, and ImportTranscript, which takes the transcript and
// ImportOptions, are in session.go; c.API().OpenSession and c.API().ImportTranscript are the raw
// ones). ListSessions is paged: ListSessions walks the pages, ListSessionsPage gets one.

import (
	"context"

	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
	"google.golang.org/grpc"
)

// GetServerInfo calls postcompact.v1.PostcompactService/GetServerInfo.
func (c *Client) GetServerInfo(ctx context.Context, req *pb.GetServerInfoRequest, opts ...grpc.CallOption) (*pb.GetServerInfoResponse, error) {
	return c.api.GetServerInfo(ctx, req, opts...)
}

// GetStats calls postcompact.v1.PostcompactService/GetStats: the daemon's counters (the
// sessions themselves are ListSessions').
func (c *Client) GetStats(ctx context.Context, req *pb.GetStatsRequest, opts ...grpc.CallOption) (*pb.GetStatsResponse, error) {
	return c.api.GetStats(ctx, req, opts...)
}

// CloseSession calls postcompact.v1.PostcompactService/CloseSession.
func (c *Client) CloseSession(ctx context.Context, req *pb.CloseSessionRequest, opts ...grpc.CallOption) (*pb.CloseSessionResponse, error) {
	return c.api.CloseSession(ctx, req, opts...)
}

// ListSessions returns every session, in session-id order: it walks all the pages of
// postcompact.v1.PostcompactService/ListSessions (ListSessionsPage gets one).
func (c *Client) ListSessions(ctx context.Context, opts ...grpc.CallOption) ([]*pb.SessionInfo, error) {
	var out []*pb.SessionInfo
	token := ""
	for {
		page, err := c.ListSessionsPage(ctx, 0, token, opts...)
		if err != nil {
			return nil, err
		}
		out = append(out, page.GetSessions()...)
		if token = page.GetNextPageToken(); token == "" {
			return out, nil
		}
	}
}

// ListSessionsPage calls postcompact.v1.PostcompactService/ListSessions for one page: at most
// pageSize sessions (0: the daemon's default, 100; at most 1,000) from pageToken ("" for the
// first page, else the previous page's NextPageToken, which is "" on the last page).
func (c *Client) ListSessionsPage(ctx context.Context, pageSize int32, pageToken string, opts ...grpc.CallOption) (*pb.ListSessionsResponse, error) {
	return c.api.ListSessions(ctx, &pb.ListSessionsRequest{PageSize: pageSize, PageToken: pageToken}, opts...)
}

// StartAgent calls postcompact.v1.PostcompactService/StartAgent.
func (c *Client) StartAgent(ctx context.Context, req *pb.StartAgentRequest, opts ...grpc.CallOption) (*pb.StartAgentResponse, error) {
	return c.api.StartAgent(ctx, req, opts...)
}

// EndAgent calls postcompact.v1.PostcompactService/EndAgent.
func (c *Client) EndAgent(ctx context.Context, req *pb.EndAgentRequest, opts ...grpc.CallOption) (*pb.EndAgentResponse, error) {
	return c.api.EndAgent(ctx, req, opts...)
}

// MergeFileState calls postcompact.v1.PostcompactService/MergeFileState.
func (c *Client) MergeFileState(ctx context.Context, req *pb.MergeFileStateRequest, opts ...grpc.CallOption) (*pb.MergeFileStateResponse, error) {
	return c.api.MergeFileState(ctx, req, opts...)
}

// ReadFile calls postcompact.v1.PostcompactService/ReadFile.
func (c *Client) ReadFile(ctx context.Context, req *pb.ReadFileRequest, opts ...grpc.CallOption) (*pb.ReadFileResponse, error) {
	return c.api.ReadFile(ctx, req, opts...)
}

// RecordRead calls postcompact.v1.PostcompactService/RecordRead.
func (c *Client) RecordRead(ctx context.Context, req *pb.RecordReadRequest, opts ...grpc.CallOption) (*pb.RecordReadResponse, error) {
	return c.api.RecordRead(ctx, req, opts...)
}

// RecordWrite calls postcompact.v1.PostcompactService/RecordWrite.
func (c *Client) RecordWrite(ctx context.Context, req *pb.RecordWriteRequest, opts ...grpc.CallOption) (*pb.RecordWriteResponse, error) {
	return c.api.RecordWrite(ctx, req, opts...)
}

// CheckWrite calls postcompact.v1.PostcompactService/CheckWrite.
func (c *Client) CheckWrite(ctx context.Context, req *pb.CheckWriteRequest, opts ...grpc.CallOption) (*pb.CheckWriteResponse, error) {
	return c.api.CheckWrite(ctx, req, opts...)
}

// CheckStale calls postcompact.v1.PostcompactService/CheckStale.
func (c *Client) CheckStale(ctx context.Context, req *pb.CheckStaleRequest, opts ...grpc.CallOption) (*pb.CheckStaleResponse, error) {
	return c.api.CheckStale(ctx, req, opts...)
}

// RecordSkill calls postcompact.v1.PostcompactService/RecordSkill.
func (c *Client) RecordSkill(ctx context.Context, req *pb.RecordSkillRequest, opts ...grpc.CallOption) (*pb.RecordSkillResponse, error) {
	return c.api.RecordSkill(ctx, req, opts...)
}

// SetPlan calls postcompact.v1.PostcompactService/SetPlan.
func (c *Client) SetPlan(ctx context.Context, req *pb.SetPlanRequest, opts ...grpc.CallOption) (*pb.SetPlanResponse, error) {
	return c.api.SetPlan(ctx, req, opts...)
}

// SetMode calls postcompact.v1.PostcompactService/SetMode.
func (c *Client) SetMode(ctx context.Context, req *pb.SetModeRequest, opts ...grpc.CallOption) (*pb.SetModeResponse, error) {
	return c.api.SetMode(ctx, req, opts...)
}

// UpsertTask calls postcompact.v1.PostcompactService/UpsertTask.
func (c *Client) UpsertTask(ctx context.Context, req *pb.UpsertTaskRequest, opts ...grpc.CallOption) (*pb.UpsertTaskResponse, error) {
	return c.api.UpsertTask(ctx, req, opts...)
}

// SetCatalog calls postcompact.v1.PostcompactService/SetCatalog.
func (c *Client) SetCatalog(ctx context.Context, req *pb.SetCatalogRequest, opts ...grpc.CallOption) (*pb.SetCatalogResponse, error) {
	return c.api.SetCatalog(ctx, req, opts...)
}

// Compact calls postcompact.v1.PostcompactService/Compact.
func (c *Client) Compact(ctx context.Context, req *pb.CompactRequest, opts ...grpc.CallOption) (*pb.CompactResponse, error) {
	return c.api.Compact(ctx, req, opts...)
}

// PreviewCompact calls postcompact.v1.PostcompactService/PreviewCompact.
func (c *Client) PreviewCompact(ctx context.Context, req *pb.PreviewCompactRequest, opts ...grpc.CallOption) (*pb.PreviewCompactResponse, error) {
	return c.api.PreviewCompact(ctx, req, opts...)
}

// EstimateTokens calls postcompact.v1.PostcompactService/EstimateTokens.
func (c *Client) EstimateTokens(ctx context.Context, req *pb.EstimateTokensRequest, opts ...grpc.CallOption) (*pb.EstimateTokensResponse, error) {
	return c.api.EstimateTokens(ctx, req, opts...)
}

// EstimateTokensBatch calls postcompact.v1.PostcompactService/EstimateTokensBatch.
func (c *Client) EstimateTokensBatch(ctx context.Context, req *pb.EstimateTokensBatchRequest, opts ...grpc.CallOption) (*pb.EstimateTokensBatchResponse, error) {
	return c.api.EstimateTokensBatch(ctx, req, opts...)
}

// CountTokens calls postcompact.v1.PostcompactService/CountTokens.
func (c *Client) CountTokens(ctx context.Context, req *pb.CountTokensRequest, opts ...grpc.CallOption) (*pb.CountTokensResponse, error) {
	return c.api.CountTokens(ctx, req, opts...)
}

// CountTokensBatch calls postcompact.v1.PostcompactService/CountTokensBatch.
func (c *Client) CountTokensBatch(ctx context.Context, req *pb.CountTokensBatchRequest, opts ...grpc.CallOption) (*pb.CountTokensBatchResponse, error) {
	return c.api.CountTokensBatch(ctx, req, opts...)
}

// TruncateTokens calls postcompact.v1.PostcompactService/TruncateTokens.
func (c *Client) TruncateTokens(ctx context.Context, req *pb.TruncateTokensRequest, opts ...grpc.CallOption) (*pb.TruncateTokensResponse, error) {
	return c.api.TruncateTokens(ctx, req, opts...)
}

// TruncateTokensBatch calls postcompact.v1.PostcompactService/TruncateTokensBatch.
func (c *Client) TruncateTokensBatch(ctx context.Context, req *pb.TruncateTokensBatchRequest, opts ...grpc.CallOption) (*pb.TruncateTokensBatchResponse, error) {
	return c.api.TruncateTokensBatch(ctx, req, opts...)
}
