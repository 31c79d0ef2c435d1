package replay

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestLateLineTrialsMatchTheReplay: a line logged late, but not so far
// behind that it is decided apart in a run of its own (within the reorder
// window of the last line replayed, or any late line under --reorder 0),
// is decided in the main store at its key's newest instant (time never
// goes back for a key). A lone policy's "configured" trial must decide it
// so too: the trials replayed the policy's requests sorted by time, so
// that 192.0.2.1's requests at 0:11, then late 0:08 and 0:09 (one allowed
// per 10 s window) were two rejections of the policy and one of its
// configured trial, in the same report.
func TestLateLineTrialsMatchTheReplay(t *testing.T) {
	at := func(sec int, addr string) logparse.Entry {
		return logparse.Entry{Time: t0.Add(time.Duration(sec) * time.Second), Addr: addr, Method: "GET", Path: "/"}
	}
	a, b := "192.0.2.1", "192.0.2.2"
	cases := []struct {
		name    string
		opts    Options
		entries []logparse.Entry
	}{
		// As logged: 8 and 9 come after 11.
		{"reorder 0", Options{Reorder: -1}, []logparse.Entry{at(11, a), at(8, a), at(9, a)}},
		// 75 replays 11 (75 - 1m); 8 and 9 come after it, within the
		// reorder window of it: late, in the main store.
		{"reorder 1m", Options{}, []logparse.Entry{at(11, a), at(75, b), at(8, a), at(9, a)}},
	}
	for _, c := range cases {
		for _, alg := range []string{"fixed_window", "sliding_log", "sliding_window", "token_bucket", "leaky_bucket", "sliding_buckets"} {
			doc := fmt.Sprintf("policies:\n  - {name: p, limit: 1, window: 10s, algorithm: %s}\n", alg)
			if alg == "sliding_buckets" {
				doc = "policies:\n  - {name: p, limit: 1, window: 10s, algorithm: sliding_buckets, buckets: 5}\n"
			}
			rep := replayEntries(t, doc, Options{Compare: true, Reorder: c.opts.Reorder}, c.entries)
			if rep.Late != 2 {
				t.Fatalf("%s, %s: %d lines late, want 2", c.name, alg, rep.Late)
			}
			p := rep.Policies[0]
			if p.Limits[0].Label != "configured" || p.Limits[0].Rejected != p.Rejected {
				t.Errorf("%s, %s: the policy rejected %d, its %q trial %d; want them equal", c.name, alg, p.Rejected, p.Limits[0].Label, p.Limits[0].Rejected)
			}
			for _, cmp := range p.Compare {
				if cmp.Spec == p.Spec && cmp.Rejected != p.Rejected {
					t.Errorf("%s, %s: the policy rejected %d, --compare's %s %d; want them equal", c.name, alg, p.Rejected, cmp.Label, cmp.Rejected)
				}
			}
		}
	}
}

// TestLateLineTrialsMatchTheReplayRandom: random logs of three clients,
// lines up to 200 s out of order and some 50 min behind, replayed as
// logged and with reorder windows of 30 s and 1 min: under every
// algorithm a lone policy rejects what its configured trial does. Before
// the trials kept the replay's order, the first log failed: fixed_window
// as logged, rejected 3, configured 1.
func TestLateLineTrialsMatchTheReplayRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 60 {
		var entries []logparse.Entry
		base := 0
		for range 60 {
			base += rng.IntN(20)
			at := base - rng.IntN(200)
			if rng.IntN(10) == 0 {
				at -= rng.IntN(3000)
			}
			entries = append(entries, logparse.Entry{Time: t0.Add(time.Duration(at) * time.Second), Addr: fmt.Sprintf("192.0.2.%d", rng.IntN(3)), Method: "GET", Path: "/"})
		}
		for _, alg := range []string{"fixed_window", "sliding_log", "sliding_window", "token_bucket", "leaky_bucket", "sliding_buckets"} {
			doc := fmt.Sprintf("policies:\n  - {name: p, limit: 3, window: 1m, algorithm: %s}\n", alg)
			if alg == "sliding_buckets" {
				doc = "policies:\n  - {name: p, limit: 3, window: 1m, algorithm: sliding_buckets, buckets: 6}\n"
			}
			for _, reorder := range []time.Duration{-1, 30 * time.Second, time.Minute} {
				rep := replayEntries(t, doc, Options{Reorder: reorder}, entries)
				if p := rep.Policies[0]; p.Limits[0].Rejected != p.Rejected {
					t.Fatalf("log %d, %s, reorder %v: the policy rejected %d, its configured trial %d (%d lines late)", iter, alg, reorder, p.Rejected, p.Limits[0].Rejected, rep.Late)
				}
			}
		}
	}
}
