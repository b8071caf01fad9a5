package postcompact

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Environment variables read by the client (docs/clients.md).
const (
	EnvAddress = "POSTCOMPACT_ADDRESS" // unix:///path or 127.0.0.1:PORT
	EnvToken   = "POSTCOMPACT_TOKEN"   // the bearer token for a TCP daemon
	EnvBin     = "POSTCOMPACT_BIN"     // the daemon executable used by auto-start
)

// Names inside the runtime directory.
const (
	SocketName     = "daemon.sock"
	ServerJSONName = "server.json"
	TokenName      = "token"
)

// ServerJSON is the content of D/server.json, written by the serving daemon.
type ServerJSON struct {
	PID         int64   `json:"pid"`
	Version     string  `json:"version"`
	APIVersion  string  `json:"api_version"`
	Socket      string  `json:"socket"`
	Address     string  `json:"address"`
	TCPPort     int     `json:"tcp_port"`
	TokenFile   *string `json:"token_file"`
	StartedAtMS int64   `json:"started_at_ms"`
}

// Source says which rule of the address resolution chose the address.
type Source int

const (
	SourceExplicit   Source = iota + 1 // passed to the constructor
	SourceEnv                          // POSTCOMPACT_ADDRESS
	SourceServerJSON                   // D/server.json
	SourceDefault                      // unix://D/daemon.sock
)

func (s Source) String() string {
	switch s {
	case SourceExplicit:
		return "explicit"
	case SourceEnv:
		return "env"
	case SourceServerJSON:
		return "server.json"
	case SourceDefault:
		return "default"
	}
	return fmt.Sprintf("Source(%d)", int(s))
}

// Address is a resolved daemon address.
type Address struct {
	// Target is what grpc-go dials: "unix:///abs/path" or "host:port".
	Target string
	// Source is the resolution rule that produced it.
	Source Source
	// SocketPath is the Unix socket path ("" for TCP).
	SocketPath string
	// ServerJSON is the server.json read during resolution (nil when absent or unreadable).
	ServerJSON *ServerJSON
}

// IsTCP reports whether the address is a TCP one (which needs the token).
func (a Address) IsTCP() bool { return a.SocketPath == "" }

// RuntimeDir returns D: $XDG_RUNTIME_DIR/postcompact when XDG_RUNTIME_DIR is set and non-empty,
// otherwise /tmp/postcompact-<uid>.
func RuntimeDir() string {
	if xdg := os.Getenv("XDG_RUNTIME_DIR"); xdg != "" {
		return filepath.Join(xdg, "postcompact")
	}
	return fmt.Sprintf("/tmp/postcompact-%d", os.Getuid())
}

// DefaultSocketPath returns D/daemon.sock.
func DefaultSocketPath() string { return filepath.Join(RuntimeDir(), SocketName) }

// ReadServerJSON reads and parses a server.json file.
func ReadServerJSON(path string) (*ServerJSON, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var sj ServerJSON
	if err := json.Unmarshal(b, &sj); err != nil {
		return nil, fmt.Errorf("postcompact: %s: %w", path, err)
	}
	return &sj, nil
}

// ParseAddress normalises an address string: "unix:///abs", "unix:/abs", "unix:rel" and a bare
// absolute path are Unix sockets; anything else ("127.0.0.1:PORT", "localhost:PORT") is TCP.
func ParseAddress(s string) (Address, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Address{}, errors.New("postcompact: empty address")
	}
	var path string
	switch {
	case strings.HasPrefix(s, "unix://"):
		path = strings.TrimPrefix(s, "unix://")
	case strings.HasPrefix(s, "unix:"):
		path = strings.TrimPrefix(s, "unix:")
	case strings.HasPrefix(s, "/"):
		path = s
	default:
		t := strings.TrimPrefix(strings.TrimPrefix(s, "dns:///"), "tcp://")
		if !strings.Contains(t, ":") {
			return Address{}, fmt.Errorf("postcompact: address %q is neither unix:///path nor host:port", s)
		}
		return Address{Target: t}, nil
	}
	if path == "" {
		return Address{}, fmt.Errorf("postcompact: address %q has no socket path", s)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Address{}, err
	}
	return Address{Target: "unix://" + abs, SocketPath: abs}, nil
}

// ResolveAddress applies the resolution order of docs/clients.md: explicit, then
// POSTCOMPACT_ADDRESS, then `address` in D/server.json, then unix://D/daemon.sock.
func ResolveAddress(explicit string) (Address, error) {
	var sj *ServerJSON
	if got, err := ReadServerJSON(filepath.Join(RuntimeDir(), ServerJSONName)); err == nil {
		sj = got
	}
	pick := func(s string, src Source) (Address, error) {
		a, err := ParseAddress(s)
		if err != nil {
			return Address{}, err
		}
		a.Source = src
		a.ServerJSON = sj
		return a, nil
	}
	if explicit != "" {
		return pick(explicit, SourceExplicit)
	}
	if env := os.Getenv(EnvAddress); env != "" {
		return pick(env, SourceEnv)
	}
	if sj != nil && sj.Address != "" {
		return pick(sj.Address, SourceServerJSON)
	}
	return pick("unix://"+DefaultSocketPath(), SourceDefault)
}

// ReadToken returns the TCP token: POSTCOMPACT_TOKEN, else server.json's token_file, else D/token.
// sj may be nil (server.json is then read from D).
func ReadToken(sj *ServerJSON) (string, error) {
	if t := os.Getenv(EnvToken); t != "" {
		return strings.TrimSpace(t), nil
	}
	if sj == nil {
		sj, _ = ReadServerJSON(filepath.Join(RuntimeDir(), ServerJSONName))
	}
	path := filepath.Join(RuntimeDir(), TokenName)
	if sj != nil && sj.TokenFile != nil && *sj.TokenFile != "" {
		path = *sj.TokenFile
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("postcompact: no token for the TCP daemon (set %s or start it with TCP): %w", EnvToken, err)
	}
	return strings.TrimSpace(string(b)), nil
}
