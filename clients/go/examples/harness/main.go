// Command harness is a tiny agent harness on the postcompact Go client: it reads a few files
// through the daemon (as an agent's Read tool would), compacts, and prints what it would inject
// into the fresh context after the summary (postcompact.Join: the user message's text blocks and
// the system message).
//
//	go run ./examples/harness [-addr unix:///path] [-cwd DIR] [FILE...]
//
// With no files it reads up to four files of DIR (default: the current directory).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	postcompact "github.com/postcompact/postcompact/clients/go"
	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
)

func main() {
	addr := flag.String("addr", "", "daemon address (default: POSTCOMPACT_ADDRESS, server.json, the default socket)")
	cwd := flag.String("cwd", ".", "project directory")
	noStart := flag.Bool("no-start", false, "do not start the daemon when it is absent")
	flag.Parse()
	if err := run(*addr, *cwd, !*noStart, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(1)
	}
}

func run(addr, cwd string, autoStart bool, files []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	root, err := filepath.Abs(cwd)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		files = firstFiles(root, 4)
	}

	opts := []postcompact.Option{postcompact.WithAutoStart(autoStart)}
	if addr != "" {
		opts = append(opts, postcompact.WithAddress(addr))
	}
	c, err := postcompact.New(opts...)
	if err != nil {
		return err
	}
	defer c.Close()

	s, err := c.OpenSession(ctx, &pb.OpenSessionRequest{Cwd: root})
	if err != nil {
		return err
	}
	defer s.Close(context.Background())
	fmt.Printf("session %s on %s\n", s.ID, c.Address().Target)

	for _, f := range files {
		r, err := s.ReadFile(ctx, f)
		if err != nil {
			fmt.Printf("  read %-40s %s (reason %q)\n", f, postcompact.CodeOf(err), postcompact.ReasonOf(err))
			continue
		}
		fmt.Printf("  read %-40s %d lines, ~%d tokens\n", f, r.GetNumLines(), r.GetTokens())
	}

	res, err := s.Compact(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("\ncompaction #%d: %d attachments\n", res.Compaction, len(res.Attachments))
	for _, d := range res.Decisions {
		fmt.Printf("  %-13s %-40s %-26s rank %d, %d tokens %s\n", d.GetSubject(), rel(root, d.GetName()),
			d.GetOutcome(), d.GetRank(), d.GetTokens(), d.GetDetail())
	}
	fmt.Println("\nattachments, in injection order:")
	for _, a := range res.Attachments {
		fmt.Printf("  %-40s %-16s %d block(s), ~%d tokens\n", a.GetKind(), a.GetPlacement(), len(a.GetBlocks()), a.GetTokens())
	}

	// Join lays the text out as the request carries it: the user-placed blocks are the text
	// blocks of the user message after the summary; the system-placed sections form one system
	// message at the end.
	inj := res.Injection() // = postcompact.Join(res.Attachments)
	fmt.Printf("\n--- the user message after the summary: %d text block(s) ---\n", len(inj.UserBlocks))
	for i, b := range inj.UserBlocks {
		fmt.Printf("[block %d]\n%s\n", i+1, b)
	}
	if inj.SystemText != "" {
		fmt.Println("\n--- the system message at the end ---")
		fmt.Println(inj.SystemText)
	}
	return nil
}

// firstFiles lists up to n regular files of dir (not recursive, no dot files).
func firstFiles(dir string, n int) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && e.Name()[0] != '.' && len(out) < n {
			out = append(out, e.Name())
		}
	}
	return out
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && filepath.IsAbs(p) && len(r) < len(p) && r[0] != '.' {
		return r
	}
	return p
}
