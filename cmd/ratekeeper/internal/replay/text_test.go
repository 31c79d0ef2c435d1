package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
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

// TestWriteTextOneKeyNote: when one key holds most of a policy's
// rejections, and a suggested limit is above the configured one, the text
// report says that the suggestions make room for that key (the percentiles
// count its windows): a password guesser busy for an hour pulled a login
// limit of 5 up to suggestions of 20 to 48 on the sample logs, and the
// report let a user raise it. Rejections spread over many keys, or
// suggestions no higher than the limit, get no note.
func TestWriteTextOneKeyNote(t *testing.T) {
	const note = "  note: 203.0.113.66 has 187 of this policy's 187 rejections: the suggested limits make room for it (the percentiles count each window of it); if it is abuse, keep the limit\n"
	limits := func(suggested ...int64) []Trial {
		out := []Trial{{Label: "configured", Spec: algorithms.Spec{Limit: 5}, Rejected: 187}}
		for _, l := range suggested {
			out = append(out, Trial{Label: "P95 x 1.2", Spec: algorithms.Spec{Limit: l}, Rejected: max(0, 187-10*(l-5))})
		}
		return out
	}
	for _, c := range []struct {
		name     string
		keys     int
		top      []KeyCount
		rejected int64
		limits   []Trial
		want     bool
	}{
		{"one key of 61, suggestions above", 61, []KeyCount{{"203.0.113.66", 187}}, 187, limits(20, 24, 48), true},
		{"one key of 61, no suggestion above", 61, []KeyCount{{"203.0.113.66", 187}}, 187, limits(3, 4, 5), false},
		{"the only key", 1, []KeyCount{{"203.0.113.66", 187}}, 187, limits(20, 24, 48), false},
		{"half of the rejections", 61, []KeyCount{{"203.0.113.66", 187}, {"192.0.2.1", 187}}, 374, limits(20), false},
		{"no rejection", 61, nil, 0, limits(20), false},
	} {
		p := PolicyReport{Name: "login", Rejected: c.rejected, Top: c.top, Limits: c.limits}
		p.Rates.Keys = c.keys
		var b strings.Builder
		p.writeText(&b)
		if got := strings.Contains(b.String(), "  note: "); got != c.want {
			t.Errorf("%s: a note %v, want %v:\n%s", c.name, got, c.want, b.String())
		}
		if c.want && !strings.Contains(b.String(), note) {
			t.Errorf("%s: the note is not\n%s\nreport:\n%s", c.name, note, b.String())
		}
	}
}
