package algorithms_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// within runs f in a goroutine and fails t when it does not return within
// 2 s of the process's running time (a bound against a hang, not a
// measure of speed: see hangguard).
func within(t *testing.T, what string, f func()) {
	t.Helper()
	withinN(t, what, manyChecks, f)
}

// withinN is within for a call of n checks.
func withinN(t *testing.T, what string, n int, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	if _, ok := hangguard.Within(done, 2*time.Second); !ok {
		t.Fatalf("%s (%d checks) took more than 2s", what, n)
	}
}

// distinctChecks returns manyChecks checks of spec, each on a key of its
// own.
func distinctChecks(spec algorithms.Spec) []algorithms.Check {
	checks := make([]algorithms.Check, manyChecks)
	for i := range checks {
		checks[i] = algorithms.Check{Spec: spec, Key: fmt.Sprint("k", i)}
	}
	return checks
}

// wantTwice fails t unless err is the *CostError of a check of spec
// naming a key of limit 1 a second time.
func wantTwice(t *testing.T, what string, err error, spec algorithms.Spec) {
	t.Helper()
	var ce *algorithms.CostError
	if !errors.As(err, &ce) || *ce != (algorithms.CostError{Spec: spec, Cost: 0, Combined: 2}) {
		t.Fatalf("%s naming a key twice: error %v (%#v), want the CostError of Combined 2", what, err, ce)
	}
}

// TestManyChecksLinear: ValidateChecks, and the memory store's Take, Peek,
// GiveBack and Refund, look for a key named twice among the checks of one
// call in time linear in the checks (they compared every pair; Take and
// Peek's give-back look did so holding the locks of the shards of the
// call's keys, every shard for a call of a few hundred keys, which every
// other call of the store waits for). A key named twice is still found,
// with the same error.
func TestManyChecksLinear(t *testing.T) {
	fixed := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Minute}
	checks := distinctChecks(fixed)
	twice := append([]algorithms.Check(nil), checks...)
	twice[manyChecks-1].Key = twice[0].Key

	t.Run("ValidateChecks", func(t *testing.T) {
		var err, errTwice error
		within(t, "ValidateChecks", func() { err = algorithms.ValidateChecks(checks) })
		within(t, "ValidateChecks naming a key twice", func() { errTwice = algorithms.ValidateChecks(twice) })
		if err != nil {
			t.Fatalf("ValidateChecks of keys of their own = %v", err)
		}
		wantTwice(t, "ValidateChecks", errTwice, fixed)
	})

	t.Run("Take", func(t *testing.T) {
		s, _ := newStore(t)
		var ds []algorithms.Decision
		var err, errTwice error
		within(t, "Take", func() { ds, err = s.Take(ctx, checks...) })
		within(t, "Take naming a key twice", func() { _, errTwice = s.Take(ctx, twice...) })
		if err != nil || !ds[0].Allowed || !ds[manyChecks-1].Allowed {
			t.Fatalf("Take of keys of their own = %v", err)
		}
		wantTwice(t, "Take", errTwice, fixed)
		// Every key is at its limit: the Take again is denied, each check
		// reporting its key as it is.
		within(t, "a denied Take", func() { ds, err = s.Take(ctx, checks...) })
		if err != nil || ds[0].Allowed || ds[0].Remaining != 0 {
			t.Fatalf("Take again = %v, %+v; want denied", err, ds[0])
		}
	})

	t.Run("TakeAtBound", func(t *testing.T) {
		// At the WithMaxKeys bound (10 keys a shard), each new key of the
		// Take evicts one, sparing the keys of the Take: manyChecks/6 new
		// keys (5000: over a minute for 8000) once took seconds.
		s, _ := newStore(t, algorithms.WithMaxKeys(640))
		some := checks[:manyChecks/6]
		var ds []algorithms.Decision
		var err error
		withinN(t, "Take at the WithMaxKeys bound", len(some), func() { ds, err = s.Take(ctx, some...) })
		if err != nil || !ds[0].Allowed || !ds[len(some)-1].Allowed {
			t.Fatalf("Take at the bound = %v", err)
		}
	})

	t.Run("TakeOneKey", func(t *testing.T) {
		// One key named manyChecks times, within its limit, then again
		// after one unit: denied, every check before the last reporting
		// the key as it is.
		s, _ := newStore(t)
		spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: manyChecks, Window: time.Minute}
		one := make([]algorithms.Check, manyChecks)
		for i := range one {
			one[i] = algorithms.Check{Spec: spec, Key: "one"}
		}
		var ds []algorithms.Decision
		var err error
		within(t, "Take on one key", func() { ds, err = s.Take(ctx, one...) })
		if err != nil || !ds[manyChecks-1].Allowed || ds[manyChecks-1].Remaining != 0 {
			t.Fatalf("Take on one key = %v, last %+v", err, ds[manyChecks-1])
		}
		other := algorithms.Check{Spec: spec, Key: "other"}
		take(t, s, other)
		for i := range one {
			one[i].Key = "other"
		}
		within(t, "a denied Take on one key", func() { ds, err = s.Take(ctx, one...) })
		if err != nil || ds[manyChecks-1].Allowed || !ds[manyChecks-2].Allowed || ds[manyChecks-2].Remaining != manyChecks-1 {
			t.Fatalf("denied Take on one key = %v, last two %+v", err, ds[manyChecks-2:])
		}
	})

	t.Run("Peek", func(t *testing.T) {
		s, _ := newStore(t)
		dst := make([]algorithms.Decision, manyChecks)
		var err, errTwice error
		within(t, "Peek", func() { err = s.Peek(ctx, dst, checks) })
		within(t, "Peek naming a key twice", func() { errTwice = s.Peek(ctx, dst, twice) })
		if err != nil || !dst[0].Allowed {
			t.Fatalf("Peek of keys of their own = %v", err)
		}
		wantTwice(t, "Peek", errTwice, fixed)
	})

	t.Run("GiveBack", func(t *testing.T) {
		s, _ := newStore(t)
		bucket := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 1, Window: time.Minute}
		checks := distinctChecks(bucket)
		ds := take(t, s, checks...)
		dst := make([]algorithms.Refunded, manyChecks)
		twice := append([]algorithms.Check(nil), checks...)
		twice[manyChecks-1].Key = twice[0].Key
		var err, errTwice error
		within(t, "GiveBack naming a key twice", func() { errTwice = s.GiveBack(ctx, dst, twice, ds, 0) })
		within(t, "GiveBack", func() { err = s.GiveBack(ctx, dst, checks, ds, 0) })
		if err != nil || !dst[0].Given || !dst[manyChecks-1].Given || dst[manyChecks-1].Remaining != 1 {
			t.Fatalf("GiveBack of keys of their own = %v, last %+v", err, dst[manyChecks-1])
		}
		wantTwice(t, "GiveBack", errTwice, bucket)
	})

	t.Run("Refund", func(t *testing.T) {
		s, _ := newStore(t)
		queue := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Minute}
		checks := distinctChecks(queue)
		ds := take(t, s, checks...)
		dst := make([]algorithms.Refunded, manyChecks)
		twice := append([]algorithms.Check(nil), checks...)
		twice[manyChecks-1].Key = twice[0].Key
		var err, errTwice error
		within(t, "Refund naming a key twice", func() { errTwice = s.Refund(ctx, dst, twice, ds, 0) })
		within(t, "Refund", func() { err = s.Refund(ctx, dst, checks, ds, 0) })
		if err != nil || !dst[0].Given || !dst[manyChecks-1].Given {
			t.Fatalf("Refund of keys of their own = %v, last %+v", err, dst[manyChecks-1])
		}
		// A queue of capacity 1 takes a request behind none: the second
		// check on a key is behind one, Combined 2.
		wantTwice(t, "Refund", errTwice, queue)
	})
}
