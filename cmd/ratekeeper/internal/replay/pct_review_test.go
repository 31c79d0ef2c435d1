package replay

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestPercentagesNeverRoundToNoneOrAll: a share of some but not all
// requests never reads 0.00% or 100.00% in the text report, whose
// percentages have two decimals: 1 rejection of 20,001 requests read
// "1 0.00%", as if nothing were rejected, and 20,000 of them "100.00%",
// as if all were. They read "<0.01%" and ">99.99%"; none and all still
// read 0.00% and 100.00%.
func TestPercentagesNeverRoundToNoneOrAll(t *testing.T) {
	const n = 20001
	for _, c := range []struct {
		limit int
		want  []string // regular expressions
	}{
		{n - 1, []string{`1 rejected by a limit \(<0\.01%\)`, `\n  rejected +1 +<0\.01%\n`, `\n +configured +20000 +1 +<0\.01% *\n`}},
		{1, []string{`20000 rejected by a limit \(>99\.99%\)`, `\n  rejected +20000 +>99\.99%\n`, `\n +configured +1 +20000 +>99\.99% *\n`}},
		{n, []string{`0 rejected by a limit \(0\.00%\)`, `\n  rejected +0 +0\.00%\n`}},
	} {
		doc := "policies:\n  - {name: p, limit: " + itoa(c.limit) + ", window: 1h, algorithm: fixed_window}\n"
		var entries []logparse.Entry
		for i := range n {
			entries = append(entries, logparse.Entry{Time: t0.Add(time.Duration(i) * time.Millisecond), Addr: "192.0.2.1", Method: "GET", Path: "/"})
		}
		rep := replayEntries(t, doc, Options{}, entries)
		var b strings.Builder
		if err := rep.WriteText(&b, Input{Files: []string{"a.log"}, Lines: n, Entries: n}); err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !regexp.MustCompile(w).MatchString(b.String()) {
				t.Errorf("limit %d: the report does not match %q:\n%s", c.limit, w, b.String())
			}
		}
	}
}

func itoa(n int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		if n /= 10; n == 0 {
			return string(b)
		}
	}
}
