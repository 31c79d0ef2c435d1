package algotest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

const (
	goroutines = 64
	perRoutine = 4
)

// hammer runs goroutines×perRoutine Takes of checks at the clock's frozen
// instant and returns the decisions of the first check of every admitted call.
func hammer(t *testing.T, store algorithms.Store, checks ...algorithms.Check) []algorithms.Decision {
	t.Helper()
	var (
		mu       sync.Mutex
		admitted []algorithms.Decision
		firstErr error
		wg       sync.WaitGroup
	)
	for range goroutines {
		wg.Go(func() {
			for range perRoutine {
				ds, err := store.Take(t.Context(), checks...)
				mu.Lock()
				switch {
				case err != nil:
					firstErr = cmp.Or(firstErr, err)
				case len(ds) != len(checks):
					firstErr = cmp.Or(firstErr, fmt.Errorf("%d decisions for %d checks", len(ds), len(checks)))
				case allAllowed(ds):
					admitted = append(admitted, ds[0])
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("concurrent Take(%s): %v", formatChecks(checks), firstErr)
	}
	return admitted
}

// deadlockAfter is how long waitOrDeadlock waits: far longer than the calls
// take (milliseconds), so that only a store that never returns trips it.
const deadlockAfter = time.Minute

// waitOrDeadlock waits for wg, failing the test if that takes longer than
// deadlockAfter of real time: the goroutines are stuck.
func waitOrDeadlock(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	timer := time.NewTimer(deadlockAfter)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		t.Fatalf("%s: not done after %v: the store deadlocked", what, deadlockAfter)
	}
}

func allAllowed(ds []algorithms.Decision) bool {
	for _, d := range ds {
		if !d.Allowed {
			return false
		}
	}
	return true
}

func runConcurrency(t *testing.T, h Harness) {
	const c = 100 // < goroutines·perRoutine
	for _, spec := range kindSpecs(c) {
		t.Run(string(spec.Algorithm), func(t *testing.T) {
			clock := NewClock(Base.Add(17 * time.Second)) // frozen
			store := h.New(t, clock)
			admitted := hammer(t, store, algorithms.Check{Spec: spec, Key: "hot"})
			if len(admitted) != c {
				t.Fatalf("%s: %d goroutines × %d unit requests at one instant admitted %d, want exactly the capacity %d",
					spec, goroutines, perRoutine, len(admitted), c)
			}
			// Each admitted call saw the one before it: Remaining runs c−1 .. 0.
			rem := make([]int64, len(admitted))
			for i, d := range admitted {
				rem[i] = d.Remaining
			}
			sort.Slice(rem, func(i, j int) bool { return rem[i] > rem[j] })
			for i, r := range rem {
				if r != int64(c-1-i) {
					t.Fatalf("%s: the admitted calls report Remaining %v, want each of %d..0 once", spec, rem, c-1)
				}
			}
			if spec.Algorithm == algorithms.LeakyQueue {
				seen := make(map[time.Duration]bool)
				for _, d := range admitted {
					if seen[d.Delay] {
						t.Fatalf("%s: two admitted requests were given the same Delay %v", spec, d.Delay)
					}
					seen[d.Delay] = true
				}
			}
		})
	}
	t.Run("mixed_costs", func(t *testing.T) {
		// Calls of cost 1 and 2 race for one key: what they take adds up to
		// at most the capacity, and the key accounts for exactly that.
		for _, spec := range kindSpecs(c) {
			if spec.Algorithm == algorithms.LeakyQueue {
				continue // a queue admits any cost while its wait is short enough
			}
			clock := NewClock(Base.Add(17 * time.Second))
			store := h.New(t, clock)
			var (
				mu    sync.Mutex
				taken int64
				wg    sync.WaitGroup
			)
			for g := range goroutines {
				check := algorithms.Check{Spec: spec, Key: "mixed", Cost: int64(1 + g%2)}
				wg.Go(func() {
					for range perRoutine {
						ds, err := store.Take(t.Context(), check)
						if err != nil {
							t.Errorf("Take(%s): %v", formatCheck(check), err)
							return
						}
						if ds[0].Allowed {
							mu.Lock()
							taken += check.Cost
							mu.Unlock()
						}
					}
				})
			}
			wg.Wait()
			if taken > c || taken < c-1 {
				t.Fatalf("%s: concurrent calls of cost 1 and 2 took %d units at one instant, want %d or %d (the capacity, or one less when only calls of cost 2 were left)", spec, taken, c-1, c)
			}
			ds, err := store.Take(t.Context(), algorithms.Check{Spec: spec, Key: "mixed", Cost: c})
			if err != nil {
				t.Fatal(err)
			}
			if want := c - taken; ds[0].Remaining != want || ds[0].Allowed {
				t.Fatalf("%s: after the admitted calls took %d units, a probe reports %+v; want Remaining %d", spec, taken, ds[0], want)
			}
		}
	})
	t.Run("opposite_orders", func(t *testing.T) {
		// Two-check calls over a few keys, in both orders, from every
		// goroutine: no deadlock, and no update is lost.
		clock := NewClock(Base.Add(17 * time.Second))
		store := h.New(t, clock)
		spec := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 1000, Window: time.Second, Burst: 100_000}
		const keys = 3
		var (
			mu   sync.Mutex
			took [keys]int64
			wg   sync.WaitGroup
		)
		const calls = 60 // per goroutine; a lock-order bug deadlocks here only now and then
		for g := range goroutines {
			wg.Go(func() {
				for i := range calls {
					a, b := (g+i)%keys, (g*3+i+1)%keys
					if a == b {
						b = (b + 1) % keys
					}
					ds, err := store.Take(t.Context(),
						algorithms.Check{Spec: spec, Key: fmt.Sprint("k", a)},
						algorithms.Check{Spec: spec, Key: fmt.Sprint("k", b)})
					if err != nil || !allAllowed(ds) {
						t.Errorf("Take(k%d, k%d) = %+v, %v; want both admitted", a, b, ds, err)
						return
					}
					mu.Lock()
					took[a]++
					took[b]++
					mu.Unlock()
				}
			})
		}
		waitOrDeadlock(t, &wg, "two-key calls in opposite orders")
		for k := range keys {
			ds, err := store.Take(t.Context(), algorithms.Check{Spec: spec, Key: fmt.Sprint("k", k)})
			if err != nil {
				t.Fatal(err)
			}
			if want := 100_000 - took[k] - 1; ds[0].Remaining != want {
				t.Errorf("k%d: Remaining %d after %d concurrent units and a probe, want %d", k, ds[0].Remaining, took[k], want)
			}
		}
	})
	t.Run("multi_check", func(t *testing.T) {
		// Every call takes one unit of a (50) and one of b (1000): exactly 50
		// calls pass, and b keeps exactly 50 of its units taken.
		clock := NewClock(Base.Add(17 * time.Second))
		store := h.New(t, clock)
		a := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 50, Window: time.Minute}, Key: "a"}
		b := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 1, Window: time.Second, Burst: 1000}, Key: "b"}
		if got := len(hammer(t, store, a, b)); got != 50 {
			t.Fatalf("concurrent Take(a 50, b 1000) admitted %d calls, want 50", got)
		}
		ds, err := store.Take(t.Context(), b)
		if err != nil {
			t.Fatal(err)
		}
		if ds[0].Remaining != 1000-50-1 {
			t.Fatalf("b after 50 admitted calls and one more: Remaining = %d, want %d (denied calls must not consume)", ds[0].Remaining, 1000-50-1)
		}
	})
}

func runAllOrNothing(t *testing.T, h Harness) {
	closed := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}, Key: "closed"}
	for _, spec := range kindSpecs(4) {
		t.Run(string(spec.Algorithm), func(t *testing.T) {
			e := newEnv(t, h)
			c := spec.Capacity()
			p := algorithms.Check{Spec: spec, Key: "p"}
			e.take(0, closed) // exhausts the second check
			ds := e.take(time.Second, p, closed)
			if ds[1].Allowed {
				t.Fatalf("%s: the exhausted check was admitted", spec)
			}
			ds = e.take(time.Second, p)
			if !ds[0].Allowed || ds[0].Remaining != c-1 {
				t.Fatalf("%s: after a denied call, a single request reports %+v; want it admitted with Remaining %d (the denied call consumed nothing)", spec, ds[0], c-1)
			}
			// Two checks that each fit alone but not together consume nothing.
			all := p
			all.Cost = c - 1
			ds = e.take(time.Second, all, p)
			if !ds[0].Allowed || ds[1].Allowed || ds[0].Remaining != c-1 {
				t.Fatalf("%s: Take(cost %d, cost 1) with %d left = %+v; want the first passing, the second denied, nothing consumed", spec, c-1, c-1, ds)
			}
			// Two checks on the same key see each other.
			ds = e.take(time.Second, p, p)
			if !allAllowed(ds) || ds[0].Remaining != c-2 || ds[1].Remaining != c-3 {
				t.Fatalf("%s: Take(p, p) with %d left = %+v; want both admitted, the second seeing the first", spec, c-1, ds)
			}
			// A key three times after another key, with costs 1, c−2 and 1
			// (c together: a fresh key admits them), on a key with 2 left:
			// the first passes and reports the key as it is (2 left), the
			// second is denied (the first left 1), and so is the third,
			// decided as if the second had been admitted, with a RetryAfter
			// no shorter: a retry counts the second again. (A queue admits
			// the second: its delay fits, whatever its cost.)
			if spec.Algorithm != algorithms.LeakyQueue {
				q, r := algorithms.Check{Spec: spec, Key: "q"}, algorithms.Check{Spec: spec, Key: "r"}
				rMost := r
				rMost.Cost = c - 2
				e.take(time.Second, rMost)
				ds = e.take(time.Second, q, r, rMost, r)
				if !ds[1].Allowed || ds[1].Remaining != 2 || ds[2].Allowed || ds[3].Allowed || ds[3].RetryAfter < ds[2].RetryAfter {
					t.Fatalf("%s: Take(q, r, r cost %d, r) on an r with 2 left = %+v; want the first r passing with Remaining 2, the second and the third denied, the third's RetryAfter no shorter", spec, c-2, ds)
				}
			}
			e.take(time.Second, p)
		})
	}
}

func runExpiry(t *testing.T, h Harness) {
	for _, spec := range kindSpecs(3) {
		t.Run(string(spec.Algorithm), func(t *testing.T) {
			e := newEnv(t, h)
			var last algorithms.Decision
			for _, key := range []string{"k1", "k2"} {
				at := 1500 * time.Millisecond
				for i := range 5 {
					c := algorithms.Check{Spec: spec, Key: key}
					if i == 4 {
						c.Cost = 2
					}
					last = e.take(at, c)[0]
					at += 7 * time.Millisecond
				}
			}
			if last.ResetAfter <= 0 {
				t.Fatalf("%s: a key that used its capacity reports ResetAfter %v", spec, last.ResetAfter)
			}
			at := 1500*time.Millisecond + 4*7*time.Millisecond + last.ResetAfter
			// 1 ns early the key still differs from a fresh one (model checks it).
			e.take(at-time.Nanosecond, algorithms.Check{Spec: spec, Key: "k1"})
			if sw, ok := e.store.(interface{ Sweep() int }); ok {
				e.clock.Set(Base.Add(at))
				sw.Sweep()
			}
			fresh := e.take(at, algorithms.Check{Spec: spec, Key: "fresh", Cost: 2})[0]
			got := e.take(at, algorithms.Check{Spec: spec, Key: "k2", Cost: 2})[0]
			if got != fresh {
				t.Fatalf("%s: idle for its ResetAfter (%v), the key decides %+v; a fresh key decides %+v", spec, last.ResetAfter, got, fresh)
			}
		})
	}
	t.Run("sweep", func(t *testing.T) {
		clock := NewClock(Base)
		store, s := newSweeper(t, h, clock)
		var longest time.Duration
		for i, spec := range kindSpecs(3) {
			ds, err := store.Take(t.Context(), algorithms.Check{Spec: spec, Key: fmt.Sprint("k", i)})
			if err != nil {
				t.Fatal(err)
			}
			longest = max(longest, ds[0].ResetAfter)
		}
		if got := s.Len(); got != 7 {
			t.Fatalf("Len() = %d after 7 keys, want 7", got)
		}
		clock.Advance(longest - time.Nanosecond)
		s.Sweep()
		if got := s.Len(); got == 0 {
			t.Fatalf("Sweep dropped every key 1 ns before the last ResetAfter (%v)", longest)
		}
		clock.Advance(time.Nanosecond)
		s.Sweep()
		if got := s.Len(); got != 0 {
			t.Fatalf("Len() = %d after Sweep at the last ResetAfter, want 0", got)
		}
	})
	// Each kind's key on its own: kept 1 ns before its own ResetAfter (it
	// still differs from a fresh key), dropped at it (it no longer does,
	// and holding it would only cost memory).
	for _, spec := range kindSpecs(3) {
		t.Run("sweep/"+string(spec.Algorithm), func(t *testing.T) {
			clock := NewClock(Base)
			store, s := newSweeper(t, h, clock)
			var reset time.Duration
			for i := range 2 {
				ds, err := store.Take(t.Context(), algorithms.Check{Spec: spec, Key: "k", Cost: 1})
				if err != nil {
					t.Fatal(err)
				}
				reset = ds[0].ResetAfter
				if i == 0 {
					clock.Advance(spec.Window / 3)
				}
			}
			if reset <= 0 {
				t.Fatalf("%s: ResetAfter %v after two requests", spec, reset)
			}
			clock.Advance(reset - time.Nanosecond)
			if n := s.Sweep(); n != 0 || s.Len() != 1 {
				t.Fatalf("%s: Sweep 1 ns before the key's ResetAfter (%v) dropped %d keys, Len() = %d; want the key kept", spec, reset, n, s.Len())
			}
			clock.Advance(time.Nanosecond)
			if n := s.Sweep(); n != 1 || s.Len() != 0 {
				t.Fatalf("%s: Sweep at the key's ResetAfter (%v) dropped %d keys, Len() = %d; want it dropped", spec, reset, n, s.Len())
			}
		})
	}
}

// sweeper is a store that drops idle keys on demand and counts the keys it
// holds, as the memory store does.
type sweeper interface {
	Sweep() int
	Len() int
}

// newSweeper returns a new store of h on clock, and it as a sweeper; it
// skips t, saying why, when the store is not one.
func newSweeper(t *testing.T, h Harness, clock *Clock) (algorithms.Store, sweeper) {
	t.Helper()
	store := h.New(t, clock)
	s, ok := store.(sweeper)
	if !ok {
		t.Skipf("the store (%T) has no Sweep and Len methods", store)
	}
	return store, s
}

func runMaxKeys(t *testing.T, h Harness) {
	if h.NewBounded == nil {
		t.Skip("Harness.NewBounded is nil: the store has no key bound to test")
	}
	const maxKeys, flood = 256, 2048
	for _, spec := range kindSpecs(10) {
		t.Run(string(spec.Algorithm), func(t *testing.T) {
			clock := NewClock(Base.Add(17 * time.Second)) // frozen: nothing turns idle
			store := h.NewBounded(t, clock, maxKeys)
			model := NewModel()
			take := func(c algorithms.Check) algorithms.Decision {
				t.Helper()
				ds, err := store.Take(t.Context(), c)
				if err != nil {
					t.Fatalf("Take(%s): %v", formatCheck(c), err)
				}
				return ds[0]
			}
			victim := algorithms.Check{Spec: spec, Key: "victim"}
			for range spec.Capacity() + 1 {
				take(victim)
				_, _ = model.TakeAt(clock.Now(), victim)
			}
			for i := range flood {
				c := algorithms.Check{Spec: spec, Key: fmt.Sprint("flood-", i)}
				if d := take(c); !d.Allowed {
					t.Fatalf("%s: flood key %d (one request) denied: the bounded store refused a new key: %+v", spec, i, d)
				}
			}
			if l, ok := store.(interface{ Len() int }); ok && l.Len() > maxKeys {
				t.Errorf("Len() = %d, above the bound %d", l.Len(), maxKeys)
			}
			got := take(victim)
			want, _ := model.TakeAt(clock.Now(), victim)
			if got != want[0] {
				t.Fatalf("%s: after a flood of %d one-request keys (bound %d) the limited victim decides %+v, want %+v: its state was evicted",
					spec, flood, maxKeys, got, want[0])
			}
		})
	}
}

func runInvalidChecks(t *testing.T, h Harness) {
	fw := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Second}
	with := func(f func(*algorithms.Spec)) algorithms.Spec {
		s := fw
		f(&s)
		return s
	}
	specCases := []struct {
		name  string
		spec  algorithms.Spec
		field string
	}{
		{"limit_zero", with(func(s *algorithms.Spec) { s.Limit = 0 }), "Limit"},
		{"limit_negative", with(func(s *algorithms.Spec) { s.Limit = -1 }), "Limit"},
		{"limit_above_max", with(func(s *algorithms.Spec) { s.Limit = algorithms.MaxLimit + 1 }), "Limit"},
		{"window_zero", with(func(s *algorithms.Spec) { s.Window = 0 }), "Window"},
		{"window_negative", with(func(s *algorithms.Spec) { s.Window = -time.Second }), "Window"},
		{"window_below_min", with(func(s *algorithms.Spec) { s.Window = algorithms.MinWindow - 1 }), "Window"},
		{"window_above_max", with(func(s *algorithms.Spec) { s.Window = algorithms.MaxWindow + 1 }), "Window"},
		{"kind_unknown", with(func(s *algorithms.Spec) { s.Algorithm = "gcra" }), "Algorithm"},
		{"kind_empty", with(func(s *algorithms.Spec) { s.Algorithm = "" }), "Algorithm"},
		{"burst_on_fixed_window", with(func(s *algorithms.Spec) { s.Burst = 10 }), "Burst"},
		{"burst_negative", with(func(s *algorithms.Spec) { s.Algorithm, s.Burst = algorithms.TokenBucket, -1 }), "Burst"},
		{"burst_refill_above_max_window", algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: 1, Window: 24 * time.Hour, Burst: 2}, "Burst"},
		{"buckets_not_dividing_window", algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 5, Window: 5 * time.Second, Buckets: 7}, "Buckets"},
		{"buckets_zero", algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 5, Window: 5 * time.Second}, "Buckets"},
		{"buckets_above_max", algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 5, Window: time.Hour, Buckets: 2 * algorithms.MaxBuckets}, "Buckets"},
		{"buckets_on_fixed_window", with(func(s *algorithms.Spec) { s.Buckets = 1 }), "Buckets"},
		{"max_delay_negative", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 5, Window: time.Second, MaxDelay: -1}, "MaxDelay"},
		{"max_delay_above_max", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 5, Window: time.Second, MaxDelay: algorithms.MaxWindow + 1}, "MaxDelay"},
		{"max_delay_on_token_bucket", algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Second, MaxDelay: time.Second}, "MaxDelay"},
	}
	queue := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: time.Second, MaxDelay: 250 * time.Millisecond} // capacity 3
	costCases := []struct {
		name string
		spec algorithms.Spec
		cost int64
	}{
		{"cost_negative", fw, -1},
		{"cost_above_capacity", fw, 6},
		{"cost_above_queue_capacity", queue, 4},
		{"cost_above_burst", algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Second, Burst: 2}, 3},
	}
	valid := algorithms.Check{Spec: fw, Key: "k"}
	// expectInvalid takes [valid, bad] and [bad, valid] and checks the
	// error, then that valid's key was not consumed.
	expectInvalid := func(t *testing.T, bad algorithms.Check, check func(error) string) {
		t.Helper()
		e := newEnv(t, h)
		for _, call := range [][]algorithms.Check{{bad}, {valid, bad}, {bad, valid}} {
			ds, err := e.store.Take(e.ctx, call...)
			if err == nil {
				t.Fatalf("Take(%s) = %+v, nil; want an error", formatChecks(call), ds)
			}
			if msg := check(err); msg != "" {
				t.Fatalf("Take(%s): error %q: %s", formatChecks(call), err, msg)
			}
		}
		if ds := e.take(0, valid); ds[0].Remaining != fw.Limit-1 {
			t.Fatalf("after the invalid calls, %s has Remaining %d, want %d: an invalid call consumed", formatCheck(valid), ds[0].Remaining, fw.Limit-1)
		}
	}
	for _, c := range specCases {
		t.Run(c.name, func(t *testing.T) {
			expectInvalid(t, algorithms.Check{Spec: c.spec, Key: "k"}, func(err error) string {
				var se *algorithms.SpecError
				switch {
				case !errors.Is(err, algorithms.ErrInvalidSpec):
					return "does not match algorithms.ErrInvalidSpec"
				case !errors.As(err, &se):
					return "is not a *algorithms.SpecError"
				case se.Field != c.field:
					return fmt.Sprintf("names the field %q, want %q", se.Field, c.field)
				}
				return ""
			})
		})
	}
	for _, c := range costCases {
		t.Run(c.name, func(t *testing.T) {
			expectInvalid(t, algorithms.Check{Spec: c.spec, Key: "k", Cost: c.cost}, func(err error) string {
				var ce *algorithms.CostError
				switch {
				case !errors.Is(err, algorithms.ErrInvalidCost):
					return "does not match algorithms.ErrInvalidCost"
				case errors.Is(err, algorithms.ErrInvalidSpec):
					return "matches ErrInvalidSpec; the spec is valid"
				case !errors.As(err, &ce):
					return "is not a *algorithms.CostError"
				case ce.Cost != c.cost:
					return fmt.Sprintf("reports cost %d, want %d", ce.Cost, c.cost)
				}
				return ""
			})
		})
	}
	for _, spec := range kindSpecs(4) {
		t.Run("cost_above_capacity_held/"+string(spec.Algorithm), func(t *testing.T) { costAboveHeld(t, h, spec) })
	}
	t.Run("cost_at_capacity_is_valid", func(t *testing.T) {
		e := newEnv(t, h)
		for _, spec := range append(kindSpecs(4), queue) {
			if ds := e.take(0, algorithms.Check{Spec: spec, Key: "k", Cost: spec.Capacity()}); !ds[0].Allowed {
				t.Errorf("%s: a fresh key denied a request of cost = capacity %d", spec, spec.Capacity())
			}
		}
	})
}

// costAboveHeld: a check costing one more than its capacity, on a key the
// store already holds under its Spec (whose state the store has at hand,
// unlike a fresh store's, where the error may come from making the
// Spec's table), alone and beside an admissible check of another held
// key, is a *algorithms.CostError, not a denial, and consumes nothing:
// the key and the other key then decide as the Model, which saw neither
// call.
func costAboveHeld(t *testing.T, h Harness, spec algorithms.Spec) {
	e := newEnv(t, h)
	one := algorithms.Check{Spec: spec, Key: "k"}
	other := algorithms.Check{Spec: spec, Key: "other"}
	e.take(0, one)
	e.take(0, other)
	bad := algorithms.Check{Spec: spec, Key: "k", Cost: capacity(spec) + 1}
	for _, call := range [][]algorithms.Check{{bad}, {other, bad}, {bad, other}} {
		ds, err := e.store.Take(e.ctx, call...)
		var ce *algorithms.CostError
		switch {
		case err == nil:
			t.Errorf("Take(%s) on held keys = %+v, nil; want a *algorithms.CostError (a cost above the capacity is an error, not a denial)", formatChecks(call), ds)
		case !errors.Is(err, algorithms.ErrInvalidCost) || !errors.As(err, &ce):
			t.Errorf("Take(%s) on held keys: error %q, want a *algorithms.CostError matching algorithms.ErrInvalidCost", formatChecks(call), err)
		case ce.Cost != bad.Cost:
			t.Errorf("Take(%s) on held keys: error %q reports cost %d, want %d", formatChecks(call), err, ce.Cost, bad.Cost)
		}
	}
	e.take(0, one)
	e.take(0, other)
}

func runContext(t *testing.T, h Harness) {
	spec := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 3, Window: time.Minute}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	expired, cancel2 := context.WithDeadline(t.Context(), time.Unix(0, 0))
	defer cancel2()
	for _, c := range []struct {
		name string
		ctx  context.Context
		want error
	}{
		{"cancelled", cancelled, context.Canceled},
		{"deadline_exceeded", expired, context.DeadlineExceeded},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, h)
			check := algorithms.Check{Spec: spec, Key: "k"}
			ds, err := e.store.Take(c.ctx, check, check)
			if !errors.Is(err, c.want) {
				t.Fatalf("Take with a %s context = %+v, %v; want an error matching %v", c.name, ds, err, c.want)
			}
			if ds := e.take(0, check); ds[0].Remaining != 2 {
				t.Fatalf("after the %s call Remaining = %d, want 2: the call consumed", c.name, ds[0].Remaining)
			}
		})
	}
}

func runTakeInto(t *testing.T, h Harness) {
	tr := RandomTrace(1000, 300)
	clock := NewClock(tr.Start)
	store, ok := h.New(t, clock).(algorithms.IntoStore)
	if !ok {
		t.Skip("the store does not implement algorithms.IntoStore")
	}
	if err := store.TakeInto(t.Context(), make([]algorithms.Decision, 1), make([]algorithms.Check, 2)); err == nil {
		t.Error("TakeInto with 1 decision for 2 checks: no error")
	}
	got, err := Replay(t.Context(), intoOnly{store}, clock, tr)
	if err != nil {
		t.Fatal(err)
	}
	if diff := Diff(tr, got, ReplayModel(tr)); diff != "" {
		t.Errorf("TakeInto disagrees with the model:\n%s", diff)
	}
}

// intoOnly decides through TakeInto only.
type intoOnly struct{ s algorithms.IntoStore }

func (s intoOnly) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	ds := make([]algorithms.Decision, len(checks))
	for i := range ds {
		ds[i] = algorithms.Decision{Remaining: -1} // must be overwritten
	}
	if err := s.s.TakeInto(ctx, ds, checks); err != nil {
		return nil, err
	}
	return ds, nil
}

func runClosed(t *testing.T, h Harness) {
	clock := NewClock(Base)
	store := h.New(t, clock)
	c, ok := store.(interface{ Close() error })
	if !ok {
		t.Skipf("the store (%T) has no Close method", store)
	}
	check := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 3, Window: time.Second}, Key: "k"}
	if _, err := store.Take(t.Context(), check); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := c.Close(); err != nil {
			t.Fatalf("Close #%d: %v", i+1, err)
		}
	}
	if ds, err := store.Take(t.Context(), check); !errors.Is(err, algorithms.ErrClosed) {
		t.Errorf("Take after Close = %+v, %v; want an error matching algorithms.ErrClosed", ds, err)
	}
	if is, ok := store.(algorithms.IntoStore); ok {
		if err := is.TakeInto(t.Context(), make([]algorithms.Decision, 1), []algorithms.Check{check}); !errors.Is(err, algorithms.ErrClosed) {
			t.Errorf("TakeInto after Close: %v; want an error matching algorithms.ErrClosed", err)
		}
	}
}
