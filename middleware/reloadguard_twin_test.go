package middleware_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestReloadTightenedTwinDifferential: random traces of requests, clock
// steps, SetLimit and reloads, replayed on two middlewares on stores of
// their own, end with a reload of one of them (the twin is left as it
// is) that tightens the policy's configured Spec (a lower limit, or a
// bucket kind's lower burst or longer window) and the Spec in force at
// its limit set by SetLimit (carried over in proportion, whose rounding
// may loosen it: such traces are left out, as documented they start
// afresh). The reloaded one must then admit at once no more than the
// twin does, nor more than its new capacity, whatever the reloads and
// the limits before: every Spec whose counters know what the client used
// guards it (see SetPolicies). Window kinds are lowered only (a change of
// window is judged at the replaced Spec's own limit, short of the twin).
// Seeded: a failure prints its seed and trace.
func TestReloadTightenedTwinDifferential(t *testing.T) {
	kinds := []algorithms.Kind{algorithms.TokenBucket, algorithms.LeakyBucket, algorithms.FixedWindow, algorithms.SlidingWindow, algorithms.SlidingBuckets}
	for _, name := range storetest.Names {
		seeds := uint64(1000)
		if name != "memory" {
			seeds = 60
		}
		t.Run(name, func(t *testing.T) {
			for seed := range seeds {
				twinTrace(t, name, seed, kinds[seed%uint64(len(kinds))])
			}
		})
	}
}

// twinTrace runs the trace of seed for kind (see
// TestReloadTightenedTwinDifferential).
func twinTrace(t *testing.T, store string, seed uint64, kind algorithms.Kind) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	spec := func() algorithms.Spec {
		s := algorithms.Spec{Algorithm: kind, Limit: 4 + rng.Int64N(20), Window: time.Duration(1+rng.IntN(3)) * time.Minute}
		switch kind {
		case algorithms.TokenBucket, algorithms.LeakyBucket:
			s.Burst = 1 + rng.Int64N(24)
		case algorithms.SlidingBuckets:
			s.Buckets = []int{2, 3, 6}[rng.IntN(3)]
			s.Window = time.Duration(6*(1+rng.IntN(3))) * time.Minute
		}
		return s
	}
	clock := algotest.NewClock(t0)
	first := spec()
	newM := func() *middleware.Middleware {
		return middleware.MustNew(storetest.New(t, store, clock), []*policy.Policy{policy.Must(policy.New("p", first, remote))}, middleware.WithClock(clock))
	}
	m, twin := newM(), newM()
	h, ht := routed([]string{"chi", "mux"}[seed%2], m), routed([]string{"chi", "mux"}[seed%2], twin)
	trace := []string{fmt.Sprintf("start(%v)", first)}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("seed %d (%s): %s: %s", seed, kind, strings.Join(trace, " "), fmt.Sprintf(format, args...))
	}
	for range 4 + rng.IntN(10) {
		switch r := rng.IntN(10); {
		case r < 3:
			d := time.Duration(rng.Int64N(int64(40 * time.Second)))
			clock.Advance(d)
			trace = append(trace, fmt.Sprintf("adv(%v)", d))
		case r < 6:
			k := rng.IntN(8)
			a, b := admittedOf(h, k), admittedOf(ht, k)
			trace = append(trace, fmt.Sprintf("req(%d)=%d", k, a))
			if a != b {
				fail("%d admitted, the twin %d, before the last reload", a, b)
				return
			}
		case r < 8:
			l := int64(rng.IntN(20))
			err, errT := m.SetLimit("p", l), twin.SetLimit("p", l)
			if (err == nil) != (errT == nil) {
				fail("SetLimit(%d): %v, the twin %v", l, err, errT)
				return
			}
			trace = append(trace, fmt.Sprintf("setlimit(%d)", l))
		default:
			s := spec()
			for _, mm := range []*middleware.Middleware{m, twin} {
				if err := mm.SetPolicies([]*policy.Policy{policy.Must(policy.New("p", s, remote))}); err != nil {
					t.Fatal(err)
				}
			}
			trace = append(trace, fmt.Sprintf("reload(%v)", s))
		}
	}
	before := m.Set().Policy(0).Spec()
	s := m.Configured("p").Spec()
	if s.Burst == 0 && !kind.Windowed() {
		s.Burst = s.Limit
	}
	switch c := rng.IntN(3); {
	case kind.Windowed() || c == 0:
		if s.Limit < 2 {
			return
		}
		s.Limit = 1 + rng.Int64N(s.Limit-1)
	case c == 1:
		if s.Burst < 2 {
			return
		}
		s.Burst = 1 + rng.Int64N(s.Burst-1)
	default:
		s.Window *= 2
	}
	if err := m.SetPolicies([]*policy.Policy{policy.Must(policy.New("p", s, remote))}); err != nil {
		t.Fatal(err)
	}
	trace = append(trace, fmt.Sprintf("reload(%v)", s))
	after := m.Set().Policy(0).Spec()
	if after.Capacity() > before.Capacity() || after.Limit*int64(before.Window/time.Second) > before.Limit*int64(after.Window/time.Second) {
		return // the limit in force loosened (rounding): afresh
	}
	got, want := admittedOf(h, 40), admittedOf(ht, 40)
	if c := int(after.Capacity()); want > c {
		want = c
	}
	if got > want {
		fail("%d admitted at once (in force %v, guards %v), the twin %d", got, after, m.Set().Policy(0).Guards(), want)
	}
}
