package postcompact_test

// ListSessions is paged (100 a page by default): ListSessions walks every page, ListSessionsPage
// returns one, against the real daemon.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
)

func TestListSessionsPages(t *testing.T) {
	repo := repoRoot(t)
	d, c := startDaemon(t, repo)
	project := filepath.Join(filepath.Dir(d.socket), "project")
	if err := os.MkdirAll(project, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 130 // more than the daemon's default page of 100
	var want []string
	for i := range n {
		id := fmt.Sprintf("page-%03d", n-1-i) // opened out of order: the list sorts them
		if _, err := c.OpenSession(ctx, &pb.OpenSessionRequest{SessionId: id, Cwd: project}); err != nil {
			t.Fatal(err)
		}
		want = append(want, id)
	}
	slices.Sort(want)
	ids := func(infos []*pb.SessionInfo) []string {
		out := make([]string, 0, len(infos))
		for _, s := range infos {
			out = append(out, s.GetSessionId())
		}
		return out
	}

	all, err := c.ListSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(all); !slices.Equal(got, want) {
		t.Fatalf("ListSessions: %d sessions %v, want %d in id order", len(got), got, n)
	}

	first, err := c.ListSessionsPage(ctx, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(first.GetSessions()); !slices.Equal(got, want[:100]) || first.GetNextPageToken() == "" ||
		first.GetTotalSessions() != n {
		t.Fatalf("the default page: %d sessions, next %q, total %d", len(got), first.GetNextPageToken(), first.GetTotalSessions())
	}

	var sizes []int
	var walked []string
	token := ""
	for {
		page, err := c.ListSessionsPage(ctx, 50, token)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(page.GetSessions()))
		walked = append(walked, ids(page.GetSessions())...)
		if token = page.GetNextPageToken(); token == "" {
			break
		}
	}
	if !slices.Equal(sizes, []int{50, 50, 30}) || !slices.Equal(walked, want) {
		t.Fatalf("pages of 50: sizes %v, %d sessions", sizes, len(walked))
	}
}
