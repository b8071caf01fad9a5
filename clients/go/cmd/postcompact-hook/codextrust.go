package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"time"
)

// Codex runs a hook only once it is trusted: its current hash recorded as trusted_hash under
// [hooks.state."<key>"] in the user's config.toml (Codex's review UI, /hooks, writes it). The
// hash is Codex's own (of the hook's normalized definition and of the plugin's content), so
// `postcompact-hook --codex-trust` asks Codex for it rather than computing it: it runs
// `codex app-server` (CODEX_BIN names another executable than `codex` on PATH), lists the hooks
// (`hooks/list`), and has Codex write the trusted hashes of this plugin's hooks, and only those
// (`config/batchWrite`), then lists them again to check. Run it after `codex plugin add`, and
// again after the plugin changes (a rebuilt hook, a new version): Codex then sees a changed hash
// and runs none of the changed hooks until trusted again.

// CodexPluginID is the plugin as Codex names it (plugin@marketplace).
const CodexPluginID = "postcompact@postcompact"

type codexHook struct {
	Key         string `json:"key"`
	EventName   string `json:"eventName"`
	HandlerType string `json:"handlerType"`
	Command     string `json:"command"`
	PluginID    string `json:"pluginId"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"`
}

// appServer is a `codex app-server` on stdio: one JSON-RPC message a line.
type appServer struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	next int
}

func startAppServer(ctx context.Context) (*appServer, error) {
	bin := os.Getenv("CODEX_BIN")
	if bin == "" {
		p, err := exec.LookPath("codex")
		if err != nil {
			return nil, errors.New("no `codex` on PATH (CODEX_BIN names its executable)")
		}
		bin = p
	}
	cmd := exec.CommandContext(ctx, bin, "app-server")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting `%s app-server`: %w", bin, err)
	}
	return &appServer{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}, nil
}

func (a *appServer) close() {
	a.in.Close()
	done := make(chan struct{})
	go func() { a.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		a.cmd.Process.Kill()
		<-done
	}
}

func (a *appServer) send(msg map[string]any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = a.in.Write(append(b, '\n'))
	return err
}

// call sends a request and returns its result (notifications in between are skipped).
func (a *appServer) call(method string, params any, result any) error {
	a.next++
	id := a.next
	if err := a.send(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		return err
	}
	for {
		line, err := a.out.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("%s: codex app-server ended: %w", method, err)
		}
		var msg struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(line, &msg) != nil || msg.ID == nil || *msg.ID != id || msg.Method != "" {
			continue
		}
		if msg.Error != nil {
			return fmt.Errorf("%s: %s", method, msg.Error.Message)
		}
		return json.Unmarshal(msg.Result, result)
	}
}

// pluginHooks lists the plugin's command hooks as Codex sees them from cwd.
func (a *appServer) pluginHooks(cwd string) ([]codexHook, error) {
	var res struct {
		Data []struct {
			Hooks []codexHook `json:"hooks"`
		} `json:"data"`
	}
	if err := a.call("hooks/list", map[string]any{"cwds": []string{cwd}}, &res); err != nil {
		return nil, err
	}
	var out []codexHook
	seen := map[string]bool{}
	for _, d := range res.Data {
		for _, h := range d.Hooks {
			if h.PluginID == CodexPluginID && h.HandlerType == "command" && !seen[h.Key] {
				seen[h.Key] = true
				out = append(out, h)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// CodexTrust trusts the plugin's hooks in Codex's config.toml; 0 when every one is trusted.
func CodexTrust(stdout, stderr io.Writer) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "postcompact-hook --codex-trust: "+format+"\n", args...)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := startAppServer(ctx)
	if err != nil {
		return fail("%v", err)
	}
	defer a.close()
	var init struct {
		CodexHome string `json:"codexHome"`
	}
	info := map[string]any{"clientInfo": map[string]any{"name": "postcompact-hook", "version": "0.1.0"}}
	if err := a.call("initialize", info, &init); err != nil {
		return fail("%v", err)
	}
	if err := a.send(map[string]any{"method": "initialized"}); err != nil {
		return fail("%v", err)
	}
	cwd, _ := os.Getwd()
	hooks, err := a.pluginHooks(cwd)
	if err != nil {
		return fail("%v", err)
	}
	if len(hooks) == 0 {
		return fail("Codex lists no hook of %s: install the plugin first (`codex plugin marketplace add "+
			"./clients/claude-code`, `codex plugin add %s`)", CodexPluginID, CodexPluginID)
	}
	state := map[string]any{}
	for _, h := range hooks {
		if h.TrustStatus != "trusted" {
			state[h.Key] = map[string]any{"trusted_hash": h.CurrentHash}
		}
	}
	if len(state) > 0 {
		var res struct {
			FilePath string `json:"filePath"`
		}
		edit := map[string]any{"keyPath": "hooks.state", "mergeStrategy": "upsert", "value": state}
		if err := a.call("config/batchWrite", map[string]any{"edits": []any{edit}}, &res); err != nil {
			return fail("%v", err)
		}
	}
	hooks, err = a.pluginHooks(cwd)
	if err != nil {
		return fail("%v", err)
	}
	bad := 0
	for _, h := range hooks {
		fmt.Fprintf(stdout, "%s %s\n", h.TrustStatus, h.Key)
		if h.TrustStatus != "trusted" {
			bad++
		}
	}
	if bad > 0 {
		return fail("%d of the plugin's %d hooks are not trusted", bad, len(hooks))
	}
	fmt.Fprintf(stdout, "postcompact: Codex trusts the %d hooks of %s (%s/config.toml; %d newly)\n",
		len(hooks), CodexPluginID, init.CodexHome, len(state))
	return 0
}
