package replay

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestReorderHoldsAtMostMaxHeld: a flood of lines within the reorder
// window (a minute of 17,000 requests a second; a log of one busy second
// is the same with whole-second times) is held up to Options.MaxHeld
// lines; past it the oldest is replayed early, counted in Report.Hurried
// with the narrowest window it left. Every line of the window was held:
// memory grew with the flood, without bound.
func TestReorderHoldsAtMostMaxHeld(t *testing.T) {
	const doc = "policies:\n  - {name: p, limit: 3, window: 1m, algorithm: sliding_log}\n"
	const lines, maxHeld = 1000, 100
	e, err := New(parse(t, doc), Options{MaxHeld: maxHeld})
	if err != nil {
		t.Fatal(err)
	}
	most := 0
	for i := range lines {
		// 500 lines in one second, then 500 in the next.
		at := t0.Add(time.Duration(i/500) * time.Second)
		en := logparse.Entry{Time: at, Addr: "192.0.2.1", Method: "GET", Path: "/"}
		if err := e.Add(&en); err != nil {
			t.Fatal(err)
		}
		most = max(most, e.nHeld())
	}
	if most > maxHeld {
		t.Errorf("held up to %d lines at once, want at most MaxHeld %d", most, maxHeld)
	}
	rep, err := e.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != lines {
		t.Errorf("Requests = %d, want %d (every line replayed)", rep.Requests, lines)
	}
	if rep.Hurried != lines-maxHeld {
		t.Errorf("Hurried = %d, want %d (every line past the first MaxHeld pushed one out)", rep.Hurried, lines-maxHeld)
	}
	if rep.HurriedWindow != 0 {
		t.Errorf("HurriedWindow = %v, want 0 (lines of the newest second replayed early)", rep.HurriedWindow)
	}
	// The reports say so.
	var text, js strings.Builder
	if err := rep.WriteText(&text, Input{Files: []string{"flood.log"}, Lines: lines, Entries: lines}); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("more than %d lines within the reorder window (1m0s) at once: the oldest, %d requests, were", maxHeld, lines-maxHeld); !strings.Contains(text.String(), want) {
		t.Errorf("the text report does not say %q:\n%s", want, text.String())
	}
	if err := rep.WriteJSON(&js, Input{Files: []string{"flood.log"}}); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(`"hurried":%d`, lines-maxHeld); !strings.Contains(strings.ReplaceAll(js.String(), " ", ""), want) {
		t.Errorf("the JSON report does not hold %s:\n%.400s", want, js.String())
	}
}

// TestReorderUnderMaxHeldUnchanged: a log whose window never holds more
// than MaxHeld lines replays as without the bound: nothing hurried, the
// same report.
func TestReorderUnderMaxHeldUnchanged(t *testing.T) {
	const doc = "policies:\n  - {name: p, limit: 3, window: 1m, algorithm: sliding_log}\n"
	rng := rand.New(rand.NewPCG(3, 9))
	var entries []logparse.Entry
	for i := range 3000 {
		at := t0.Add(time.Duration(i)*100*time.Millisecond - time.Duration(rng.IntN(20))*time.Second)
		entries = append(entries, logparse.Entry{Time: at, Addr: []string{"192.0.2.1", "192.0.2.2"}[rng.IntN(2)], Method: "GET", Path: "/"})
	}
	// The window of a minute holds 600 lines of the log at most, and those
	// up to 20 s behind.
	want := replayEntries(t, doc, Options{}, entries)
	got := replayEntries(t, doc, Options{MaxHeld: 1000}, entries)
	if got.Hurried != 0 || got.Rejected != want.Rejected || got.Late != want.Late || got.Policies[0].Rates != want.Policies[0].Rates {
		t.Errorf("MaxHeld 1000: hurried %d, rejected %d, late %d, rates %+v; want 0 and as without it: %d, %d, %+v",
			got.Hurried, got.Rejected, got.Late, got.Policies[0].Rates, want.Rejected, want.Late, want.Policies[0].Rates)
	}
	// A bound the log's window passes changes the count.
	if small := replayEntries(t, doc, Options{MaxHeld: 50}, entries); small.Hurried == 0 {
		t.Errorf("MaxHeld 50: nothing hurried, want some (the window holds up to 600 lines)")
	}
}
