package algorithms_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// manualClock is a concurrency-safe clock that moves only when told.
type manualClock struct{ ns atomic.Int64 }

func newManualClock(t time.Time) *manualClock {
	c := &manualClock{}
	c.ns.Store(t.UnixNano())
	return c
}

func (c *manualClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *manualClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }
func (c *manualClock) Set(t time.Time)         { c.ns.Store(t.UnixNano()) }

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) // aligned to every window used here

func newStore(t *testing.T, opts ...algorithms.MemoryOption) (*algorithms.MemoryStore, *manualClock) {
	t.Helper()
	c := newManualClock(epoch)
	s, err := algorithms.NewMemoryStore(append([]algorithms.MemoryOption{algorithms.WithClock(c)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, c
}

var (
	perSecond = algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Second}
	ctx       = context.Background()
)

func take(t *testing.T, s algorithms.Store, checks ...algorithms.Check) []algorithms.Decision {
	t.Helper()
	ds, err := s.Take(ctx, checks...)
	if err != nil {
		t.Fatalf("Take(%v) = %v", checks, err)
	}
	return ds
}

func TestMemoryStoreOptions(t *testing.T) {
	if _, err := algorithms.NewMemoryStore(algorithms.WithClock(nil)); err == nil {
		t.Error("NewMemoryStore(WithClock(nil)) = nil error, want one")
	}
	if _, err := algorithms.NewMemoryStore(algorithms.WithMaxKeys(-1)); err == nil {
		t.Error("NewMemoryStore(WithMaxKeys(-1)) = nil error, want one")
	}
	s, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	// The default clock is the system clock.
	d, err := s.TakeOne(ctx, algorithms.Check{Spec: perSecond, Key: "k"})
	if err != nil || !d.Allowed || d.ResetAfter <= 0 || d.ResetAfter > time.Second {
		t.Errorf("TakeOne on the system clock = %+v, %v", d, err)
	}
}

func TestMemoryStoreClosedAndCancelled(t *testing.T) {
	s, _ := newStore(t)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Take(cctx, algorithms.Check{Spec: perSecond, Key: "k"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Take(cancelled) = %v, want context.Canceled", err)
	}
	s.Close()
	s.Close() // idempotent
	if _, err := s.Take(ctx, algorithms.Check{Spec: perSecond, Key: "k"}); !errors.Is(err, algorithms.ErrClosed) {
		t.Errorf("Take after Close = %v, want ErrClosed", err)
	}
}

// TestMemoryStoreTakeOfNoChecks: a Take of no checks decides nothing and
// is no error (after the same context and Close checks as any Take).
func TestMemoryStoreTakeOfNoChecks(t *testing.T) {
	s, _ := newStore(t)
	if ds, err := s.Take(ctx); err != nil || len(ds) != 0 {
		t.Errorf("Take() = %v, %v; want no decisions, nil", ds, err)
	}
	if err := s.TakeInto(ctx, nil, nil); err != nil {
		t.Errorf("TakeInto(nil, nil) = %v, want nil", err)
	}
	s.Close()
	if _, err := s.Take(ctx); !errors.Is(err, algorithms.ErrClosed) {
		t.Errorf("Take() after Close = %v, want ErrClosed", err)
	}
}

// kindSpec returns a valid Spec of kind k: limit per second, in buckets
// sub-windows for sliding_buckets, queueing up to a second for leaky_queue.
func kindSpec(k algorithms.Kind, limit int64, buckets int) algorithms.Spec {
	spec := algorithms.Spec{Algorithm: k, Limit: limit, Window: time.Second}
	switch k {
	case algorithms.SlidingBuckets:
		spec.Buckets = buckets
	case algorithms.LeakyQueue:
		spec.MaxDelay = time.Second
	}
	return spec
}

// TestMemoryStoreCostOutOfRangeOnHeldKeys: a check whose cost is negative
// or above its Spec's capacity is a *CostError even when every key of the
// Take is already held (the quick path of single checks and of stacked
// checks), and the Take consumes nothing.
func TestMemoryStoreCostOutOfRangeOnHeldKeys(t *testing.T) {
	for _, k := range algorithms.Kinds {
		spec := kindSpec(k, 5, 5)
		for _, cost := range []int64{-1, -spec.Capacity(), spec.Capacity() + 1} {
			t.Run(fmt.Sprintf("%s/cost %d", k, cost), func(t *testing.T) {
				s, _ := newStore(t)
				a := algorithms.Check{Spec: spec, Key: "a"}
				b := algorithms.Check{Spec: spec, Key: "b"}
				take(t, s, a, b)
				bad := a
				bad.Cost = cost
				var ce *algorithms.CostError
				if _, err := s.Take(ctx, bad); !errors.As(err, &ce) {
					t.Errorf("Take(one check of cost %d) = %v, want a *CostError", cost, err)
				}
				if _, err := s.Take(ctx, b, bad); !errors.As(err, &ce) {
					t.Errorf("Take(b, a of cost %d) = %v, want a *CostError", cost, err)
				}
				// Nothing consumed: both keys still have all but the first unit.
				for _, d := range take(t, s, a, b) {
					if !d.Allowed || d.Remaining != spec.Capacity()-2 {
						t.Errorf("after the rejected Takes: %+v, want allowed with %d remaining", d, spec.Capacity()-2)
					}
				}
			})
		}
	}
}

// TestMemoryStoreSpecsEqualByValue: checks whose Specs are equal share the
// key's state even when their Algorithm strings are separate copies (as a
// Spec loaded from a config file has), and a Spec whose Algorithm only
// resembles a known kind (same length and first letter) is an error even
// when a valid Spec with the same numbers is held: specs are compared by
// value, the whole kind, on the single-check and the several-check paths.
func TestMemoryStoreSpecsEqualByValue(t *testing.T) {
	loaded := func(k algorithms.Kind) algorithms.Spec {
		spec := perSecond
		spec.Algorithm = algorithms.Kind(strings.Clone(string(k)))
		return spec
	}
	for _, two := range []bool{false, true} {
		s, _ := newStore(t)
		takeN := func(spec algorithms.Spec) ([]algorithms.Decision, error) {
			checks := []algorithms.Check{{Spec: spec, Key: "k"}}
			if two {
				checks = append(checks, algorithms.Check{Spec: perSecond, Key: "other"})
			}
			return s.Take(ctx, checks...)
		}
		for i := range perSecond.Limit {
			if ds, err := takeN(loaded(algorithms.FixedWindow)); err != nil || !ds[0].Allowed || ds[0].Remaining != perSecond.Limit-1-i {
				t.Fatalf("two checks %v: request %d under a loaded Spec = %+v, %v; want allowed with %d remaining", two, i+1, ds, err, perSecond.Limit-1-i)
			}
		}
		if ds, err := takeN(loaded(algorithms.FixedWindow)); err != nil || ds[0].Allowed {
			t.Errorf("two checks %v: request %d under a loaded Spec = %+v, %v; want denied: the copies did not share the key", two, perSecond.Limit+1, ds, err)
		}
		if ds, err := takeN(loaded("fixed_windoz")); err == nil {
			t.Errorf("two checks %v: Take under the kind fixed_windoz = %+v, want an error", two, ds)
		}
	}
}

func TestMemoryStoreSpecsDoNotShareState(t *testing.T) {
	s, _ := newStore(t)
	other := perSecond
	other.Limit = 11
	for i := 0; i < 10; i++ {
		take(t, s, algorithms.Check{Spec: perSecond, Key: "k"})
	}
	if d := take(t, s, algorithms.Check{Spec: other, Key: "k"})[0]; !d.Allowed || d.Remaining != 10 {
		t.Errorf("same key under another spec = %+v, want a fresh allowance", d)
	}
}

// Single checks under specs that alternate, and specs first used by
// several goroutines at once (the tables are found without the lock), keep
// each spec's count apart.
func TestMemoryStoreTakeOneAlternatingSpecs(t *testing.T) {
	s, _ := newStore(t)
	specs := make([]algorithms.Spec, 12)
	for i := range specs {
		specs[i] = perSecond
		specs[i].Limit = int64(100 + i)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 * len(specs) {
				sp := specs[(i+g)%len(specs)]
				if _, err := s.TakeOne(ctx, algorithms.Check{Spec: sp, Key: "k"}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, sp := range specs {
		d, err := s.TakeOne(ctx, algorithms.Check{Spec: sp, Key: "k"})
		if err != nil || !d.Allowed || d.Remaining != sp.Limit-41 {
			t.Errorf("spec limit %d after 40 single checks: %+v, %v; want Remaining %d", sp.Limit, d, err, sp.Limit-41)
		}
	}
}

// A Take that is denied consumes nothing, and its passing checks describe
// the state as it is.
func TestMemoryStoreDeniedTakeReportsUnconsumedState(t *testing.T) {
	s, _ := newStore(t)
	tight := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 1, Window: time.Minute}
	take(t, s, algorithms.Check{Spec: tight, Key: "u"})
	for _, k := range algorithms.Kinds {
		spec := kindSpec(k, 10, 2)
		t.Run(string(k), func(t *testing.T) {
			key := "p-" + string(k)
			before := take(t, s, algorithms.Check{Spec: spec, Key: key})[0]
			ds := take(t, s, algorithms.Check{Spec: spec, Key: key}, algorithms.Check{Spec: tight, Key: "u"})
			if ds[1].Allowed {
				t.Fatalf("tight check allowed: %+v", ds[1])
			}
			if !ds[0].Allowed || ds[0].Remaining != before.Remaining || ds[0].RetryAfter != 0 || ds[0].Delay != 0 {
				t.Errorf("passing check of a denied Take = %+v, want Allowed with Remaining %d as before", ds[0], before.Remaining)
			}
			after := take(t, s, algorithms.Check{Spec: spec, Key: key})[0]
			if after.Remaining != before.Remaining-1 {
				t.Errorf("after the denied Take, Remaining = %d, want %d: the denied Take consumed", after.Remaining, before.Remaining-1)
			}
		})
	}
}

func TestMemoryStoreSweepDropsIdleKeys(t *testing.T) {
	s, c := newStore(t)
	specs := []algorithms.Spec{
		perSecond,
		{Algorithm: algorithms.SlidingWindow, Limit: 10, Window: time.Second},
		{Algorithm: algorithms.SlidingLog, Limit: 10, Window: time.Second},
		{Algorithm: algorithms.SlidingBuckets, Limit: 10, Window: time.Second, Buckets: 4},
		{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Second},
		{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: time.Second, MaxDelay: time.Second},
	}
	for i := 0; i < 100; i++ {
		for _, sp := range specs {
			take(t, s, algorithms.Check{Spec: sp, Key: strconv.Itoa(i)})
		}
	}
	if got := s.Len(); got != 100*len(specs) {
		t.Fatalf("Len() = %d, want %d", got, 100*len(specs))
	}
	if got := s.Sweep(); got != 0 {
		t.Errorf("Sweep() right away dropped %d keys, want 0: they are in use", got)
	}
	c.Advance(2 * time.Second) // every kind above is back to full by then
	if got := s.Sweep(); got != 100*len(specs) {
		t.Errorf("Sweep() after 2s dropped %d keys, want %d", got, 100*len(specs))
	}
	if got := s.Len(); got != 0 {
		t.Errorf("Len() after Sweep = %d, want 0", got)
	}
}

// TestMemoryStoreSweepDropsEmptiedKeys: a key of a window kind whose
// units were all given back holds nothing, as a fresh key does, so it is
// idle: Sweep drops it at the instant of its Take (its window's start) and
// later in the same window (and sub-window, for sliding_buckets' next).
func TestMemoryStoreSweepDropsEmptiedKeys(t *testing.T) {
	for _, spec := range []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: 5, Window: 10 * time.Second},
		{Algorithm: algorithms.SlidingWindow, Limit: 5, Window: 10 * time.Second},
		{Algorithm: algorithms.SlidingBuckets, Limit: 5, Window: 10 * time.Second, Buckets: 5},
	} {
		for _, after := range []time.Duration{0, 2 * time.Second} {
			s, c := newStore(t)
			k := []algorithms.Check{{Spec: spec, Key: "k"}}
			ds := take(t, s, k...)
			given := make([]algorithms.Refunded, 1)
			if err := s.GiveBack(ctx, given, k, ds, 0); err != nil || !given[0].Given {
				t.Fatalf("%s: GiveBack of the key's only unit = %+v, %v; want it given back", spec, given[0], err)
			}
			c.Advance(after)
			if got := s.Sweep(); got != 1 {
				t.Errorf("%s: Sweep() %v after the give-back dropped %d keys, want 1 (the emptied key)", spec, after, got)
			}
			if got := s.Len(); got != 0 {
				t.Errorf("%s: Len() after Sweep = %d, want 0", spec, got)
			}
		}
	}
}

// TestMemoryStoreSweepSlidingPrevOnly: a sliding_window key whose current
// window counts nothing (its unit given back) but whose previous window
// counts one still weighs until its window ends, and not from then on:
// Sweep keeps it one nanosecond before and drops it at that instant or
// later within the next window.
func TestMemoryStoreSweepSlidingPrevOnly(t *testing.T) {
	const W = 10 * time.Second
	for _, after := range []time.Duration{0, W / 2} {
		s, c := newStore(t)
		k := []algorithms.Check{{Spec: algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 5, Window: W}, Key: "k"}}
		take(t, s, k...) // window 0
		c.Advance(W)
		ds := take(t, s, k...) // window 1: the previous window counts 1
		given := make([]algorithms.Refunded, 1)
		if err := s.GiveBack(ctx, given, k, ds, 0); err != nil || !given[0].Given {
			t.Fatalf("GiveBack of window 1's unit = %+v, %v; want it given back", given[0], err)
		}
		c.Advance(W - 1)
		if got := s.Sweep(); got != 0 {
			t.Errorf("Sweep() 1ns before window 1 ends dropped %d keys, want 0 (window 0's unit still weighs)", got)
		}
		c.Advance(1 + after)
		if got := s.Sweep(); got != 1 {
			t.Errorf("Sweep() %v after window 1 ends dropped %d keys, want 1 (nothing weighs from window 2 on)", after, got)
		}
		if got := s.Len(); got != 0 {
			t.Errorf("Len() after Sweep = %d, want 0", got)
		}
	}
}

// Idle keys go away without Sweep: a shard sweeps itself as it grows.
func TestMemoryStoreLazyExpiry(t *testing.T) {
	s, c := newStore(t)
	const n = 100_000
	for i := 0; i < n; i++ {
		take(t, s, algorithms.Check{Spec: perSecond, Key: "old" + strconv.Itoa(i)})
	}
	c.Advance(time.Second)
	for i := 0; i < n; i++ {
		take(t, s, algorithms.Check{Spec: perSecond, Key: "new" + strconv.Itoa(i)})
	}
	if got := s.Len(); got >= n*3/2 {
		t.Errorf("Len() = %d after %d idle and %d live keys, want < %d: idle keys are not expiring", got, n, n, n*3/2)
	}
}

func TestMemoryStoreMaxKeys(t *testing.T) {
	const bound = 64 * 100
	s, _ := newStore(t, algorithms.WithMaxKeys(bound))
	victim := algorithms.Check{Spec: perSecond, Key: "victim"}
	for i := 0; i < 10; i++ {
		take(t, s, victim)
	}
	if d := take(t, s, victim)[0]; d.Allowed {
		t.Fatalf("victim's 11th request allowed: %+v", d)
	}
	for i := 0; i < 50*bound; i++ {
		d := take(t, s, algorithms.Check{Spec: perSecond, Key: "flood" + strconv.Itoa(i)})[0]
		if !d.Allowed {
			t.Fatalf("flood key %d refused at the bound: %+v", i, d)
		}
		if i%997 == 0 && s.Len() > bound {
			t.Fatalf("Len() = %d, above the bound %d", s.Len(), bound)
		}
	}
	if got := s.Len(); got > bound {
		t.Errorf("Len() = %d, above the bound %d", got, bound)
	}
	if d := take(t, s, victim)[0]; d.Allowed {
		t.Errorf("victim allowed after a key flood: its state was evicted (%+v)", d)
	}
}

// Time never runs backwards for a key: an instant before the key's window
// is decided as that window's start.
func TestMemoryStoreClockGoesBack(t *testing.T) {
	for _, k := range algorithms.Kinds {
		spec := algorithms.Spec{Algorithm: k, Limit: 5, Window: time.Second}
		switch k {
		case algorithms.SlidingBuckets:
			spec.Buckets = 5
		case algorithms.LeakyQueue:
			continue // admits with a delay; nothing to exhaust at one instant
		}
		t.Run(string(k), func(t *testing.T) {
			s, c := newStore(t)
			c.Advance(10 * time.Second)
			for i := 0; i < 5; i++ {
				take(t, s, algorithms.Check{Spec: spec, Key: "k"})
			}
			c.Advance(-500 * time.Millisecond)
			if d := take(t, s, algorithms.Check{Spec: spec, Key: "k"})[0]; d.Allowed || d.RetryAfter <= 500*time.Millisecond {
				t.Errorf("after the clock went back 500ms: %+v, want denied with RetryAfter > 500ms", d)
			}
		})
	}
}

func TestMemoryStoreDoesNotAllocate(t *testing.T) {
	s, c := newStore(t)
	one := algorithms.Check{Spec: perSecond, Key: "k"}
	one.Spec.Limit = algorithms.MaxLimit
	take(t, s, one)
	if n := testing.AllocsPerRun(1000, func() { s.TakeOne(ctx, one) }); n != 0 {
		t.Errorf("TakeOne allocates %v times per call, want 0", n)
	}
	// sliding_window in a key's steady state: a count in the previous
	// window, which the estimate weighs (TakeOne's slidingAdmitWeighed).
	sw := algorithms.Check{Spec: one.Spec, Key: "sw"}
	sw.Spec.Algorithm = algorithms.SlidingWindow
	take(t, s, sw)
	c.Advance(1500 * time.Millisecond)
	take(t, s, sw)
	if n := testing.AllocsPerRun(1000, func() { s.TakeOne(ctx, sw) }); n != 0 {
		t.Errorf("TakeOne of a sliding_window key with a previous window's count allocates %v times per call, want 0", n)
	}
	four := []algorithms.Check{one, one, one, one}
	for i := range four {
		four[i].Key = "k" + strconv.Itoa(i)
		four[i].Spec.Algorithm = algorithms.Kinds[i*2%len(algorithms.Kinds)]
		if four[i].Spec.Algorithm == algorithms.LeakyQueue {
			four[i].Spec.Algorithm = algorithms.SlidingWindow
		}
	}
	dst := make([]algorithms.Decision, len(four))
	if err := s.TakeInto(ctx, dst, four); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(1000, func() { s.TakeInto(ctx, dst, four) }); n != 0 {
		t.Errorf("TakeInto with 4 checks allocates %v times per call, want 0", n)
	}
	if err := s.TakeInto(ctx, dst[:1], four); err == nil {
		t.Error("TakeInto with a short dst = nil error, want one")
	}
}

// TestMemoryStoreTakeIntoEightChecksDoesNotAllocate pins TakeInto's
// promise of no allocation for up to 8 checks on keys already held, at the
// 8 itself: a Take of eight stacked policies, of the fixed-size kinds, then
// the same eight with a sliding_log and a sliding_buckets check among them.
func TestMemoryStoreTakeIntoEightChecksDoesNotAllocate(t *testing.T) {
	s, _ := newStore(t)
	kinds := []algorithms.Kind{algorithms.FixedWindow, algorithms.SlidingWindow, algorithms.TokenBucket, algorithms.LeakyBucket}
	eight := make([]algorithms.Check, 8)
	for i := range eight {
		eight[i] = algorithms.Check{
			Spec: algorithms.Spec{Algorithm: kinds[i%len(kinds)], Limit: algorithms.MaxLimit, Window: time.Second},
			Key:  "k" + strconv.Itoa(i),
		}
	}
	mixed := slices.Clone(eight)
	mixed[0].Spec = algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: algorithms.MaxLimit, Window: time.Second}
	mixed[1].Spec = algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: algorithms.MaxLimit, Window: time.Second, Buckets: 4}
	dst := make([]algorithms.Decision, 8)
	for name, checks := range map[string][]algorithms.Check{"fixed-size kinds": eight, "with logs": mixed} {
		if err := s.TakeInto(ctx, dst, checks); err != nil || !dst[0].Allowed {
			t.Fatalf("%s: TakeInto = %v, %+v", name, err, dst)
		}
		if n := testing.AllocsPerRun(100, func() { s.TakeInto(ctx, dst, checks) }); n != 0 {
			t.Errorf("%s: TakeInto with 8 checks on held keys allocates %v times per call, want 0", name, n)
		}
	}
}

func TestLimiter(t *testing.T) {
	s, c := newStore(t)
	if _, err := algorithms.NewLimiter(nil, perSecond); err == nil {
		t.Error("NewLimiter(nil store) = nil error")
	}
	if _, err := algorithms.NewLimiter(s, algorithms.Spec{}); !errors.Is(err, algorithms.ErrInvalidSpec) {
		t.Errorf("NewLimiter(zero spec) = %v, want ErrInvalidSpec", err)
	}
	l, err := algorithms.NewLimiter(s, perSecond)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := l.AllowN(ctx, "k", 9); err != nil || !d.Allowed || d.Remaining != 1 {
		t.Errorf("AllowN(9) = %+v, %v", d, err)
	}
	if d, _ := l.Allow(ctx, "k"); !d.Allowed || d.Remaining != 0 {
		t.Errorf("Allow = %+v, want the last unit", d)
	}
	if d, _ := l.Allow(ctx, "k"); d.Allowed || d.RetryAfter != time.Second {
		t.Errorf("Allow over the limit = %+v, want denied for 1s", d)
	}
	c.Advance(time.Second)
	if d, _ := l.Allow(ctx, "k"); !d.Allowed {
		t.Errorf("Allow in the next window = %+v", d)
	}
	for _, n := range []int64{0, -1, 11} {
		if _, err := l.AllowN(ctx, "k", n); !errors.Is(err, algorithms.ErrInvalidCost) {
			t.Errorf("AllowN(%d) = %v, want ErrInvalidCost", n, err)
		}
	}
}

// Regression: with the clock far behind a bucket's state, the deficit
// exceeds the capacity; Remaining must stay 0, never negative.
func TestMemoryStoreTokenBucketClockFarBack(t *testing.T) {
	s, c := newStore(t)
	spec := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Second}
	take(t, s, algorithms.Check{Spec: spec, Key: "k", Cost: 10})
	c.Advance(-time.Hour)
	d := take(t, s, algorithms.Check{Spec: spec, Key: "k"})[0]
	if d.Allowed || d.Remaining != 0 {
		t.Fatalf("an hour back: %+v, want denied with Remaining 0", d)
	}
	if want := time.Hour + 100*time.Millisecond; d.RetryAfter != want || d.NextAfter != want {
		t.Errorf("an hour back: RetryAfter %s, NextAfter %s; want both %s", d.RetryAfter, d.NextAfter, want)
	}
}

// A small bound still leaves eviction a choice: a flood does not evict a
// client that is being limited.
func TestMemoryStoreSmallMaxKeysKeepsVictim(t *testing.T) {
	for _, bound := range []int{1, 2, 64, 300} {
		s, _ := newStore(t, algorithms.WithMaxKeys(bound))
		victim := algorithms.Check{Spec: perSecond, Key: "victim"}
		take(t, s, victim, victim, victim, victim, victim, victim, victim, victim, victim, victim)
		for i := 0; i < 20*bound+100; i++ {
			take(t, s, algorithms.Check{Spec: perSecond, Key: "flood" + strconv.Itoa(i)})
			if s.Len() > bound {
				t.Fatalf("WithMaxKeys(%d): Len() = %d", bound, s.Len())
			}
		}
		if bound > 1 {
			if d := take(t, s, victim)[0]; d.Allowed {
				t.Errorf("WithMaxKeys(%d): victim allowed after a flood: evicted", bound)
			}
		}
	}
}

// Takes that lock several shards, in opposite orders, from many goroutines:
// the shards are locked in one global order, so this never deadlocks.
func TestMemoryStoreMultiShardTakesDoNotDeadlock(t *testing.T) {
	s, _ := newStore(t)
	spec := perSecond
	spec.Limit = algorithms.MaxLimit
	keys := make([]string, 64)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for g := 0; g < 16; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 2000; i++ {
					a, b := keys[(g+i)%64], keys[(g*7+i*3)%64]
					if g%2 == 1 {
						a, b = b, a
					}
					if _, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: a}, algorithms.Check{Spec: spec, Key: b}, algorithms.Check{Spec: perSecond, Key: a}); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
	}()
	hangguard.Await(t, done, 2*time.Minute, "multi-shard Takes deadlocked: not all returned")
}

// TestLimiterRefundN: a Limiter gives a leaky_queue place back through its
// store; for other kinds it does nothing.
func TestLimiterRefundN(t *testing.T) {
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(newManualClock(time.Unix(1_700_000_000, 0))))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	queue, _ := algorithms.NewLimiter(store, algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: time.Minute})
	queue.Allow(ctx, "k")
	d, _ := queue.Allow(ctx, "k") // departs at 1 s
	rep, err := queue.RefundN(ctx, "k", 1, d.Delay)
	if err != nil {
		t.Fatal(err)
	}
	// The queue as it stands: free in 1 s, 60 more fit (its capacity 61).
	want := algorithms.Refunded{Decision: algorithms.Decision{Allowed: true, Limit: 61, Remaining: 60, ResetAfter: time.Second, NextAfter: time.Second}, Given: true}
	if rep != want {
		t.Errorf("RefundN reported %+v, want %+v", rep, want)
	}
	if d, _ := queue.Allow(ctx, "k"); d.Delay != time.Second {
		t.Errorf("after RefundN: Delay %v, want 1s (the place given back)", d.Delay)
	}
	fixed, _ := algorithms.NewLimiter(store, algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 2, Window: time.Minute})
	fixed.Allow(ctx, "k")
	if rep, err := fixed.RefundN(ctx, "k", 1, 0); err != nil || rep != (algorithms.Refunded{}) {
		t.Fatalf("fixed_window RefundN: %+v, %v; want the zero Refunded, nil", rep, err)
	}
	if d, _ := fixed.Allow(ctx, "k"); d.Remaining != 0 {
		t.Errorf("fixed_window after RefundN: Remaining %d, want 0 (nothing given back)", d.Remaining)
	}
}

// TestLimiterGiveBackN: a Limiter gives back the units of an admitted
// AllowN through its store, by GiveBacker's rules; with a store that is not
// a GiveBacker it does nothing.
func TestLimiterGiveBackN(t *testing.T) {
	clock := newManualClock(time.Unix(1_700_000_040, 0))
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 3, Window: time.Minute}
	l, err := algorithms.NewLimiter(store, spec)
	if err != nil {
		t.Fatal(err)
	}
	l.Allow(ctx, "k")
	d, err := l.AllowN(ctx, "k", 2)
	if err != nil || !d.Allowed || d.Remaining != 0 {
		t.Fatalf("AllowN(2) = %+v, %v; want the last two units", d, err)
	}
	clock.Advance(time.Second)
	rep, err := l.GiveBackN(ctx, "k", 2, d, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// The window as it stands (the clock is 1 s into it): 1 unit of 3
	// counted, so 2 remain, and all 3 are back when it ends in 59 s.
	want := algorithms.Refunded{Decision: algorithms.Decision{Allowed: true, Limit: 3, Remaining: 2, ResetAfter: 59 * time.Second, NextAfter: 59 * time.Second}, Given: true}
	if rep != want {
		t.Errorf("GiveBackN reported %+v, want %+v", rep, want)
	}
	if d, _ := l.AllowN(ctx, "k", 2); !d.Allowed {
		t.Errorf("after GiveBackN of 2: AllowN(2) = %+v, want it admitted", d)
	}
	// A denied decision gives nothing back.
	denied, _ := l.Allow(ctx, "k")
	if denied.Allowed {
		t.Fatalf("a fourth unit in the window was admitted: %+v", denied)
	}
	if rep, err := l.GiveBackN(ctx, "k", 1, denied, 0); err != nil || rep.Given {
		t.Errorf("GiveBackN of a denial = %+v, %v; want nothing given", rep, err)
	}
	// A store that is not a GiveBacker: nothing, no error.
	plain, _ := algorithms.NewLimiter(storeOnly{store}, spec)
	if rep, err := plain.GiveBackN(ctx, "other", 1, algorithms.Decision{Allowed: true}, 0); err != nil || rep != (algorithms.Refunded{}) {
		t.Errorf("GiveBackN on a plain Store = %+v, %v; want the zero Refunded, nil", rep, err)
	}
}

// storeOnly hides every method of its Store but Take.
type storeOnly struct{ s algorithms.Store }

func (s storeOnly) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	return s.s.Take(ctx, checks...)
}

// TestLimiterGiveBackNZero: n = 0 is a caller's mistake in GiveBackN and
// RefundN, as in AllowN (a Check's Cost 0 means 1): a *CostError, and no
// unit or place comes back.
func TestLimiterGiveBackNZero(t *testing.T) {
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(newManualClock(time.Unix(1_700_000_040, 0))))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	l, _ := algorithms.NewLimiter(store, algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 3, Window: time.Minute})
	d, err := l.AllowN(ctx, "k", 2)
	if err != nil || !d.Allowed || d.Remaining != 1 {
		t.Fatalf("AllowN(2) = %+v, %v; want admitted, 1 left", d, err)
	}
	rep, err := l.GiveBackN(ctx, "k", 0, d, 0)
	var ce *algorithms.CostError
	if !errors.As(err, &ce) || ce.Cost != 0 || rep != (algorithms.Refunded{}) {
		t.Errorf("GiveBackN(0) = %+v, %v; want the zero Refunded and a *CostError of cost 0", rep, err)
	}
	if d, _ := l.AllowN(ctx, "k", 2); d.Allowed {
		t.Errorf("after GiveBackN(0): AllowN(2) = %+v, want it denied (nothing given back)", d)
	}

	q, _ := algorithms.NewLimiter(store, algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: time.Minute})
	q.Allow(ctx, "q")
	d, _ = q.Allow(ctx, "q") // departs in 1 s
	rep, err = q.RefundN(ctx, "q", 0, d.Delay)
	if !errors.As(err, &ce) || ce.Cost != 0 || rep != (algorithms.Refunded{}) {
		t.Errorf("RefundN(0) = %+v, %v; want the zero Refunded and a *CostError of cost 0", rep, err)
	}
	if d, _ := q.Allow(ctx, "q"); d.Delay != 2*time.Second {
		t.Errorf("after RefundN(0): Delay %v, want 2s (the place kept)", d.Delay)
	}
}

// TestMemoryStoreRefundOfKeyNotHeld: a Refund of a leaky_queue check whose
// key the store does not hold (swept, evicted, or never taken here) gives
// nothing back and says so (Given false), also when other keys of its Spec
// are held in its shard, and reports a fresh queue; the held key's queue
// is untouched.
func TestMemoryStoreRefundOfKeyNotHeld(t *testing.T) {
	s, _ := newStore(t)
	queue := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: 5 * time.Second}
	held := algorithms.Check{Spec: queue, Key: "held"}
	var ds []algorithms.Decision
	for range 3 {
		ds = take(t, s, held)
	}
	if !ds[0].Allowed || ds[0].Delay != 2*time.Second {
		t.Fatalf("third Take of the held queue = %+v, want admitted with a 2s delay", ds[0])
	}
	// Keys of the same Spec in every shard (2,000 of them leave one of 64
	// shards without any with probability 10^-12), whichever shard the
	// absent key falls in.
	for i := range 2000 {
		take(t, s, algorithms.Check{Spec: queue, Key: "other-" + strconv.Itoa(i)})
	}
	absent := algorithms.Check{Spec: queue, Key: "absent"}
	dst := make([]algorithms.Refunded, 1)
	if err := s.Refund(ctx, dst, []algorithms.Check{absent}, ds, 0); err != nil {
		t.Fatal(err)
	}
	if dst[0].Given {
		t.Errorf("Refund of a key not held = %+v, want Given false", dst[0])
	}
	if !dst[0].Allowed || dst[0].Remaining != queue.Capacity() || dst[0].Delay != 0 {
		t.Errorf("Refund of a key not held = %+v, want a fresh queue's look (admitted, %d left)", dst[0], queue.Capacity())
	}
	// The held queue kept its three places: its next request waits 3s.
	if d := take(t, s, held)[0]; !d.Allowed || d.Delay != 3*time.Second {
		t.Errorf("held queue after another key's refund = %+v, want admitted with a 3s delay", d)
	}
}
