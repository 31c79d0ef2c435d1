package replay

import (
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// replayEntries replays entries in the order given and returns the report.
func replayEntries(t *testing.T, doc string, opts Options, entries []logparse.Entry) *Report {
	t.Helper()
	e, err := New(parse(t, doc), opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range entries {
		if err := e.Add(&entries[i]); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := e.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// readEntries reads r to its end and returns its entries.
func readEntries(t *testing.T, r *logparse.Reader) []logparse.Entry {
	t.Helper()
	var entries []logparse.Entry
	for {
		en, err := r.Next()
		if err == io.EOF {
			return entries
		}
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, en)
	}
}

// TestOutOfOrderLines replays a log whose lines are up to 20 s out of time
// order (servers log a request when it ends, stamped with its start): the
// replay decides the requests in time order, as the trials do, so that it
// matches the replay of the sorted log and a lone policy's rejections equal
// its "configured" trial's.
func TestOutOfOrderLines(t *testing.T) {
	const doc = "policies:\n  - {name: p, limit: 3, window: 1m, algorithm: sliding_log}\n"
	rng := rand.New(rand.NewPCG(7, 7))
	var sorted []logparse.Entry
	for i := range 2000 {
		at := t0.Add(time.Duration(i) * 700 * time.Millisecond)
		sorted = append(sorted, logparse.Entry{Time: at, Addr: []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"}[rng.IntN(3)], Method: "GET", Path: "/"})
	}
	// Each line is written up to 20 s after its time stamp, and logged in
	// the order written.
	delay := make([]time.Duration, len(sorted))
	order := make([]int, len(sorted))
	for i := range sorted {
		delay[i] = time.Duration(i)*700*time.Millisecond + time.Duration(rng.IntN(20_000))*time.Millisecond
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(delay[a] - delay[b]) })
	shuffled := make([]logparse.Entry, len(order))
	for i, j := range order {
		shuffled[i] = sorted[j]
	}
	if slices.IsSortedFunc(shuffled, func(a, b logparse.Entry) int { return a.Time.Compare(b.Time) }) {
		t.Fatal("the test log is in time order")
	}

	want := replayEntries(t, doc, Options{}, sorted)
	got := replayEntries(t, doc, Options{}, shuffled)
	if got.Rejected != want.Rejected || got.Policies[0].Rejected != want.Policies[0].Rejected {
		t.Errorf("out of order: rejected %d (policy %d), want %d (policy %d) as in time order",
			got.Rejected, got.Policies[0].Rejected, want.Rejected, want.Policies[0].Rejected)
	}
	p := got.Policies[0]
	if p.Rejected != p.Limits[0].Rejected {
		t.Errorf("a lone policy rejected %d, its configured trial %d", p.Rejected, p.Limits[0].Rejected)
	}
	if !slices.Equal(p.Top, want.Policies[0].Top) {
		t.Errorf("top keys %v, want %v", p.Top, want.Policies[0].Top)
	}
	if got.Late != 0 {
		t.Errorf("%d lines replayed late within the reorder window", got.Late)
	}
}

// TestLateLines gives a line older than a line already replayed: it is
// counted as late, and the others are still decided in time order.
func TestLateLines(t *testing.T) {
	const doc = "policies:\n  - {name: p, limit: 1, window: 1m, algorithm: sliding_log}\n"
	at := func(sec int, addr string) logparse.Entry {
		return logparse.Entry{Time: t0.Add(time.Duration(sec) * time.Second), Addr: addr, Method: "GET", Path: "/"}
	}
	a, b := "192.0.2.1", "192.0.2.2"
	// 0 s comes after 30 s, within a minute: reordered. 300 s is held
	// back until 370 s, which replays it; then a line at 100 s is late.
	rep := replayEntries(t, doc, Options{Reorder: time.Minute}, []logparse.Entry{
		at(30, a), at(0, a), at(65, a), at(90, a), at(300, a), at(370, a), at(100, b)})
	if rep.Late != 1 || rep.LateMax != 270*time.Second {
		t.Errorf("late = %d by up to %s, want 1 by 270s (100 s logged after 370 s)", rep.Late, rep.LateMax)
	}
	// In time order: 0 admitted, 30 denied, 65 admitted (0 has left
	// the window), 90 denied, 300 and 370 admitted; b's one request
	// admitted.
	if p := rep.Policies[0]; p.Rejected != 2 || p.Limits[0].Rejected != 2 {
		t.Errorf("rejected %d, configured trial %d; want 2, 2", p.Rejected, p.Limits[0].Rejected)
	}
	// No reordering: every line as logged; 0 s is late.
	rep = replayEntries(t, doc, Options{Reorder: -1}, []logparse.Entry{at(30, a), at(0, a), at(65, a)})
	if rep.Late != 1 {
		t.Errorf("without reordering, late = %d, want 1", rep.Late)
	}
}
