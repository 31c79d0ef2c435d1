package redisstore_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestRefundCountsInTheBreaker: a Refund's outcome is recorded by the
// circuit breaker as a Take's is (give): a failed Refund counts as a
// failure and opens a threshold-1 circuit, and a Refund that is the
// half-open probe and succeeds closes it.
func TestRefundCountsInTheBreaker(t *testing.T) {
	s, clk := panicBreakerStore(t) // fails the calls on "{fail}", threshold 1, cooldown 10s
	spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: time.Second, MaxDelay: time.Second}
	ctx := context.Background()
	ok := algorithms.Check{Spec: spec, Key: "ok"}
	ds, err := s.Take(ctx, ok)
	if err != nil || !ds[0].Allowed {
		t.Fatalf("Take = %+v, %v; want admitted", ds, err)
	}
	refund := func(key string) error {
		return s.Refund(ctx, make([]algorithms.Refunded, 1), []algorithms.Check{{Spec: spec, Key: key}}, ds, 0)
	}
	if err := refund("fail"); err == nil || errors.Is(err, redisstore.ErrCircuitOpen) {
		t.Fatalf("failing Refund = %v, want the Redis error", err)
	}
	if _, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: "other"}); !errors.Is(err, redisstore.ErrCircuitOpen) {
		t.Fatalf("after a failed Refund, Take = %v, want ErrCircuitOpen (the Refund's failure counts)", err)
	}
	clk.t = clk.t.Add(10 * time.Second)
	if err := refund("ok"); err != nil {
		t.Fatalf("the probing Refund = %v, want it to reach Redis", err)
	}
	if _, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: "other"}); err != nil {
		t.Errorf("after the probing Refund succeeded, Take = %v, want the circuit closed", err)
	}
}

// TestRefundHugeWaitClockBehind: a remaining wait far beyond any queue's
// (a Delay of math.MaxInt64) recognises the place as the last of its
// queue even when the clock has gone 17 days back since the Take (the
// queue's end 17 days ahead of the refund's instant, still within the
// 2·10^6 s the script keeps state for): Redis gives the place back as the
// memory store does. remArg's bound 2^51 ns is above those 2·10^6 s; a
// bound of 2^50 ns (13 days) was not.
func TestRefundHugeWaitClockBehind(t *testing.T) {
	client := newClient(t)
	queue := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: 10 * time.Second}
	c := []algorithms.Check{{Spec: queue, Key: "k"}}
	clk := &manualClock{t: time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)}
	mem, rs := pairedStores(t, client, clk)
	start := clk.t
	reported, got := refundOnBoth(t, mem, rs, c, math.MaxInt64, 0, func(refunding bool) {
		clk.t = start
		if refunding {
			clk.t = start.Add(-17 * 24 * time.Hour)
		}
	})
	if !reported[0].Given {
		t.Errorf("memory store: the refund gave nothing back (%+v); the test wants a place given", reported[0])
	}
	if reported[0] != reported[1] {
		t.Errorf("the refund reported: memory %+v, redis %+v", reported[0], reported[1])
	}
	if got[0] != got[1] {
		t.Errorf("after the refund: memory %+v, redis %+v", got[0], got[1])
	}
}

// TestRefundPassedDelayHugeWait: a Delay long passed (negative: the
// remaining wait it stated, algorithms.Limiter.RefundN) with a huge waited
// (3·2^61 ns) leaves a remaining wait Delay - waited below math.MinInt64:
// no place is the last, nothing is given back, as in memory. remArg
// bounds it without computing Delay - waited, which would wrap around to
// a huge positive wait that recognises any place as the last.
func TestRefundPassedDelayHugeWait(t *testing.T) {
	client := newClient(t)
	queue := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: 10 * time.Second}
	c := []algorithms.Check{{Spec: queue, Key: "k"}}
	clk := &manualClock{t: time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)}
	mem, rs := pairedStores(t, client, clk)
	const waited = 3 << 61
	const delay = -(1 << 51) - waited + 1
	reported, got := refundOnBoth(t, mem, rs, c, delay, waited, nil)
	if reported[0].Given {
		t.Errorf("memory store: the refund gave a place back (%+v); the test wants none given", reported[0])
	}
	if reported[0] != reported[1] {
		t.Errorf("the refund reported: memory %+v, redis %+v", reported[0], reported[1])
	}
	if got[0] != got[1] {
		t.Errorf("after the refund: memory %+v, redis %+v", got[0], got[1])
	}
}
