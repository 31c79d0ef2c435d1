package policy_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// fixedStore admits or denies by the decisions it holds: the i-th check of
// a Take gets ds[i]. Its Peek, Reset, Refund and GiveBack fail with err.
type fixedStore struct {
	ds  []algorithms.Decision
	err error
}

func (s *fixedStore) Take(_ context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	return append([]algorithms.Decision(nil), s.ds[:len(checks)]...), nil
}

func (s *fixedStore) Peek(context.Context, []algorithms.Decision, []algorithms.Check) error {
	return s.err
}

func (s *fixedStore) Reset(context.Context, ...algorithms.Check) error { return s.err }

func (s *fixedStore) Refund(context.Context, []algorithms.Refunded, []algorithms.Check, []algorithms.Decision, time.Duration) error {
	return s.err
}

func (s *fixedStore) GiveBack(context.Context, []algorithms.Refunded, []algorithms.Check, []algorithms.Decision, time.Duration) error {
	return s.err
}

// setOf returns a Set of n per-minute policies, p0 to p(n-1), 10 per
// minute, keyed alike.
func setOf(t *testing.T, n int) *policy.Set {
	t.Helper()
	return setKeyed(t, n, remoteKey)
}

// setKeyed is setOf with the policies keyed by keyOf.
func setKeyed(t *testing.T, n int, keyOf keyfunc.Func) *policy.Set {
	t.Helper()
	ps := make([]*policy.Policy, n)
	for i := range ps {
		ps[i] = policy.Must(policy.PerMinute("p"+strconv.Itoa(i), 10, keyOf))
	}
	s, err := policy.NewSet(ps)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLowest: the decision single-valued headers report is a denied one
// if any, then the one with the lowest Remaining; between denied ones
// with as many left, the longest wait (RetryAfter or NextAfter, the larger
// of the two), then the longest ResetAfter; the first of equals.
func TestLowest(t *testing.T) {
	allow := func(remaining int64, reset time.Duration) algorithms.Decision {
		return algorithms.Decision{Allowed: true, Limit: 10, Remaining: remaining, ResetAfter: reset}
	}
	deny := func(retry, next, reset time.Duration) algorithms.Decision {
		return algorithms.Decision{Limit: 10, RetryAfter: retry, NextAfter: next, ResetAfter: reset}
	}
	for _, tt := range []struct {
		name string
		ds   []algorithms.Decision
		want int
	}{
		{"lowest remaining", []algorithms.Decision{allow(5, time.Second), allow(2, time.Second), allow(3, time.Second)}, 1},
		{"denied before allowed with fewer left", []algorithms.Decision{allow(0, time.Second), deny(time.Second, 0, time.Second)}, 1},
		{"allowed after denied", []algorithms.Decision{deny(time.Second, 0, time.Second), allow(0, time.Second)}, 0},
		{"denied: longest retry", []algorithms.Decision{deny(time.Second, 0, time.Hour), deny(3*time.Second, 0, time.Second)}, 1},
		{"denied: shorter retry first", []algorithms.Decision{deny(3*time.Second, 0, time.Second), deny(time.Second, 0, time.Hour)}, 0},
		{"denied: next after counts", []algorithms.Decision{deny(2*time.Second, 0, time.Hour), deny(time.Second, 4*time.Second, time.Second)}, 1},
		{"denied: same wait, longest reset", []algorithms.Decision{deny(time.Second, 0, time.Second), deny(0, time.Second, time.Minute)}, 1},
		{"allowed: same remaining, longest reset", []algorithms.Decision{allow(1, time.Minute), allow(1, time.Hour)}, 1},
		{"allowed: same remaining, longest reset first", []algorithms.Decision{allow(1, time.Hour), allow(1, time.Minute)}, 0},
		{"equals: the first", []algorithms.Decision{allow(1, time.Minute), allow(1, time.Minute), allow(1, time.Minute)}, 0},
		{"denied equals: the first", []algorithms.Decision{deny(time.Second, 0, time.Minute), deny(time.Second, 0, time.Minute)}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := setOf(t, len(tt.ds))
			res := takeResult(t, s, &fixedStore{ds: tt.ds}, httptest.NewRequest("GET", "/", nil))
			if got := res.Lowest(); got != tt.want {
				t.Errorf("Lowest() of %+v = %d, want %d", tt.ds, got, tt.want)
			}
		})
	}
}

// TestResultStoreErrors: a store's failure to peek, reset, refund or
// give back is returned, wrapped; a failed Peek leaves no decisions, a
// failed Refund or GiveBack leaves the Take's decisions, neither refunded
// nor given back. An empty mask calls no store.
func TestResultStoreErrors(t *testing.T) {
	boom := errors.New("boom")
	ds := []algorithms.Decision{
		{Allowed: true, Limit: 10, Remaining: 3, ResetAfter: time.Minute},
		{Allowed: true, Limit: 10, Remaining: 7, ResetAfter: time.Minute},
	}
	store := &fixedStore{ds: ds, err: boom}
	s := setOf(t, 2)
	ctx := context.Background()
	r := httptest.NewRequest("GET", "/", nil)

	res := new(policy.Result)
	if err := s.Prepare(r, s.Match(r), res); err != nil {
		t.Fatal(err)
	}
	if err := res.Peek(ctx, store); !errors.Is(err, boom) || res.Taken() || res.Peeked() {
		t.Errorf("Peek through a failing store: %v, taken %v, peeked %v; want boom, not taken", err, res.Taken(), res.Peeked())
	}
	if err := res.Reset(ctx, store, 0b01); !errors.Is(err, boom) {
		t.Errorf("Reset through a failing store: %v, want boom", err)
	}
	if err := res.Reset(ctx, store, 0); err != nil {
		t.Errorf("Reset of an empty mask: %v, want no store call", err)
	}

	res = takeResult(t, s, store, r)
	if err := res.GiveBack(ctx, store, 0, 0); err != nil || res.GaveBack() {
		t.Errorf("GiveBack of an empty mask: %v, gave back %v; want no store call", err, res.GaveBack())
	}
	if err := res.GiveBack(ctx, store, 0, 0b10); !errors.Is(err, boom) || res.GaveBack() || res.Given(1) || res.Decision(1) != ds[1] {
		t.Errorf("GiveBack through a failing store: %v, gave back %v, given %v, decision %+v; want boom, the Take's decision kept",
			err, res.GaveBack(), res.Given(1), res.Decision(1))
	}
	if err := res.Refund(ctx, store, 0); !errors.Is(err, boom) || res.Refunded() || res.Decision(0) != ds[0] {
		t.Errorf("Refund through a failing store: %v, refunded %v, decision %+v; want boom, the Take's decision kept",
			err, res.Refunded(), res.Decision(0))
	}
}

// TestResultBeforeTake: a Result prepared again after a Take holds no
// decisions until its next Take, whatever the last one decided: Decision
// is the zero one, Allowed false and RetryAfter 0, also for a Result with
// no checks.
func TestResultBeforeTake(t *testing.T) {
	denied := algorithms.Decision{Limit: 10, RetryAfter: time.Second, NextAfter: time.Second, ResetAfter: time.Minute}
	s := setOf(t, 1)
	r := httptest.NewRequest("GET", "/", nil)
	res := takeResult(t, s, &fixedStore{ds: []algorithms.Decision{denied}}, r)
	if res.Decision(0) != denied || res.RetryAfter() != time.Second {
		t.Fatalf("taken: decision %+v, retry after %v; want %+v, 1s", res.Decision(0), res.RetryAfter(), denied)
	}
	for _, mask := range []uint64{1, 0} {
		if err := s.Prepare(r, mask, res); err != nil {
			t.Fatal(err)
		}
		if res.Decision(0) != (algorithms.Decision{}) || res.Allowed() || res.RetryAfter() != 0 {
			t.Errorf("prepared again (mask %b), not taken: decision %+v, allowed %v, retry after %v; want none",
				mask, res.Decision(0), res.Allowed(), res.RetryAfter())
		}
	}
}

// TestGiveBackAndRefundManyPolicies: a give-back and a refund of more
// checks than a Result holds inline reach the store with every check.
func TestGiveBackAndRefundManyPolicies(t *testing.T) {
	now := time.Unix(1_700_000_040, 0)
	store := memoryStoreAt(t, &now)
	s := setOf(t, 6)
	r := httptest.NewRequest("GET", "/", nil)
	ctx := context.Background()
	res := takeResult(t, s, store, r)
	if err := res.GiveBack(ctx, store, 0, 0b111111); err != nil || !res.GaveBack() {
		t.Fatalf("GiveBack of 6 policies: %v, gave back %v", err, res.GaveBack())
	}
	for i := range 6 {
		if !res.Given(i) {
			t.Errorf("Given(%d) = false after giving back all 6", i)
		}
	}
	res = takeResult(t, s, store, r)
	if err := res.Refund(ctx, store, 0); err != nil || !res.Refunded() {
		t.Fatalf("Refund of 6 policies: %v, refunded %v", err, res.Refunded())
	}
	for i := range 6 {
		if d := res.Decision(i); d.Remaining != 9 {
			t.Errorf("Decision(%d) after the refund = %+v, want 9 left (one unit taken, the first given back)", i, d)
		}
	}
}
