package postcompact

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// DaemonCommand returns the argv auto-start runs: the configured command (WithDaemonCommand), else
// WithDaemonBin, else POSTCOMPACT_BIN, else `postcompact` on PATH; then `serve`, then `--socket
// PATH` when the client's Unix socket is not the default one, then WithServeArgs.
func (c *Client) DaemonCommand() ([]string, error) {
	var argv []string
	switch {
	case len(c.opts.command) > 0:
		argv = append(argv, c.opts.command...)
	case c.opts.bin != "":
		argv = append(argv, c.opts.bin)
	case os.Getenv(EnvBin) != "":
		argv = append(argv, os.Getenv(EnvBin))
	default:
		p, err := exec.LookPath("postcompact")
		if err != nil {
			return nil, fmt.Errorf("postcompact: cannot auto-start the daemon: %s is unset and `postcompact` is not on PATH", EnvBin)
		}
		argv = append(argv, p)
	}
	argv = append(argv, "serve")
	if c.addr.SocketPath != "" && filepath.Clean(c.addr.SocketPath) != filepath.Clean(DefaultSocketPath()) {
		argv = append(argv, "--socket", c.addr.SocketPath)
	}
	return append(argv, c.opts.serveArgs...), nil
}

// spawn starts the daemon detached (its own session, stdio on /dev/null). The returned channel
// receives the exit status if the process ends while this client lives.
func (c *Client) spawn() (<-chan error, error) {
	argv, err := c.DaemonCommand()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// Stdin, Stdout and Stderr left nil are connected to /dev/null by os/exec.
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("postcompact: cannot start %q: %w", argv, err)
	}
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait() // reap it if it dies while we live
		if err == nil {
			err = fmt.Errorf("%q exited with status 0", argv)
		} else {
			err = fmt.Errorf("%q: %w", argv, err)
		}
		exited <- err
	}()
	return exited, nil
}
