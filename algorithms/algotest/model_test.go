package algotest

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// modelTake runs seed examples on a fresh Model.
func modelTake(t *testing.T) takeFunc {
	m := NewModel()
	return func(at time.Duration, c algorithms.Check) algorithms.Decision {
		t.Helper()
		ds, err := m.TakeAt(Base.Add(at), c)
		if err != nil {
			t.Fatalf("Model.TakeAt(%v, %v) error: %v", at, c, err)
		}
		return ds[0]
	}
}

func TestModelSeedExamples(t *testing.T) {
	for _, ex := range seedExamples {
		t.Run(ex.name, func(t *testing.T) { ex.run(t, modelTake(t)) })
	}
}

func TestModelCapacityMatchesSpec(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		s := randomSpec(rng, randomWindow(rng))
		if got, want := capacity(s), s.Capacity(); got != want {
			t.Fatalf("spec %d %v: model capacity %d, Spec.Capacity %d", i, s, got, want)
		}
	}
}

// TestModelFirstAtMost checks each kind's closed-form firstAtMost against a
// binary search over used, which only falls while nothing arrives.
func TestModelFirstAtMost(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 1200 {
		s := randomSpec(rng, randomWindow(rng))
		mc := newMachine(s)
		now := Base.UnixNano() + rng.Int64N(int64(time.Hour))
		c := capacity(s)
		for range rng.IntN(12) {
			now += rng.Int64N(int64(s.Window)/2 + 1)
			n := 1 + rng.Int64N(min(c, 3))
			if decide(s, mc, now, n, true).Allowed {
				continue
			}
		}
		t0 := now + rng.Int64N(int64(s.Window)/3+1)
		xs := []*big.Rat{new(big.Rat), ratInt(c - 1), ratInt(max(0, c-2)), big.NewRat(rng.Int64N(3*c+1), 3)}
		for _, x := range xs {
			got := mc.firstAtMost(t0, x)
			want := searchFirstAtMost(mc, t0, x)
			if got != want {
				t.Fatalf("case %d %v: firstAtMost(+%d, %v) = +%d, binary search says +%d", i, s, t0-Base.UnixNano(), x.RatString(), got-t0, want-t0)
			}
		}
	}
}

// searchFirstAtMost finds the first t' >= t with used(t') <= x by bisection.
func searchFirstAtMost(mc machine, t int64, x *big.Rat) int64 {
	lo, hi := t, t+4*int64(algorithms.MaxWindow)
	if mc.used(hi).Cmp(x) > 0 {
		panic("algotest: used does not fall to x within the horizon")
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if mc.used(mid).Cmp(x) <= 0 {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// TestModelDecisionFields checks the Decision fields of the model against
// their definitions by brute force: Remaining is the number of unit requests
// that would still be admitted now; RetryAfter, ResetAfter and NextAfter are
// the smallest waits after which a request is admitted, the key decides like
// a fresh one, and Remaining has grown.
func TestModelDecisionFields(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 800 {
		s := randomSpec(rng, randomWindow(rng))
		if capacity(s) > 12 {
			continue // keep the unit-by-unit simulation short
		}
		mc := newMachine(s)
		now := Base.UnixNano() + rng.Int64N(int64(time.Hour))
		for step := range 10 {
			now += rng.Int64N(int64(s.Window)/3 + 1)
			n := 1 + rng.Int64N(min(capacity(s), 3))
			d := decide(s, mc, now, n, true)
			where := func() string {
				return s.String() + " case " + itoa(i) + " step " + itoa(step)
			}
			if got := unitsAdmitted(s, mc, now); got != d.Remaining {
				t.Fatalf("%s: Remaining = %d, but %d unit requests would be admitted", where(), d.Remaining, got)
			}
			if !d.Allowed {
				at := now + int64(d.RetryAfter)
				if d.RetryAfter <= 0 || !admits(s, mc, at, n) || admits(s, mc, at-1, n) {
					t.Fatalf("%s: RetryAfter = %v is not the first instant the request is admitted", where(), d.RetryAfter)
				}
			} else if d.RetryAfter != 0 {
				t.Fatalf("%s: allowed with RetryAfter %v", where(), d.RetryAfter)
			}
			at := now + int64(d.ResetAfter)
			if mc.used(at).Sign() != 0 || (d.ResetAfter > 0 && mc.used(at-1).Sign() == 0) {
				t.Fatalf("%s: ResetAfter = %v is not the first instant the key is empty", where(), d.ResetAfter)
			}
			if d.Remaining == capacity(s) {
				if d.NextAfter != 0 {
					t.Fatalf("%s: Remaining at capacity with NextAfter %v", where(), d.NextAfter)
				}
			} else {
				at := now + int64(d.NextAfter)
				if d.NextAfter <= 0 || unitsAdmitted(s, mc, at) <= d.Remaining || unitsAdmitted(s, mc, at-1) > d.Remaining {
					t.Fatalf("%s: NextAfter = %v is not the first instant Remaining grows", where(), d.NextAfter)
				}
			}
		}
	}
}

// unitsAdmitted counts the unit requests a copy of mc admits one after the other at t.
func unitsAdmitted(s algorithms.Spec, mc machine, t int64) int64 {
	cp := mc.clone()
	var k int64
	for decide(s, cp, t, 1, true).Allowed {
		k++
	}
	return k
}

func admits(s algorithms.Spec, mc machine, t, n int64) bool {
	return decide(s, mc.clone(), t, n, false).Allowed
}

func itoa(i int) string { return big.NewInt(int64(i)).String() }

func TestModelAllOrNothing(t *testing.T) {
	m := NewModel()
	a := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 3, Window: time.Second}
	b := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 1, Window: time.Second}
	if ds, _ := m.TakeAt(Base, algorithms.Check{Spec: b, Key: "k"}); !ds[0].Allowed {
		t.Fatal("first token denied")
	}
	ds, err := m.TakeAt(Base, algorithms.Check{Spec: a, Key: "k"}, algorithms.Check{Spec: b, Key: "k"})
	if err != nil || !ds[0].Allowed || ds[1].Allowed || ds[1].RetryAfter != time.Second || ds[0].Remaining != 3 {
		t.Fatalf("denied call = %+v, %v; want the first passing with Remaining 3 (nothing consumed), the second denied", ds, err)
	}
	// 2+2 of 3 on one key: never admitted, an error.
	_, err = m.TakeAt(Base, algorithms.Check{Spec: a, Key: "k", Cost: 2}, algorithms.Check{Spec: a, Key: "k", Cost: 2})
	if ce := (*algorithms.CostError)(nil); !errors.As(err, &ce) || ce.Cost != 2 || ce.Combined != 4 {
		t.Fatalf("2+2 of 3 on one key: error %v; want a *CostError of cost 2, combined 4", err)
	}
	// 1+1 of the 1 left on a key: the first passes untouched, the second
	// is denied after it.
	if _, err := m.TakeAt(Base, algorithms.Check{Spec: a, Key: "j", Cost: 2}); err != nil {
		t.Fatal(err)
	}
	ds, _ = m.TakeAt(Base, algorithms.Check{Spec: a, Key: "j"}, algorithms.Check{Spec: a, Key: "j"})
	if !ds[0].Allowed || ds[0].Remaining != 1 || ds[1].Allowed || ds[1].Remaining != 0 || ds[1].RetryAfter != time.Second {
		t.Fatalf("1+1 of the 1 left on one key = %+v; want the first passing untouched, the second denied after the first", ds)
	}
	ds, _ = m.TakeAt(Base, algorithms.Check{Spec: a, Key: "k", Cost: 2}, algorithms.Check{Spec: a, Key: "k"})
	if !ds[0].Allowed || !ds[1].Allowed || ds[0].Remaining != 1 || ds[1].Remaining != 0 {
		t.Fatalf("two checks on one key = %+v; want the second to see the first", ds)
	}
}

// TestModelClockBack checks the model on instants that go back, with values
// worked out by hand from the algorithms package documentation.
func TestModelClockBack(t *testing.T) {
	s := time.Second
	type step struct {
		at   time.Duration
		cost int64
		want algorithms.Decision // only the fields set are compared, Allowed always
	}
	for _, c := range []struct {
		name  string
		spec  algorithms.Spec
		steps []step
	}{
		{"fixed_window_decided_at_window_start", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: 10 * s}, []step{
			{12 * s, 3, algorithms.Decision{Allowed: true, Remaining: 2}},
			// 8 s is in the window before the key's: decided at 10 s, durations + 2 s.
			{8 * s, 1, algorithms.Decision{Allowed: true, Remaining: 1, ResetAfter: 12 * s}},
			{8 * s, 2, algorithms.Decision{Remaining: 1, RetryAfter: 12 * s}},
		}},
		{"sliding_log_decided_at_newest_request", algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 3, Window: 10 * s}, []step{
			{20 * s, 1, algorithms.Decision{Allowed: true, Remaining: 2}},
			{25 * s, 1, algorithms.Decision{Allowed: true, Remaining: 1}},
			// decided at 25 s (window [15 s, 25 s] holds 2), logged at 25 s
			{22 * s, 1, algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: 13*s + 1, NextAfter: 8*s + 1}},
		}},
		{"sliding_buckets_decided_at_sub_window_start", algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 4, Window: 4 * s, Buckets: 4}, []step{
			{7500 * time.Millisecond, 1, algorithms.Decision{Allowed: true, Remaining: 3}},
			// decided at 7 s; both requests leave when sub-window 11 starts, at 11 s
			{6200 * time.Millisecond, 1, algorithms.Decision{Allowed: true, Remaining: 2, ResetAfter: 4800 * time.Millisecond}},
		}},
		{"token_bucket_larger_deficit", algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 1, Window: s, Burst: 2}, []step{
			{10 * s, 2, algorithms.Decision{Allowed: true, Remaining: 0, ResetAfter: 2 * s}},
			// full again at 12 s; at 9 s the deficit is 3 tokens
			{9 * s, 1, algorithms.Decision{Remaining: 0, RetryAfter: 2 * s, ResetAfter: 3 * s}},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := NewModel()
			for i, st := range c.steps {
				ds, err := m.TakeAt(Base.Add(st.at), algorithms.Check{Spec: c.spec, Key: "k", Cost: st.cost})
				if err != nil {
					t.Fatal(err)
				}
				got, want := ds[0], st.want
				if got.Allowed != want.Allowed || got.Remaining != want.Remaining ||
					(want.RetryAfter != 0 && got.RetryAfter != want.RetryAfter) ||
					(want.ResetAfter != 0 && got.ResetAfter != want.ResetAfter) ||
					(want.NextAfter != 0 && got.NextAfter != want.NextAfter) {
					t.Errorf("step %d at %v cost %d: got %+v, want %+v", i, st.at, st.cost, got, want)
				}
			}
		})
	}
}
