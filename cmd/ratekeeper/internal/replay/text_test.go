package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// A log is untrusted input: a key taken from it (here a user name holding
// a terminal escape sequence, as a JSON log's "\u001b" decodes to) is shown
// escaped in the text report, never written raw to the terminal; the JSON
// report keeps it as it is, JSON-escaped.
func TestWriteTextEscapesKeys(t *testing.T) {
	cfg := parse(t, "policies:\n  - {name: u, limit: 1, window: 1m, key: user}\n")
	e, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const user = "\x1b]0;pwned\a\x1b[31mevil\xff"
	for i := range 2 {
		en := logparse.Entry{Time: t0.Add(time.Duration(i) * time.Second), Addr: "192.0.2.1", User: user, Method: "GET", Path: "/"}
		if err := e.Add(&en); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := e.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if p := rep.Policies[0]; len(p.Top) != 1 || p.Top[0].Key != user {
		t.Fatalf("top keys %+v, want the user's key as it is", p.Top)
	}
	var b strings.Builder
	if err := rep.WriteText(&b, Input{Entries: 2, Lines: 2}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsAny(out, "\x1b\a") || strings.Contains(out, "\xff") {
		t.Errorf("the text report writes the key's control bytes raw:\n%q", out)
	}
	if want := `most rejected keys: "\x1b]0;pwned\a\x1b[31mevil\xff" (1)`; !strings.Contains(out, want) {
		t.Errorf("the text report does not show the key escaped as %s:\n%s", want, out)
	}
	b.Reset()
	if err := rep.WriteJSON(&b, Input{Entries: 2, Lines: 2}); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\x1b\a") {
		t.Errorf("the JSON report writes control bytes raw:\n%s", b.String())
	}
}
