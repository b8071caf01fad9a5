package postcompact

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"testing"

	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
)

// Printing a client object shows no secret (issue 35): every public object printed every way
// fmt prints, with a fake secret in the environment and two TCP tokens (one given, one from
// POSTCOMPACT_TOKEN, each read by a call first), shows neither the tokens nor any value of the
// environment, and does show the address and the session and agent ids.
func TestPrintingShowsNoSecret(t *testing.T) {
	const (
		secret     = "sk-env-secret-3f9a1c"
		givenToken = "tcp-token-given-7b2e"
		envToken   = "tcp-token-from-env-91d4"
		address    = "127.0.0.1:1" // nothing listens there: a call fails at once
	)
	t.Setenv("SECRET_TOKEN", secret)
	t.Setenv(EnvToken, envToken)
	given, err := New(WithAddress(address), WithToken(givenToken), WithRetry(NoRetry()))
	if err != nil {
		t.Fatal(err)
	}
	defer given.Close()
	fromEnv, err := New(WithAddress(address), WithRetry(NoRetry()))
	if err != nil {
		t.Fatal(err)
	}
	defer fromEnv.Close()
	var callErr error
	for _, c := range []*Client{given, fromEnv} {
		if _, callErr = c.GetStats(context.Background(), &pb.GetStatsRequest{}); callErr == nil {
			t.Fatal("a call to 127.0.0.1:1 succeeded")
		}
	}
	if tok, _ := fromEnv.bearer(); tok != envToken {
		t.Fatalf("the client did not read the token from the environment: %q", tok)
	}
	session := given.Session("ses-print-1").Agent("agent-print-a")
	objects := []struct {
		what  string
		x     any
		shown []string
	}{
		{"client (token given)", given, []string{address}},
		{"client (token from the environment)", fromEnv, []string{address}},
		{"session", session, []string{"ses-print-1", "agent-print-a", address}},
		{"session value", *session, []string{"ses-print-1", "agent-print-a"}},
		{"address", given.Address(), []string{address}},
		{"the call's error", callErr, []string{"Unavailable"}},
	}
	var env []string
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if len(v) >= 8 && k != "PWD" && k != "OLDPWD" {
			env = append(env, v)
		}
	}
	for _, o := range objects {
		var logged strings.Builder
		log.New(&logged, "", 0).Print(o.x)
		texts := []string{
			fmt.Sprintf("%v", o.x), fmt.Sprintf("%+v", o.x), fmt.Sprintf("%#v", o.x),
			fmt.Sprintf("%s", o.x), fmt.Sprintf("%q", o.x), fmt.Sprint(o.x), fmt.Sprintln(o.x),
			logged.String(),
		}
		for _, text := range texts {
			for _, s := range []string{secret, givenToken, envToken} {
				if strings.Contains(text, s) {
					t.Errorf("%s prints a secret: %s", o.what, text)
				}
			}
			for _, v := range env {
				if strings.Contains(text, v) {
					t.Errorf("%s prints the environment (%q): %s", o.what, v, text)
				}
			}
		}
		for _, field := range o.shown {
			if s := fmt.Sprintf("%+v", o.x); !strings.Contains(s, field) {
				t.Errorf("%s does not show %s: %s", o.what, field, s)
			}
		}
	}
	if got, want := fmt.Sprintf("%+v", given), `postcompact.Client{Address: "127.0.0.1:1", Source: explicit, AutoStart: false}`; got != want {
		t.Errorf("client printed %s, want %s", got, want)
	}
	if got, want := fmt.Sprintf("%v", session), `postcompact.Session{ID: "ses-print-1", AgentID: "agent-print-a", Resumed: false, Address: "127.0.0.1:1"}`; got != want {
		t.Errorf("session printed %s, want %s", got, want)
	}
}
