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

// TestLateRunTrialsMatchTheReplay: a lone policy's rejections equal its
// "configured" trial's (and its own algorithm's under --compare), as
// TestOutOfOrderLines has it for lines a little out of order, also when a
// run of late lines is decided apart: the trials replayed every request in
// one store, in time order, so that a run overlapping the requests before
// it in time was decided apart in the replay and together in the trials.
// Here 192.0.2.1's requests at 13:50:00 and, logged late after 13:57,
// 13:50:10 and 13:50:20 (three in a minute, the limit two) were admitted
// by the replay, the run apart, and one of them rejected by the trials:
// the report said "rejected 0" of the policy and "configured 2, rejected
// 1" of the same policy alone.
func TestLateRunTrialsMatchTheReplay(t *testing.T) {
	at := func(hms string) time.Time {
		tm, err := time.Parse("15:04:05", hms)
		if err != nil {
			t.Fatal(err)
		}
		return t0.Add(tm.Sub(time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)))
	}
	var entries []logparse.Entry
	for _, hms := range []string{"13:50:00", "13:55:00", "13:57:00", "13:50:10", "13:50:20", "13:57:01"} {
		entries = append(entries, logparse.Entry{Time: at(hms), Addr: "192.0.2.1", Method: "GET", Path: "/"})
	}
	for _, alg := range []string{"sliding_log", "sliding_window", "fixed_window", "token_bucket", "leaky_bucket", "sliding_buckets"} {
		doc := fmt.Sprintf("policies:\n  - {name: p, limit: 2, window: 1m, algorithm: %s}\n", alg)
		if alg == "sliding_buckets" {
			doc = "policies:\n  - {name: p, limit: 2, window: 1m, algorithm: sliding_buckets, buckets: 6}\n"
		}
		rep := replayEntries(t, doc, Options{Compare: true}, entries)
		p := rep.Policies[0]
		if rep.Late != 2 {
			t.Fatalf("%s: %d lines late, want 2", alg, rep.Late)
		}
		if p.Limits[0].Label != "configured" || p.Limits[0].Rejected != p.Rejected {
			t.Errorf("%s: the policy rejected %d, its %q trial %d; want them equal", alg, p.Rejected, p.Limits[0].Label, p.Limits[0].Rejected)
		}
		for _, c := range p.Compare {
			if c.Spec == p.Spec && c.Rejected != p.Rejected {
				t.Errorf("%s: the policy rejected %d, --compare's %s %d; want them equal", alg, p.Rejected, c.Label, c.Rejected)
			}
		}
	}
}
