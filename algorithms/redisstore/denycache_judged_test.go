package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestDenyCacheJudgedLimit: a denial cached for a check judged at one
// limit answers only checks judged at that limit: with 60 of 100
// counted, a key denied at 50 is still admitted at the Spec's 100 (Limit
// 0 or 100) and at 70, each asking Redis, and a check at 40 asks Redis,
// which reports it at 40; a denial at the Spec's limit answers a check
// whose Limit is Spec.Limit, the same limit.
func TestDenyCacheJudgedLimit(t *testing.T) {
	client, hook := countedClient(t)
	s, _ := denyCacheStore(t, client)
	ctx := context.Background()
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Hour}
	at := func(limit int64) algorithms.Check { return algorithms.Check{Spec: spec, Key: "k", Limit: limit} }
	take := func(c algorithms.Check, allowed bool, calls int) algorithms.Decision {
		t.Helper()
		hook.reset()
		d, err := s.Take(ctx, c)
		if err != nil || d[0].Allowed != allowed || d[0].Limit != c.Judged().Limit {
			t.Fatalf("Take(judged at %d) = %+v, %v; want Allowed %v at Limit %d", c.Limit, d, err, allowed, c.Judged().Limit)
		}
		if cmds, _ := hook.snapshot(); len(cmds) != calls {
			t.Fatalf("Take(judged at %d) sent %v, want %d calls", c.Limit, cmds, calls)
		}
		return d[0]
	}
	if _, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: "k", Cost: 60}); err != nil {
		t.Fatal(err)
	}
	for _, other := range []int64{0, 100, 70} {
		take(at(50), false, 1) // denied by Redis, cached
		take(at(50), false, 0) // answered from the cache
		take(at(other), true, 1)
	}
	take(at(50), false, 1)
	if d := take(at(40), false, 1); d.Remaining != 0 {
		t.Fatalf("Take at 40 = %+v, want Remaining 0", d)
	}
	take(at(40), false, 0)
	// 100 counted: a denial at the Spec's limit answers Limit 100.
	if _, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: "k", Cost: 100 - 63}); err != nil {
		t.Fatal(err)
	}
	take(at(0), false, 1)
	take(at(100), false, 0)
	take(at(0), false, 0)
	take(at(90), false, 1)
}

// TestDenyCacheRaisedLimit: a denial cached at the Spec's limit never
// answers a check judged above it (algorithms.Check.Limit > Spec.Limit),
// which Redis admits on the same state, nor a denial at a raised limit a
// check judged at another: with 100 of 100 counted, a key denied at 100
// (cached) is admitted at 110; that admission forgets the key, so the
// next check at 100 asks Redis again; with 110 counted, a denial at 110
// answers 110 only, and 120 is admitted by Redis.
func TestDenyCacheRaisedLimit(t *testing.T) {
	client, hook := countedClient(t)
	s, _ := denyCacheStore(t, client)
	ctx := context.Background()
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Hour}
	at := func(limit int64) algorithms.Check { return algorithms.Check{Spec: spec, Key: "k", Limit: limit} }
	take := func(c algorithms.Check, allowed bool, remaining int64, calls int) {
		t.Helper()
		hook.reset()
		d, err := s.Take(ctx, c)
		if err != nil || d[0].Allowed != allowed || d[0].Limit != c.Judged().Limit || d[0].Remaining != remaining {
			t.Fatalf("Take(judged at %d) = %+v, %v; want Allowed %v at Limit %d, Remaining %d", c.Limit, d, err, allowed, c.Judged().Limit, remaining)
		}
		if cmds, _ := hook.snapshot(); len(cmds) != calls {
			t.Fatalf("Take(judged at %d) sent %v, want %d calls", c.Limit, cmds, calls)
		}
	}
	if _, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: "k", Cost: 100}); err != nil {
		t.Fatal(err)
	}
	take(at(0), false, 0, 1) // denied by Redis, cached
	take(at(0), false, 0, 0) // answered from the cache
	take(at(110), true, 9, 1)
	take(at(0), false, 0, 1) // the admission at 110 forgot the key
	for i := int64(8); i >= 0; i-- {
		take(at(110), true, i, 1)
	}
	take(at(110), false, 0, 1)
	take(at(110), false, 0, 0)
	take(at(100), false, 0, 1)
	take(at(120), true, 9, 1)
	take(at(110), false, 0, 1)
}
