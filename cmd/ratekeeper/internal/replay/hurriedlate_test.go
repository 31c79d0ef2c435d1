package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestHurriedLateLinesNotBlamedOnReorder: lines replayed late because the
// window was narrowed by MaxHeld, though within --reorder, are not
// reported as further out of order than the reorder window, nor is a
// wider --reorder advised for them: it would change nothing. The report
// said "logged out of time order by more than the reorder window (1m0s),
// by up to 5s ... a --reorder above 5s replays them in order".
func TestHurriedLateLinesNotBlamedOnReorder(t *testing.T) {
	const doc = "policies:\n  - {name: p, limit: 3, window: 1m, algorithm: sliding_log}\n"
	var entries []logparse.Entry
	for i := range 200 { // 200 lines within 10 s: MaxHeld 50 hurries them
		entries = append(entries, logparse.Entry{Time: t0.Add(time.Duration(i) * 50 * time.Millisecond), Addr: "192.0.2.1", Method: "GET", Path: "/"})
	}
	// A line 5 s behind the newest, well within the minute of --reorder,
	// but behind the lines hurried.
	entries = append(entries, logparse.Entry{Time: entries[len(entries)-1].Time.Add(-5 * time.Second), Addr: "192.0.2.2", Method: "GET", Path: "/"})
	rep := replayEntries(t, doc, Options{MaxHeld: 50}, entries)
	if rep.Hurried == 0 || rep.Late == 0 || rep.LateMax > rep.Reorder {
		t.Fatalf("hurried %d, late %d, late by up to %v; want some hurried and some late, by less than %v", rep.Hurried, rep.Late, rep.LateMax, rep.Reorder)
	}
	var b strings.Builder
	if err := rep.WriteText(&b, Input{Files: []string{"a.log"}, Lines: int64(len(entries)), Entries: int64(len(entries))}); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, wrong := range []string{"by more than the reorder window", "a --reorder above"} {
		if strings.Contains(text, wrong) {
			t.Errorf("the report says %q of lines late by at most %v, within --reorder %v:\n%s", wrong, rep.LateMax, rep.Reorder, text)
		}
	}
	if !strings.Contains(text, "replayed late") {
		t.Errorf("the report does not say the late lines were replayed late:\n%s", text)
	}
}
