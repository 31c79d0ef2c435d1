package redisstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// decisionSane returns what is wrong with d against Decision's
// documentation (DESIGN.md: Remaining never negative, RetryAfter 0 when
// allowed and positive when denied, NextAfter 0 exactly at Limit and no
// later than RetryAfter when denied).
func decisionSane(d algorithms.Decision) string {
	switch {
	case d.Remaining < 0 || d.Remaining > d.Limit:
		return "Remaining out of [0, Limit]"
	case d.Allowed && d.RetryAfter != 0:
		return "allowed with a RetryAfter"
	case !d.Allowed && d.RetryAfter <= 0:
		return "denied without a RetryAfter"
	case d.Remaining == d.Limit && d.NextAfter != 0:
		return "NextAfter at the full allowance"
	case d.Remaining < d.Limit && d.NextAfter <= 0:
		return "no NextAfter below the full allowance"
	case d.ResetAfter < 0 || d.NextAfter > d.ResetAfter:
		return "NextAfter after ResetAfter"
	case !d.Allowed && d.NextAfter > d.RetryAfter:
		// A denied check waits for more units than Remaining+1 (the
		// middleware's Retry-After must not be earlier than its t).
		return "denied with NextAfter after RetryAfter"
	}
	return ""
}

// TestReviewRepeatedKeysMatchModel is the memory store's test of that
// name on Redis (standalone, script fallback, Cluster): random calls naming
// keys several times, mixed with other keys and specs of every kind, the
// clock now and then going back; Take, Peek, GiveBack and Refund must equal
// the Model's and every Decision must be sane.
func TestReviewRepeatedKeysMatchModel(t *testing.T) {
	for _, c := range []struct {
		name   string
		client func(t *testing.T) redis.UniversalClient
	}{
		{"standalone", func(t *testing.T) redis.UniversalClient { return newClient(t) }},
		{"script", func(t *testing.T) redis.UniversalClient { return noFunctionsClient(t) }},
		{"cluster", func(t *testing.T) redis.UniversalClient { return sharedCluster(t) }},
	} {
		t.Run(c.name, func(t *testing.T) { repeatedKeysMatchModel(t, c.client(t), false) })
		t.Run(c.name+"/deny_cache", func(t *testing.T) { repeatedKeysMatchModel(t, c.client(t), false, redisstore.WithDenyCache(100)) })
		t.Run(c.name+"/near_max_limit", func(t *testing.T) { repeatedKeysMatchModel(t, c.client(t), true) })
	}
}

func repeatedKeysMatchModel(t *testing.T, client redis.UniversalClient, big bool, opts ...redisstore.Option) {
	cached := len(opts) > 0
	specs := []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: 5, Window: 10 * time.Second},
		{Algorithm: algorithms.SlidingLog, Limit: 5, Window: 10 * time.Second},
		{Algorithm: algorithms.SlidingWindow, Limit: 5, Window: 10 * time.Second},
		{Algorithm: algorithms.SlidingBuckets, Limit: 5, Window: 10 * time.Second, Buckets: 5},
		{Algorithm: algorithms.TokenBucket, Limit: 2, Window: 10 * time.Second, Burst: 5},
		{Algorithm: algorithms.LeakyBucket, Limit: 2, Window: 10 * time.Second, Burst: 5},
		{Algorithm: algorithms.LeakyQueue, Limit: 3, Window: 10 * time.Second, MaxDelay: 17 * time.Second},
		{Algorithm: algorithms.LeakyQueue, Limit: 3, Window: 9 * time.Second},
		{Algorithm: algorithms.FixedWindow, Limit: 1, Window: 7 * time.Second},
		{Algorithm: algorithms.SlidingWindow, Limit: 7, Window: 7 * time.Second},
		{Algorithm: algorithms.SlidingLog, Limit: 2, Window: 3 * time.Second},
		{Algorithm: algorithms.SlidingBuckets, Limit: 7, Window: 9 * time.Second, Buckets: 3},
		{Algorithm: algorithms.TokenBucket, Limit: 3, Window: 7 * time.Second},
		{Algorithm: algorithms.LeakyBucket, Limit: 1, Window: 7 * time.Second},
		{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: 7 * time.Second, MaxDelay: 20 * time.Second},
		{Algorithm: algorithms.LeakyQueue, Limit: 7, Window: 3 * time.Second, MaxDelay: 2 * time.Second},
	}
	if big {
		specs = []algorithms.Spec{
			{Algorithm: algorithms.FixedWindow, Limit: algorithms.MaxLimit - 7, Window: 10 * time.Second},
			{Algorithm: algorithms.SlidingWindow, Limit: algorithms.MaxLimit - 3, Window: 10 * time.Second},
			{Algorithm: algorithms.SlidingWindow, Limit: 999_999_937, Window: 7*time.Second + 13},
			{Algorithm: algorithms.SlidingBuckets, Limit: algorithms.MaxLimit, Window: 9 * time.Second, Buckets: 3},
			{Algorithm: algorithms.TokenBucket, Limit: 999_999_937, Window: 7*time.Second + 3, Burst: algorithms.MaxLimit},
			{Algorithm: algorithms.LeakyBucket, Limit: 3, Window: 7 * time.Second, Burst: 999_999_999},
			{Algorithm: algorithms.LeakyQueue, Limit: 999_999_937, Window: 10*time.Second + 1, MaxDelay: 9 * time.Second},
		}
	}
	ctx := context.Background()
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 77))
		clock := algotest.NewClock(algotest.Base)
		mem, err0 := redisstore.New(client, append([]redisstore.Option{redisstore.WithClock(clock), redisstore.WithPrefix(uniquePrefix(t))}, opts...)...)
		if err0 != nil {
			t.Fatal(err0)
		}
		model := algotest.NewModel()
		var hist []string
		at := time.Duration(0)
		for step := range 40 {
			at += time.Duration(r.Int64N(int64(6 * time.Second)))
			now := at
			if r.IntN(5) == 0 {
				now -= time.Duration(r.Int64N(int64([]time.Duration{15 * time.Second, 90 * time.Second}[r.IntN(2)])))
			}
			sp := specs[r.IntN(len(specs))]
			var checks []algorithms.Check
			for range 1 + r.IntN(11) {
				s := sp
				if r.IntN(4) == 0 {
					s = specs[r.IntN(len(specs))]
				}
				checks = append(checks, algorithms.Check{Spec: s, Key: fmt.Sprint("k", r.IntN(2)), Cost: r.Int64N(s.Capacity() + 1)})
			}
			if r.IntN(3) > 0 {
				checks = algotest.FitRepeats(checks)
			}
			clock.Set(algotest.Base.Add(now))
			tnow := algotest.Base.Add(now)
			hist = append(hist, fmt.Sprintf("+%v %v", now, checks))
			fail := func(what string, got, want any) {
				t.Helper()
				t.Fatalf("seed %d step %d: %s:\n got %+v\nwant %+v\nhistory:\n%v", seed, step, what, got, want, hist)
			}
			// Peek first (changes nothing).
			pd := make([]algorithms.Decision, len(checks))
			perr := mem.Peek(ctx, pd, checks)
			pw, pwerr := model.PeekAt(tnow, checks...)
			if fmt.Sprint(perr) != fmt.Sprint(pwerr) {
				fail("Peek error", perr, pwerr)
			}
			if perr == nil {
				if fmt.Sprint(pd) != fmt.Sprint(pw) {
					fail("Peek", pd, pw)
				}
			}
			got, err := mem.Take(ctx, checks...)
			want, werr := model.TakeAt(tnow, checks...)
			if fmt.Sprint(err) != fmt.Sprint(werr) {
				fail("Take error", err, werr)
			}
			if err != nil {
				// GiveBack and Refund of the same checks fail alike.
				ds := make([]algorithms.Decision, len(checks))
				for i := range ds {
					ds[i].Allowed = true
				}
				dst := make([]algorithms.Refunded, len(checks))
				_, gwerr := model.GiveBackAt(tnow, checks, ds, 0)
				if gerr := mem.GiveBack(ctx, dst, checks, ds, 0); fmt.Sprint(gerr) != fmt.Sprint(gwerr) {
					fail("GiveBack error", gerr, gwerr)
				}
				_, rwerr := model.RefundAt(tnow, checks, ds, 0)
				if rerr := mem.Refund(ctx, dst, checks, ds, 0); fmt.Sprint(rerr) != fmt.Sprint(rwerr) {
					fail("Refund error", rerr, rwerr)
				}
				continue
			}
			if cached && !hasRepeat(checks) {
				// The deny cache may answer it, with the Remaining and
				// NextAfter of an earlier reply (see WithDenyCache): only
				// the outcome must be Redis's. A Take naming a key twice
				// is never answered from the cache, and is compared in full.
				if allowedAll(got) != allowedAll(want) {
					fail("Take (deny cache)", got, want)
				}
				continue
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				fail("Take", got, want)
			}
			for i, d := range got {
				if s := decisionSane(d); s != "" {
					fail(fmt.Sprintf("check %d: %s", i, s), got, checks)
				}
			}
			switch r.IntN(4) {
			case 0:
				waited := time.Duration(r.Int64N(int64(3 * time.Second)))
				clock.Set(tnow.Add(waited))
				dst := make([]algorithms.Refunded, len(checks))
				gerr := mem.GiveBack(ctx, dst, checks, got, waited)
				gw, gwerr := model.GiveBackAt(tnow.Add(waited), checks, want, waited)
				if fmt.Sprint(gerr) != fmt.Sprint(gwerr) {
					fail("GiveBack error", gerr, gwerr)
				}
				if gerr == nil && fmt.Sprint(dst) != fmt.Sprint(gw) {
					fail("GiveBack", dst, gw)
				}
				hist = append(hist, fmt.Sprintf("  GiveBack waited %v", waited))
			case 1:
				waited := time.Duration(r.Int64N(int64(3 * time.Second)))
				clock.Set(tnow.Add(waited))
				dst := make([]algorithms.Refunded, len(checks))
				gerr := mem.Refund(ctx, dst, checks, got, waited)
				gw, gwerr := model.RefundAt(tnow.Add(waited), checks, want, waited)
				if fmt.Sprint(gerr) != fmt.Sprint(gwerr) {
					fail("Refund error", gerr, gwerr)
				}
				if gerr == nil && fmt.Sprint(dst) != fmt.Sprint(gw) {
					fail("Refund", dst, gw)
				}
				hist = append(hist, fmt.Sprintf("  Refund waited %v", waited))
			}
		}
		mem.Close()
	}
}

// hasRepeat reports whether checks name one key under one Spec twice.
func hasRepeat(checks []algorithms.Check) bool {
	for i := range checks {
		for j := range i {
			if checks[i].Spec == checks[j].Spec && checks[i].Key == checks[j].Key {
				return true
			}
		}
	}
	return false
}

func allowedAll(ds []algorithms.Decision) bool {
	for _, d := range ds {
		if !d.Allowed {
			return false
		}
	}
	return true
}

// TestReviewFailedTakeMayHaveConsumed: algorithms.Store.Take's
// documentation said "A Take that returns an error consumes nothing", but
// a Take whose reply is lost after Redis ran its script returns an error
// and has consumed (this package's documentation: "An error does not prove
// that nothing was consumed"). Only a Take refused as invalid is sure to
// have consumed nothing.
func TestReviewFailedTakeMayHaveConsumed(t *testing.T) {
	ctx := context.Background()
	proxy := newReplyDropper(t, sharedServer(t).Addr)
	client := redis.NewClient(&redis.Options{Addr: proxy.Addr(), MaxRetries: -1})
	defer client.Close()
	clk := algotest.NewClock(algotest.Base)
	store, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)), redisstore.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	c := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Minute}, Key: "k", Cost: 2}
	warmUp(t, client, algorithms.Check{Spec: c.Spec, Key: "warm"}) // loads the library
	proxy.armed.Store(true)
	if ds, err := store.Take(ctx, c); err == nil || proxy.dropped.Load() != 1 {
		t.Fatalf("Take whose reply was lost = %+v, %v (%d replies dropped); want an error", ds, err, proxy.dropped.Load())
	}
	peek := make([]algorithms.Decision, 1)
	if err := store.Peek(ctx, peek, []algorithms.Check{c}); err != nil {
		t.Fatal(err)
	}
	if peek[0].Remaining != 3 {
		t.Fatalf("after a Take of 2 that returned an error, Remaining = %d; want 3 (it consumed)", peek[0].Remaining)
	}
}
