package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestWriteTextSpanKeepsFractions: JSON lines carry times finer than a
// second, and the text report's span showed them cut to the second: a
// replay of requests at 12:00:00.25 and 12:00:00.75 read "from
// 2024-01-01T00:00:00Z to 2024-01-01T00:00:00Z (500ms)". The ends are
// shown to the fraction the log gives (none for whole seconds).
func TestWriteTextSpanKeepsFractions(t *testing.T) {
	cfg := parse(t, "policies:\n  - {name: p, limit: 5, window: 1m}\n")
	for _, tc := range []struct {
		at   []time.Duration
		want string
	}{
		{[]time.Duration{250 * time.Millisecond, 750 * time.Millisecond}, "from 2024-01-01T00:00:00.25Z to 2024-01-01T00:00:00.75Z (500ms)"},
		{[]time.Duration{0, 2 * time.Second}, "from 2024-01-01T00:00:00Z to 2024-01-01T00:00:02Z (2s)"},
	} {
		e, err := New(cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range tc.at {
			en := logparse.Entry{Time: t0.Add(d), Addr: "192.0.2.1", Method: "GET", Path: "/"}
			if err := e.Add(&en); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := e.Finish()
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := rep.WriteText(&b, Input{Entries: 2, Lines: 2}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("report:\n%s\nwant a line holding %q", b.String(), tc.want)
		}
	}
}
