package replay

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestLateRunsDecidedApart: logs joined end to end (cat of two servers'
// logs, or zcat access.log.*.gz, whose glob puts day 10 before day 2) come
// as runs in time order, each after later ones. A line of a run that lies
// further behind every line replayed than the reorder window was decided
// in the one store at the key's newest instant (time never goes back for a
// key), so each run's requests piled up at that instant: past a key's
// limit, every one of them was denied, however spread out in the run. Each
// such run is now decided in a store of its own, as a log of its own: the
// same rejections as in time order when the runs lie apart by more than a
// window, the lines still counted late.
func TestLateRunsDecidedApart(t *testing.T) {
	// Each hour, 192.0.2.1 sends 5 requests a minute for 10 minutes, and
	// 192.0.2.2 one a minute; the limit is 3 a minute.
	hour := func(h int) []logparse.Entry {
		var out []logparse.Entry
		for m := range 10 {
			for s := range 5 {
				at := t0.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s*10)*time.Second)
				out = append(out, logparse.Entry{Time: at, Addr: "192.0.2.1", Method: "GET", Path: "/"})
			}
			at := t0.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + 55*time.Second)
			out = append(out, logparse.Entry{Time: at, Addr: "192.0.2.2", Method: "GET", Path: "/"})
		}
		return out
	}
	for _, alg := range []string{"sliding_log", "sliding_window", "fixed_window", "token_bucket", "sliding_buckets"} {
		doc := fmt.Sprintf("policies:\n  - {name: p, limit: 3, window: 1m, algorithm: %s, key: ip}\n", alg)
		if alg == "sliding_buckets" {
			doc = "policies:\n  - {name: p, limit: 3, window: 1m, algorithm: sliding_buckets, buckets: 6, key: ip}\n"
		}
		// Hours 13 and 14, then 10, 11 and 12, as a glob orders rotated
		// files: three runs behind the newest line by more than the
		// reorder window, and by more than the policy's window.
		var joined, sorted []logparse.Entry
		for _, h := range []int{13, 14, 10, 11, 12} {
			joined = append(joined, hour(h)...)
		}
		for _, h := range []int{10, 11, 12, 13, 14} {
			sorted = append(sorted, hour(h)...)
		}
		want := replayEntries(t, doc, Options{}, sorted)
		got := replayEntries(t, doc, Options{}, joined)
		if got.Late != 3*60 {
			t.Errorf("%s: %d lines late, want 180 (hours 10 to 12, logged after 14)", alg, got.Late)
		}
		if got.Rejected != want.Rejected || !slices.Equal(got.Policies[0].Top, want.Policies[0].Top) {
			t.Errorf("%s: logs joined end to end: rejected %d, top %v; want %d, %v as in time order", alg, got.Rejected, got.Policies[0].Top, want.Rejected, want.Policies[0].Top)
		}
	}
}
