package algorithms_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// windowSpec returns a Spec of kind k, limit per minute (6 buckets for
// sliding_buckets).
func windowSpec(k algorithms.Kind, limit int64) algorithms.Spec {
	s := algorithms.Spec{Algorithm: k, Limit: limit, Window: time.Minute}
	if k == algorithms.SlidingBuckets {
		s.Buckets = 6
	}
	return s
}

var windowKinds = []algorithms.Kind{algorithms.FixedWindow, algorithms.SlidingWindow, algorithms.SlidingLog, algorithms.SlidingBuckets}

// At the WithMaxKeys bound, a client limited at a limit lowered below its
// Spec's (Check.Limit 10 of a Spec of 1000) has its share of that limit in
// use, not of the Spec's: at 10 of 10 it is not evicted by a flood of new
// keys each using half of a Spec of limit 2, nor by new keys of its own
// Spec, checked at the Spec's limit, each using one unit, nor by both
// interleaved (where each new key of its Spec found its table holding the
// client alone, and the new keys of the other Spec had to make room). The
// store, one shard of 256 keys, takes 2000 new keys of each flood. Before
// the fix the client was reckoned at 10 of 1000 and evicted by the first
// key of the other Spec that had to make room; the interleaved flood also
// evicted it with a reckoning by the latest check on its table, which the
// unjudged new keys of its Spec set back to the Spec's limit.
func TestMemoryStoreEvictionReckonsJudgedLimit(t *testing.T) {
	// How the client comes to be limited at 10, its state holding 10.
	limiting := map[string]func(t *testing.T, s *algorithms.MemoryStore, v algorithms.Check){
		// Ten single checks judged at 10, the eleventh denied.
		"judged": func(t *testing.T, s *algorithms.MemoryStore, v algorithms.Check) {
			for i := range 10 {
				if d := take(t, s, v)[0]; !d.Allowed {
					t.Fatalf("request %d at 10: %+v", i+1, d)
				}
			}
			if d := take(t, s, v)[0]; d.Allowed || d.Limit != 10 {
				t.Fatalf("11th request at 10 = %+v, want denied at 10", d)
			}
		},
		// Nested copies: Takes of the Spec's check and the one judged at
		// 10 on the same key (the lowest of the call's limits holds), five
		// admitted, the sixth denied.
		"nested": func(t *testing.T, s *algorithms.MemoryStore, v algorithms.Check) {
			outer := v
			outer.Limit = 0
			for i := range 5 {
				if ds := take(t, s, outer, v); !ds[0].Allowed || !ds[1].Allowed {
					t.Fatalf("nested Take %d: %+v", i+1, ds)
				}
			}
			if ds := take(t, s, outer, v); ds[1].Allowed {
				t.Fatalf("6th nested Take = %+v, want the check at 10 denied", ds)
			}
		},
		// Ten requests at the Spec's limit, then the limit lowered to 10:
		// the first check at 10, denied, tells the limit it is held to.
		"lowered": func(t *testing.T, s *algorithms.MemoryStore, v algorithms.Check) {
			at := v
			at.Limit = 0
			for range 10 {
				take(t, s, at)
			}
			if d := take(t, s, v)[0]; d.Allowed {
				t.Fatalf("request at 10 after 10 at 1000 = %+v, want denied", d)
			}
		},
		// The same, the denied check at 10 in a Take of several checks.
		"lowered in a Take": func(t *testing.T, s *algorithms.MemoryStore, v algorithms.Check) {
			at := v
			at.Limit = 0
			for range 10 {
				take(t, s, at)
			}
			other := algorithms.Check{Spec: perSecond, Key: "victim"}
			if ds := take(t, s, v, other); ds[0].Allowed {
				t.Fatalf("Take at 10 after 10 at 1000 = %+v, want the first denied", ds)
			}
		},
	}
	for _, k := range windowKinds {
		spec := windowSpec(k, 1000)
		other := windowSpec(k, 2)
		floods := map[string]func(i int) algorithms.Check{
			"other spec": func(i int) algorithms.Check {
				return algorithms.Check{Spec: other, Key: "flood" + strconv.Itoa(i)}
			},
			"same spec unjudged": func(i int) algorithms.Check {
				return algorithms.Check{Spec: spec, Key: "flood" + strconv.Itoa(i)}
			},
			"interleaved": func(i int) algorithms.Check {
				if i%2 == 0 {
					return algorithms.Check{Spec: other, Key: "flood" + strconv.Itoa(i)}
				}
				return algorithms.Check{Spec: spec, Key: "flood" + strconv.Itoa(i)}
			},
		}
		for lname, limit := range limiting {
			for fname, flood := range floods {
				t.Run(string(k)+"/"+lname+"/"+fname, func(t *testing.T) {
					s, _ := newStore(t, algorithms.WithMaxKeys(256)) // one shard of 256 keys
					victim := algorithms.Check{Spec: spec, Key: "victim", Limit: 10}
					limit(t, s, victim)
					for i := range 4000 {
						if d := take(t, s, flood(i))[0]; !d.Allowed {
							t.Fatalf("flood key %d refused: %+v", i, d)
						}
					}
					if got := s.Len(); got > 256 {
						t.Fatalf("Len = %d, want at most the bound 256", got)
					}
					if d := take(t, s, victim)[0]; d.Allowed {
						t.Errorf("the client limited at 10 of %v was admitted after the flood: its state was evicted (%+v)", spec, d)
					}
				})
			}
		}
	}
}

// A lowered limit a table's keys are reckoned at counts in its period of
// two of the Spec's windows (aligned to the Unix epoch) and the next: from
// then on, with the limit restored (checks at the Spec's limit), a key
// using 10 of 1000 is evicted before a key using 1 of 2. Until then it is
// reckoned at 10 (10 of 10), and the key of 1 of 2 goes: two windows after
// a check at 10 made at the end of its period, four after one made at the
// start. The store holds 2 keys; the client limited at 10 is idle by then,
// and goes first.
func TestMemoryStoreEvictionJudgedLimitLapses(t *testing.T) {
	const w = time.Minute
	for _, k := range windowKinds {
		spec := windowSpec(k, 1000)
		other := windowSpec(k, 2)
		for _, tc := range []struct {
			at, after time.Duration // the check at 10 from the period's start; the restored key's
			lapsed    bool
		}{
			{0, 4*w - time.Nanosecond, false},
			{0, 4 * w, true},
			{2*w - time.Nanosecond, 2 * w, false},
			{2*w - time.Nanosecond, 2*w + time.Nanosecond, true},
		} {
			t.Run(fmt.Sprintf("%s/%s+%s", k, tc.at, tc.after), func(t *testing.T) {
				s, clk := newStore(t, algorithms.WithMaxKeys(2)) // one shard of 2 keys
				clk.Advance(tc.at)                               // epoch starts a period
				v := algorithms.Check{Spec: spec, Key: "victim", Limit: 10}
				for range 10 {
					take(t, s, v)
				}
				if d := take(t, s, v)[0]; d.Allowed {
					t.Fatalf("11th request at 10 = %+v, want denied", d)
				}
				clk.Advance(tc.after)
				restored := algorithms.Check{Spec: spec, Key: "k"}
				for range 10 {
					take(t, s, restored)
				}
				take(t, s, algorithms.Check{Spec: other, Key: "f"}) // evicts the idle victim
				take(t, s, algorithms.Check{Spec: other, Key: "g"}) // evicts k or f
				ds := make([]algorithms.Decision, 2)
				if err := s.Peek(ctx, ds, []algorithms.Check{restored, {Spec: other, Key: "f"}}); err != nil {
					t.Fatal(err)
				}
				kEvicted, fEvicted := ds[0].Remaining == 1000, ds[1].Remaining == 2
				if kEvicted != tc.lapsed || fEvicted == tc.lapsed {
					t.Errorf("%v after the last check at 10: k (10 of 1000) evicted %v, f (1 of 2) evicted %v; want k evicted %v, f %v (k %+v, f %+v)",
						tc.after, kEvicted, fEvicted, tc.lapsed, !tc.lapsed, ds[0], ds[1])
				}
			})
		}
	}
}

// A Peek at a lowered limit changes nothing, the reckoning of eviction
// included: a key using 10 of 1000, peeked at 10 (denied), is still
// reckoned at 1000, and the first key of 1 of 2 that has to make room
// evicts it.
func TestMemoryStoreEvictionPeekDoesNotJudge(t *testing.T) {
	for _, k := range windowKinds {
		t.Run(string(k), func(t *testing.T) {
			spec := windowSpec(k, 1000)
			s, _ := newStore(t, algorithms.WithMaxKeys(2))
			v := algorithms.Check{Spec: spec, Key: "victim"}
			for range 10 {
				take(t, s, v)
			}
			judged := v
			judged.Limit = 10
			ds := make([]algorithms.Decision, 1)
			if err := s.Peek(ctx, ds, []algorithms.Check{judged}); err != nil || ds[0].Allowed {
				t.Fatalf("Peek at 10 = %+v, %v; want denied", ds[0], err)
			}
			other := windowSpec(k, 2)
			take(t, s, algorithms.Check{Spec: other, Key: "f"})
			take(t, s, algorithms.Check{Spec: other, Key: "g"}) // evicts the victim or f
			if err := s.Peek(ctx, ds, []algorithms.Check{v}); err != nil {
				t.Fatal(err)
			}
			if ds[0].Remaining != 1000 {
				t.Errorf("the key of 10 of 1000 peeked at 10 was kept (%+v): the Peek made it reckoned at 10", ds[0])
			}
		})
	}
}
