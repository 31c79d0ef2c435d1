package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestDenyCacheStopsAtNextAfter: a cached decision's Remaining holds only
// until its NextAfter, when Redis's state grows. A denial of cost 2 after
// a burst of 5 (token_bucket 5 per 5 s) waits 2 s, but one token is back
// after 1 s; the cache answered on past it with Remaining 0 and NextAfter
// 0, which Decision.NextAfter allows only at the Limit ("cached at +1.5s
// Remaining 0 NextAfter 0s, Redis Remaining 1 NextAfter 500ms"). Past the
// NextAfter of any of its decisions, a Take goes to Redis; before it, it
// is answered locally.
func TestDenyCacheStopsAtNextAfter(t *testing.T) {
	ctx := context.Background()
	spec := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 5, Window: 5 * time.Second, Burst: 5}
	for _, stacked := range []bool{false, true} {
		client, hook := countedClient(t)
		s, clk := denyCacheStore(t, client)
		// Stacked: the cost-2 check is admitted on a key with room, whose
		// NextAfter (one token back, 1 s) comes before the denial's 2 s.
		denied := algorithms.Check{Spec: spec, Key: "k", Cost: 2}
		checks := []algorithms.Check{denied}
		if stacked {
			if d, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: "other", Cost: 2}); err != nil || !d[0].Allowed {
				t.Fatalf("Take(other, 2) = %+v, %v", d, err)
			}
			checks = append(checks, algorithms.Check{Spec: spec, Key: "other", Cost: 2})
		}
		if d, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: "k", Cost: 5}); err != nil || !d[0].Allowed {
			t.Fatalf("Take(k, 5) = %+v, %v", d, err)
		}
		first, err := s.Take(ctx, checks...)
		if err != nil || first[0].Allowed || first[0].RetryAfter != 2*time.Second || first[0].NextAfter != time.Second {
			t.Fatalf("stacked %v: Take = %+v, %v; want k denied, RetryAfter 2s, NextAfter 1s", stacked, first, err)
		}
		hook.reset()
		clk.t = clk.t.Add(500 * time.Millisecond)
		if d, err := s.Take(ctx, checks...); err != nil || d[0].Allowed || d[0].NextAfter != 500*time.Millisecond {
			t.Fatalf("stacked %v: at +0.5s Take = %+v, %v; want k denied, NextAfter 500ms", stacked, d, err)
		}
		if cmds, _ := hook.snapshot(); len(cmds) != 0 {
			t.Fatalf("stacked %v: at +0.5s, before every NextAfter, the Take sent %v; want it answered locally", stacked, cmds)
		}
		clk.t = clk.t.Add(time.Second) // +1.5s: one token back on k
		got, err := s.Take(ctx, checks...)
		if err != nil {
			t.Fatal(err)
		}
		peek := make([]algorithms.Decision, len(checks))
		if err := s.Peek(ctx, peek, checks); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i].Remaining != peek[i].Remaining || got[i].NextAfter != peek[i].NextAfter || got[i].Allowed != peek[i].Allowed {
				t.Errorf("stacked %v: check %d at +1.5s = %+v, Redis's state %+v: want its Remaining and NextAfter", stacked, i, got[i], peek[i])
			}
			if got[i].NextAfter == 0 && got[i].Remaining < got[i].Limit {
				t.Errorf("stacked %v: check %d at +1.5s: NextAfter 0 with Remaining %d of %d", stacked, i, got[i].Remaining, got[i].Limit)
			}
		}
	}
}
