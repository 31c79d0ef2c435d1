package redisstore_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
)

// worldStep is one step of a trace replayed by replayWorld: a Take of cost
// at the instant at (a name in take to give it back by later), or, with
// give set, the give-back at at of the Take named give, its waited exact
// (at less the Take's instant).
type worldStep struct {
	at   time.Duration
	take string
	cost int64
	give string
}

// replayWorld replays steps on s with clk, on one key of sp, and returns
// the decision of each Take by name.
func replayWorld(t *testing.T, s algorithms.Store, clk *algotest.Clock, t0 time.Time, sp algorithms.Spec, key string, steps []worldStep) map[string]algorithms.Decision {
	t.Helper()
	ctx := context.Background()
	ds := map[string]algorithms.Decision{}
	at := map[string]time.Duration{}
	costs := map[string]int64{}
	for _, st := range steps {
		clk.Set(t0.Add(st.at))
		if st.give != "" {
			c := algorithms.Check{Spec: sp, Key: key, Cost: costs[st.give]}
			dst := make([]algorithms.Refunded, 1)
			if err := s.(algorithms.GiveBacker).GiveBack(ctx, dst, []algorithms.Check{c}, []algorithms.Decision{ds[st.give]}, st.at-at[st.give]); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := s.Take(ctx, algorithms.Check{Spec: sp, Key: key, Cost: st.cost})
		if err != nil {
			t.Fatal(err)
		}
		ds[st.take], at[st.take], costs[st.take] = got[0], st.at, st.cost
	}
	return ds
}

// TestGiveBackOutOfOrderNeverOverAdmits replays, on the memory store and
// on Redis, traces in which a bucket's Take is given back after an older
// Take of its key was given back (the older one's units no longer ahead
// of its own), or a sliding_log's newest Take is given back after it
// forgot a request that had left its window, and requires the key to
// deny afterwards what the world without the given-back Takes denies.
//
// token_bucket, 5 a minute, burst 7: A and B of 2 at 0 s, A given back at
// once, 3 at 20 s, B given back at 30 s. Without A and B the bucket is
// full at 0 and 20 s, holds 4 after the 3 and 4.83 at 30 s: a Take of 5
// there is denied. leaky_bucket is the same machine as a meter. B's
// decision reckons B's units 2 units behind A's, though A's give-back
// moved them up; given back by it, 18 s of B's units would come back and
// the bucket admit the 5 (6 tokens; so it did before the key kept a note
// of its latest give-back). B was decided at the instant of A's give-back
// and may have come before it: its give-back takes its units to have
// moved up by what came back there, and gives back nothing (4.5 tokens;
// see GiveBacker.GiveBack).
//
// sliding_log, 4 a minute: 1 at 0 s, 1 at 10 s, 1 at 62 s (which forgets
// the one at 0 s), the one at 62 s given back at 70 s; then 3 at 40 s (a
// clock behind). Without the 62 s Take the log holds 0 s and 10 s, and
// decides the 3 at 40 s on both: denied; with it standing the log decides
// at 62 s, on 10 s and 62 s: denied too. Given back, the log holds 10 s
// alone and admits it: a known defect (a clock behind: see
// GiveBacker.GiveBack), run only with RATEKEEPER_KNOWN_DEFECTS=1. (With the
// reckoning exact the give-back finds the 62 s instant itself: a Take
// decided at an instant behind the key's newest has its ResetAfter
// lengthened to match. Only a reckoning off by more than half the
// distance to the neighbouring instant, 26 s here, takes another request's
// units.)
func TestGiveBackOutOfOrderNeverOverAdmits(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	buckets := []worldStep{
		{at: 0, take: "A", cost: 2},
		{at: 0, take: "B", cost: 2},
		{at: 0, give: "A"},
		{at: 20 * time.Second, take: "C", cost: 3},
		{at: 30 * time.Second, give: "B"},
		{at: 30 * time.Second, take: "probe", cost: 5},
	}
	log := []worldStep{
		{at: 0, take: "A", cost: 1},
		{at: 10 * time.Second, take: "B", cost: 1},
		{at: 62 * time.Second, take: "C", cost: 1},
		{at: 70 * time.Second, give: "C"},
		{at: 40 * time.Second, take: "probe", cost: 3},
	}
	cases := []struct {
		name  string
		spec  algorithms.Spec
		steps []worldStep
	}{
		{"token_bucket", algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Minute, Burst: 7}, buckets},
		{"leaky_bucket", algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: 5, Window: time.Minute, Burst: 7}, buckets},
		{"sliding_log", algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 4, Window: time.Minute}, log},
	}
	for _, name := range storetest.Names {
		for _, tc := range cases {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				if tc.spec.Algorithm == algorithms.SlidingLog && os.Getenv("RATEKEEPER_KNOWN_DEFECTS") == "" {
					t.Skip("known defect (see GiveBacker.GiveBack, \"Left\"): a sliding_log give-back of its newest Take leaves out the requests that Take forgot, and a request at an instant behind it (a clock behind) is decided without them; set RATEKEEPER_KNOWN_DEFECTS=1 to run")
				}
				clk := algotest.NewClock(t0)
				s := storetest.New(t, name, clk)
				ds := replayWorld(t, s, clk, t0, tc.spec, "k", tc.steps)
				// The world without the given-back Takes, on a store of its own.
				var without []worldStep
				given := map[string]bool{}
				for _, st := range tc.steps {
					if st.give != "" {
						given[st.give] = true
					}
				}
				for _, st := range tc.steps {
					if st.give == "" && !given[st.take] {
						without = append(without, st)
					}
				}
				wclk := algotest.NewClock(t0)
				w := replayWorld(t, storetest.New(t, name, wclk), wclk, t0, tc.spec, "k", without)
				if w["probe"].Allowed {
					t.Fatalf("the world without the given-back Takes admits the probe: %+v", w["probe"])
				}
				if got := ds["probe"]; got.Allowed {
					t.Errorf("after the give-backs the probe is admitted (%+v); the world without the given-back Takes denies it (%+v)", got, w["probe"])
				}
			})
		}
	}
}
