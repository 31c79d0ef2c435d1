package algorithms_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
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

// TestReviewRepeatedKeysMatchModel: random calls naming keys several
// times, mixed with other keys and specs of every kind, costs up to the
// bound, the clock now and then going back: Take, Peek, GiveBack and
// Refund of the memory store must equal the Model's, and every Decision
// must be sane.
func TestReviewRepeatedKeysMatchModel(t *testing.T) {
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
	// Every fourth seed: limits near MaxLimit.
	big := []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: algorithms.MaxLimit - 7, Window: 10 * time.Second},
		{Algorithm: algorithms.SlidingWindow, Limit: algorithms.MaxLimit - 3, Window: 10 * time.Second},
		{Algorithm: algorithms.SlidingWindow, Limit: 999_999_937, Window: 7*time.Second + 13},
		{Algorithm: algorithms.SlidingBuckets, Limit: algorithms.MaxLimit, Window: 9 * time.Second, Buckets: 3},
		{Algorithm: algorithms.TokenBucket, Limit: 999_999_937, Window: 7*time.Second + 3, Burst: algorithms.MaxLimit},
		{Algorithm: algorithms.LeakyBucket, Limit: 3, Window: 7 * time.Second, Burst: 999_999_999},
		{Algorithm: algorithms.LeakyQueue, Limit: 999_999_937, Window: 10*time.Second + 1, MaxDelay: 9 * time.Second},
	}
	ctx := context.Background()
	for seed := range uint64(800) {
		r := rand.New(rand.NewPCG(seed, 77))
		specs := specs
		if seed%4 == 3 {
			specs = big
		}
		clock := algotest.NewClock(algotest.Base)
		mem, err0 := algorithms.NewMemoryStore(algorithms.WithClock(clock))
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
