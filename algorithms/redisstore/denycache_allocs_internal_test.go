package redisstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestDenyCacheAnswerAllocatesNothing: the deny cache is asked about every
// Take of the process while it holds any entry. For a Take of more than 8
// checks it looked for a key named twice with a map of every check, made
// on each call, whether the Take was then answered locally or went to
// Redis (testing.AllocsPerRun: 3 allocations per call for 9 to 64
// checks, before any entry was looked up). Now Takes of up to 64 checks
// allocate nothing in answer, and a key named twice among them is still
// found (its Take is not answered: see WithDenyCache), placed anywhere,
// under the same Spec or, not a repeat, under another.
func TestDenyCacheAnswerAllocatesNothing(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Minute}
	other := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 2, Window: time.Minute}
	now := time.Unix(1000, 0)
	for _, n := range []int{1, 8, 9, 16, 33, 64} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			checks := make([]algorithms.Check, n)
			denied := make([]algorithms.Decision, n)
			for i := range checks {
				checks[i] = algorithms.Check{Spec: spec, Key: fmt.Sprint("policy", i, ":client")}
				denied[i] = algorithms.Decision{Limit: 1, RetryAfter: time.Minute, ResetAfter: time.Minute}
			}
			c := newDenyCache(2 * n)
			c.learn(denied, checks, now, now, c.mark(checks))
			dst := make([]algorithms.Decision, n)
			later := now.Add(time.Second)
			if !c.answer(dst, checks, later) || dst[n-1].Allowed {
				t.Fatalf("a cached denial of %d checks was not answered: %+v", n, dst[n-1])
			}
			if a := testing.AllocsPerRun(100, func() { c.answer(dst, checks, later) }); a != 0 {
				t.Errorf("answer of a Take of %d cached checks: %v allocations per call, want 0", n, a)
			}
			// A Take of checks not cached (the usual Take while the
			// cache holds other keys' denials) goes to Redis.
			uncached := make([]algorithms.Check, n)
			for i := range uncached {
				uncached[i] = algorithms.Check{Spec: spec, Key: fmt.Sprint("new", i)}
			}
			if c.answer(dst, uncached, later) {
				t.Fatal("a Take of keys not cached was answered")
			}
			if a := testing.AllocsPerRun(100, func() { c.answer(dst, uncached, later) }); a != 0 {
				t.Errorf("answer of a Take of %d checks not cached: %v allocations per call, want 0", n, a)
			}
			if n < 2 {
				return
			}
			// A key named twice, at every pair of places: not answered.
			for i := range n {
				for j := range i {
					twice := append([]algorithms.Check(nil), checks...)
					twice[i] = twice[j]
					if c.answer(dst, twice, later) {
						t.Fatalf("a Take of %d checks naming %q twice (checks %d and %d) was answered from the cache", n, twice[i].Key, j, i)
					}
				}
			}
			// The same key under another Spec is another state: cached
			// too, the Take is answered.
			c2 := newDenyCache(2 * n)
			mixed := append([]algorithms.Check(nil), checks...)
			mixed[n-1] = algorithms.Check{Spec: other, Key: mixed[0].Key}
			c2.learn(denied, mixed, now, now, c2.mark(mixed))
			if !c2.answer(dst, mixed, later) {
				t.Fatalf("a Take of %d checks naming %q under two Specs was not answered from the cache", n, mixed[0].Key)
			}
		})
	}
}
