package algotest_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// TestRandomTraceAsDocumented pins what RandomTrace's documentation says
// of the traces the suite replays (seeds 0 to 13, 1200 steps): two to four
// specs and two to six keys; one to three checks a step; every check valid
// (no cost above its spec's capacity); the kind of seed s, the first spec's,
// is Kinds[s%7], and for seeds 7 to 13 with Burst != Limit, Buckets > 1
// or MaxDelay > 0 as the kind has them; every fifth seed (4, 9) has a
// Limit or Burst near MaxLimit.
func TestRandomTraceAsDocumented(t *testing.T) {
	for seed := range uint64(14) {
		tr := algotest.RandomTrace(seed, 1200)
		specs := map[algorithms.Spec]bool{}
		keys := map[string]bool{}
		want := algorithms.Kinds[seed%uint64(len(algorithms.Kinds))]
		richOfKind, nearMax := false, false
		for i, st := range tr.Steps {
			if n := len(st.Checks); n < 1 || n > 3 {
				t.Errorf("seed %d step %d: %d checks, want 1 to 3", seed, i, n)
			}
			for _, c := range st.Checks {
				if err := c.Validate(); err != nil {
					t.Fatalf("seed %d step %d: %v", seed, i, err)
				}
				if c.Cost > c.Spec.Capacity() {
					t.Errorf("seed %d step %d: cost %d above the capacity %d", seed, i, c.Cost, c.Spec.Capacity())
				}
				specs[c.Spec], keys[c.Key] = true, true
				s := c.Spec
				if s.Algorithm == want {
					switch s.Algorithm {
					case algorithms.TokenBucket, algorithms.LeakyBucket:
						richOfKind = richOfKind || s.Burst != 0 && s.Burst != s.Limit
					case algorithms.SlidingBuckets:
						richOfKind = richOfKind || s.Buckets > 1
					case algorithms.LeakyQueue:
						richOfKind = richOfKind || s.MaxDelay > 0
					default:
						richOfKind = true
					}
				}
				if max(s.Limit, s.Burst) >= algorithms.MaxLimit-1000 {
					nearMax = true
				}
			}
		}
		if len(specs) < 2 || len(specs) > 4 {
			t.Errorf("seed %d: %d specs, want 2 to 4", seed, len(specs))
		}
		if len(keys) < 2 || len(keys) > 6 {
			t.Errorf("seed %d: %d keys, want 2 to 6", seed, len(keys))
		}
		if seed >= 7 && !richOfKind {
			t.Errorf("seed %d: no %s spec with Burst != Limit, Buckets > 1 or MaxDelay > 0 as its kind has", seed, want)
		}
		found := false
		for s := range specs {
			found = found || s.Algorithm == want
		}
		if !found {
			t.Errorf("seed %d: no %s spec, want the first spec of that kind", seed, want)
		}
		if seed%5 == 4 && !nearMax {
			t.Errorf("seed %d: no Limit or Burst near MaxLimit", seed)
		}
	}
}
