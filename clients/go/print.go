package postcompact

import (
	"fmt"
	"io"
)

// Printing a Client or a Session — fmt's %v, %+v, %#v, %s, %q, log.Print — shows the daemon's
// address, where it came from and the session's ids: never the TCP token, the options that hold
// it, nor anything of the environment (docs/clients.md, "Printing a client").

// String describes the client: its address, the address's source and whether it auto-starts.
func (c *Client) String() string {
	if c == nil {
		return "postcompact.Client(nil)"
	}
	return fmt.Sprintf("postcompact.Client{Address: %q, Source: %s, AutoStart: %t}", c.addr.Target, c.addr.Source, c.auto)
}

// GoString is what %#v prints: the same as String.
func (c *Client) GoString() string { return c.String() }

// Format prints String for every verb (quoted for %q), so that %+v shows no field of the client.
func (c *Client) Format(f fmt.State, verb rune) { printAs(f, verb, c.String()) }

// String describes the session: its id, the agent's and the daemon's address.
func (s Session) String() string {
	address := ""
	if s.c != nil {
		address = s.c.addr.Target
	}
	return fmt.Sprintf("postcompact.Session{ID: %q, AgentID: %q, Resumed: %t, Address: %q}", s.ID, s.AgentID, s.Resumed, address)
}

// GoString is what %#v prints: the same as String.
func (s Session) GoString() string { return s.String() }

// Format prints String for every verb (quoted for %q).
func (s Session) Format(f fmt.State, verb rune) { printAs(f, verb, s.String()) }

func printAs(f fmt.State, verb rune, text string) {
	if verb == 'q' {
		fmt.Fprintf(f, "%q", text)
		return
	}
	_, _ = io.WriteString(f, text)
}
