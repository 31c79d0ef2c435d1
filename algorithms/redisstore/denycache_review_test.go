package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// TestDenyCacheWaitAfterOwnAdmission: WithDenyCache says a cached denial
// is reported with waits "never shorter than Redis would report". Here the
// same store denies a cost-3 request (token_bucket, 1 per second, burst 3,
// one token taken: RetryAfter 1 s), then admits a cost-1 request on that
// key (another cost, so not answered from the cache), which makes Redis's
// wait for cost 3 two seconds. The cost-3 request asked again 100 ms later
// must not be told to come back sooner than Redis would tell it (1.9 s):
// a client retrying after the cached 0.9 s is denied again.
func TestDenyCacheWaitAfterOwnAdmission(t *testing.T) {
	s, clk := denyCacheStore(t, newClient(t))
	ctx := context.Background()
	spec := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 1, Window: time.Second, Burst: 3}
	take := func(cost int64) algorithms.Decision {
		t.Helper()
		d, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: "k", Cost: cost})
		if err != nil {
			t.Fatal(err)
		}
		return d[0]
	}
	if d := take(1); !d.Allowed {
		t.Fatalf("first token: %+v", d)
	}
	if d := take(3); d.Allowed || d.RetryAfter != time.Second {
		t.Fatalf("cost 3 with 2 tokens = %+v, want denied with RetryAfter 1s", d)
	}
	if d := take(1); !d.Allowed {
		t.Fatalf("cost 1 with 2 tokens = %+v, want admitted", d)
	}
	clk.t = clk.t.Add(100 * time.Millisecond)
	got := take(3)
	if got.Allowed || got.RetryAfter < 1900*time.Millisecond {
		t.Fatalf("cost 3 again 100ms later = %+v, want denied with RetryAfter 1.9s (as Redis says), not shorter", got)
	}
}

// TestDenyCacheClockBackAfterAdmission: with an injected clock that goes
// back (the memory store's "Time that goes back"), a denial cached at an
// earlier reading outlives a later admission of the same Take by Redis:
// fixed_window 2 per second, 2 units at 10.5 s, a unit at 9.5 s denied
// (decided at the key's window, 10 s: RetryAfter 1.5 s), a unit at 11.2 s
// admitted by Redis (window 11 s), then a unit at 10.7 s: Redis and the
// memory store decide it in the key's window, 11 s, which has room, and
// admit it; the cache must not deny it.
func TestDenyCacheClockBackAfterAdmission(t *testing.T) {
	s, clk := denyCacheStore(t, newClient(t))
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 2, Window: time.Second}
	base := time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)
	for i, st := range []struct {
		at   time.Duration
		cost int64
	}{{10500 * time.Millisecond, 2}, {9500 * time.Millisecond, 1}, {11200 * time.Millisecond, 1}, {10700 * time.Millisecond, 1}} {
		clk.t = base.Add(st.at)
		c := algorithms.Check{Spec: spec, Key: "k", Cost: st.cost}
		want, err := mem.Take(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Take(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if got[0].Allowed != want[0].Allowed {
			t.Fatalf("step %d at +%v, cost %d: deny-cached store %+v, memory store %+v", i, st.at, st.cost, got[0], want[0])
		}
	}
}

// TestDenyCacheForwardTraces replays random and edge traces whose clock
// never goes back through a store with a deny cache: every Take is
// admitted exactly when the model admits it (the cache never admits, and
// denies only while Redis would), and a denial answered locally never
// reports a shorter RetryAfter than the model's.
func TestDenyCacheForwardTraces(t *testing.T) {
	client := newBoundClient(t)
	specs := algotest.EdgeSpecs()
	var traces []algotest.Trace
	for seed := range uint64(seedCount(24, 6)) {
		traces = append(traces, algotest.RandomTrace(seed, 600))
		traces = append(traces, algotest.EdgeForwardTrace(seed, specs[seed*23%uint64(len(specs))], specs[seed*31%uint64(len(specs))], algotest.Base, 150))
	}
	for n, tr := range traces {
		clock := algotest.NewClock(tr.Start)
		s := clockedStoreOn(t, client, clock, redisstore.WithDenyCache(64))
		got, err := algotest.Replay(t.Context(), s, clock, tr)
		if err != nil {
			t.Fatal(err)
		}
		want := algotest.ReplayModel(tr)
		for i := range want {
			ga, wa := true, true
			for j := range want[i] {
				g, w := got[i][j], want[i][j]
				ga, wa = ga && g.Allowed, wa && w.Allowed
				if !g.Allowed && !w.Allowed && g.RetryAfter < w.RetryAfter {
					t.Fatalf("trace %d, step %d, check %d: RetryAfter %v from the deny cache, the model says %v", n, i, j, g.RetryAfter, w.RetryAfter)
				}
			}
			if ga != wa {
				t.Fatalf("trace %d, step %d: admitted %v, the model says %v\n%+v\n%+v", n, i, ga, wa, got[i], want[i])
			}
		}
	}
}

// clockedStoreOn returns a store on client reading clock, under a prefix
// of its own, with opts.
func clockedStoreOn(t *testing.T, client redis.UniversalClient, clock algorithms.Clock, opts ...redisstore.Option) *redisstore.Store {
	t.Helper()
	s, err := redisstore.New(client, append([]redisstore.Option{redisstore.WithClock(clock), redisstore.WithPrefix(uniquePrefix(t))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
