package replay

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestWriteTextHeader: the header of the text report. Up to four files
// are named; no span without requests; one malformed line is reported
// as any number is; the late lines are explained whole; the note that
// the policies decide together comes only with more than one.
func TestWriteTextHeader(t *testing.T) {
	text := func(rep *Report, in Input) string {
		t.Helper()
		var b strings.Builder
		if err := rep.WriteText(&b, in); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	one := &Report{Policies: []PolicyReport{{Name: "a"}}}
	out := text(one, Input{Files: []string{"a", "b", "c", "d"}, Lines: 1, Malformed: 1})
	for _, want := range []string{"replayed 0 requests from 1 line of a, b, c, d\n", "  1 malformed line (100.00%), skipped"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	for _, unwanted := range []string{" from 0001", "all or nothing"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("report of no requests and one policy has %q:\n%s", unwanted, out)
		}
	}
	two := &Report{First: t0, Last: t0, Late: 1, Reorder: time.Minute, LateMax: 2 * time.Minute, Policies: []PolicyReport{{Name: "a"}, {Name: "b"}}}
	out = text(two, Input{Files: []string{"a"}, Lines: 1, Entries: 1})
	for _, want := range []string{
		"  1 request logged out of time order by more than the reorder window (1m0s), by up to 2m0s:\n" +
			"  replayed late, after later ones, and each run of them further behind apart from the rest, as a\n" +
			"  log of its own (logs joined end to end, by cat or by zcat access.log.*.gz, whose glob puts .10\n" +
			"  before .2, are merged in time order when named each on the command line; a --reorder above 2m0s\n" +
			"  replays them in order; hours or days behind may also be a line logged far ahead, by a wrong clock)\n",
		"all or nothing",
		"\n  from 2024-01-01T00:00:00Z to 2024-01-01T00:00:00Z (0s)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// TestWriteTextOneWithoutKey: a single request without a key is reported.
func TestWriteTextOneWithoutKey(t *testing.T) {
	_, text := replayOne(t, "policies:\n  - {name: u, limit: 5, window: 1m, key: user}\n",
		logparse.Entry{Time: t0, Addr: "192.0.2.1", Method: "GET", Path: "/"})
	if !regexp.MustCompile(`(?m)^  without a key +1 +\(0 skipped, the rest rejected 400/403\)$`).MatchString(text) {
		t.Errorf("report lacks the request without a key:\n%s", text)
	}
}

// TestWriteTextPolicySections: a policy's delayed requests are reported, one alone too;
// its limits table comes when it has limits, even the configured one alone
// (every suggestion past what the store can queue), and not without.
func TestWriteTextPolicySections(t *testing.T) {
	var b strings.Builder
	rep := &Report{Policies: []PolicyReport{
		{Name: "q", Requests: 4, Delayed: 1, Limits: []Trial{{Label: "configured"}}},
		{Name: "none"},
	}}
	if err := rep.WriteText(&b, Input{Files: []string{"a"}, Lines: 4, Entries: 4}); err != nil {
		t.Fatal(err)
	}
	q, none, _ := strings.Cut(b.String(), "policy none")
	if !regexp.MustCompile(`(?m)^  delayed +1$`).MatchString(q) || !strings.Contains(q, "limits, this policy alone") || !strings.Contains(q, "configured") {
		t.Errorf("policy q lacks its delayed requests or its limits:\n%s", q)
	}
	if strings.Contains(none, "limits") || strings.Contains(none, "delayed") || strings.Contains(none, "without a key") {
		t.Errorf("policy none, with no limits, nothing delayed and every request keyed, shows them:\n%s", none)
	}
}
