package algotest

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// repeatTraceSeeds is the number of random traces runRepeatTraces replays;
// every fourth has limits near algorithms.MaxLimit.
const repeatTraceSeeds = 100

// repeatTraceSpecs are the specs of runRepeatTraces' traces: every kind,
// small limits (big false), or limits near MaxLimit.
func repeatTraceSpecs(big bool) []algorithms.Spec {
	if big {
		return []algorithms.Spec{
			{Algorithm: algorithms.FixedWindow, Limit: algorithms.MaxLimit - 7, Window: 10 * time.Second},
			{Algorithm: algorithms.SlidingWindow, Limit: algorithms.MaxLimit - 3, Window: 10 * time.Second},
			{Algorithm: algorithms.SlidingWindow, Limit: 999_999_937, Window: 7*time.Second + 13},
			{Algorithm: algorithms.SlidingBuckets, Limit: algorithms.MaxLimit, Window: 9 * time.Second, Buckets: 3},
			{Algorithm: algorithms.TokenBucket, Limit: 999_999_937, Window: 7*time.Second + 3, Burst: algorithms.MaxLimit},
			{Algorithm: algorithms.LeakyBucket, Limit: 3, Window: 7 * time.Second, Burst: 999_999_999},
			{Algorithm: algorithms.LeakyQueue, Limit: 999_999_937, Window: 10*time.Second + 1, MaxDelay: 9 * time.Second},
		}
	}
	return []algorithms.Spec{
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
}

// saneDecision returns what is wrong with d against Decision's
// documentation (Remaining in [0, Limit], RetryAfter 0 when allowed and
// positive when denied, NextAfter 0 exactly at Limit, no later than
// ResetAfter, and no later than RetryAfter when denied), or "".
func saneDecision(d algorithms.Decision) string {
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

// runRepeatTraces replays random calls of up to 11 checks (past the
// memory store's batch of eight) naming two keys several times, mixed
// with other specs of every kind, costs up to the bound of what a key
// admits at once (a third of the calls left unfitted, past it), the
// instant now and then going back: Peek (for an algorithms.Peeker), Take,
// and GiveBack and Refund (for an algorithms.GiveBacker and
// algorithms.Refunder) of the admitted ones, or of the refused ones,
// which must fail alike, are the Model's, errors included, and every
// decision is sane (see saneDecision).
func runRepeatTraces(t *testing.T, h Harness) {
	for seed := range uint64(repeatTraceSeeds) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 77))
			runModelTrace(t, h, r, repeatTraceSpecs(seed%4 == 3), modelTrace{
				check: func(r *rand.Rand, s algorithms.Spec) algorithms.Check {
					return algorithms.Check{Spec: s, Key: fmt.Sprint("k", r.IntN(2)), Cost: r.Int64N(s.Capacity() + 1)}
				},
				refusedAlike: true,
				ops:          4,
			})
		})
	}
}

// A modelTrace is how runModelTrace makes and checks a trace.
type modelTrace struct {
	// check makes one check under s.
	check func(r *rand.Rand, s algorithms.Spec) algorithms.Check
	// exact compares errors and results with reflect.DeepEqual, not as
	// printed.
	exact bool
	// into makes every other Take through TakeInto, for an
	// algorithms.IntoStore.
	into bool
	// refusedAlike gives back and refunds the checks of a refused Take,
	// which must fail as the Model's do.
	refusedAlike bool
	// ops: after an admitted Take, r.IntN(ops) is 0 for a give-back, 1
	// for a refund, anything else for neither.
	ops int
}

// runModelTrace replays 40 random calls on the store of h and on the
// Model, from r: each of 1 to 11 checks (tr.check) under one of specs
// (now and then another), on two keys, made to fit what a key admits at
// once two times in three (FitRepeats), at an instant that now and then
// goes back. Peek (for an algorithms.Peeker), Take, and GiveBack and
// Refund (for an algorithms.GiveBacker and algorithms.Refunder) must be
// the Model's, errors included, and every decision sane (see
// saneDecision).
func runModelTrace(t *testing.T, h Harness, r *rand.Rand, specs []algorithms.Spec, tr modelTrace) {
	t.Helper()
	e := newEnv(t, h)
	peeker, _ := e.store.(algorithms.Peeker)
	giver, _ := e.store.(algorithms.GiveBacker)
	refunder, _ := e.store.(algorithms.Refunder)
	into, _ := e.store.(algorithms.IntoStore)
	if !tr.into {
		into = nil
	}
	var hist []string
	var at time.Duration
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
			checks = append(checks, tr.check(r, s))
		}
		if r.IntN(3) > 0 {
			checks = FitRepeats(checks)
		}
		tnow := Base.Add(now)
		e.clock.Set(tnow)
		hist = append(hist, fmt.Sprintf("+%v Take(%s)", now, formatChecks(checks)))
		fail := func(what string, got, want any) {
			t.Helper()
			t.Fatalf("step %d: %s:\n got %+v\nwant %+v\nhistory:\n%v", step, what, got, want, hist)
		}
		equal := func(a, b any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }
		if tr.exact {
			equal = reflect.DeepEqual
		}
		same := func(what string, got, want any, err, werr error) bool {
			t.Helper()
			if !equal(err, werr) {
				fail(what+" error", err, werr)
			}
			if err == nil && !equal(got, want) {
				fail(what, got, want)
			}
			return err == nil
		}
		if peeker != nil {
			// First: a Peek changes nothing.
			pd := make([]algorithms.Decision, len(checks))
			perr := peeker.Peek(e.ctx, pd, checks)
			pw, pwerr := e.model.PeekAt(tnow, checks...)
			same("Peek", pd, pw, perr, pwerr)
		}
		var got []algorithms.Decision
		var err error
		if into != nil && step%2 == 1 {
			got, err = intoOnly{into}.Take(e.ctx, checks...)
		} else {
			got, err = e.store.Take(e.ctx, checks...)
		}
		want, werr := e.model.TakeAt(tnow, checks...)
		if !same("Take", got, want, err, werr) {
			if !tr.refusedAlike {
				continue
			}
			// GiveBack and Refund of the checks Take refused fail alike.
			ds := make([]algorithms.Decision, len(checks))
			for i := range ds {
				ds[i].Allowed = true
			}
			dst := make([]algorithms.Refunded, len(checks))
			if giver != nil {
				_, gwerr := e.model.GiveBackAt(tnow, checks, ds, 0)
				same("GiveBack", nil, nil, giver.GiveBack(e.ctx, dst, checks, ds, 0), gwerr)
			}
			if refunder != nil {
				_, rwerr := e.model.RefundAt(tnow, checks, ds, 0)
				same("Refund", nil, nil, refunder.Refund(e.ctx, dst, checks, ds, 0), rwerr)
			}
			continue
		}
		for i, d := range got {
			if s := saneDecision(d); s != "" {
				fail(fmt.Sprintf("check %d: %s", i, s), got, checks)
			}
		}
		op := r.IntN(tr.ops) // 0: give back, 1: refund, else nothing
		if op > 1 {
			continue
		}
		waited := time.Duration(r.Int64N(int64(3 * time.Second)))
		dst := make([]algorithms.Refunded, len(checks))
		e.clock.Set(tnow.Add(waited))
		switch {
		case op == 0 && giver != nil:
			gw, gwerr := e.model.GiveBackAt(tnow.Add(waited), checks, want, waited)
			same("GiveBack", dst, gw, giver.GiveBack(e.ctx, dst, checks, got, waited), gwerr)
			hist = append(hist, fmt.Sprintf("  GiveBack waited %v", waited))
		case op == 1 && refunder != nil:
			rw, rwerr := e.model.RefundAt(tnow.Add(waited), checks, want, waited)
			same("Refund", dst, rw, refunder.Refund(e.ctx, dst, checks, got, waited), rwerr)
			hist = append(hist, fmt.Sprintf("  Refund waited %v", waited))
		}
	}
}
