package policy_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/policy"
)

// memoryStoreAt returns a memory store whose clock reads *now.
func memoryStoreAt(t *testing.T, now *time.Time) *algorithms.MemoryStore {
	t.Helper()
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(algorithms.ClockFunc(func() time.Time { return *now })))
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// preparedResult returns a new Result prepared for r under s (the
// policies s.Match finds).
func preparedResult(t *testing.T, s *policy.Set, r *http.Request) *policy.Result {
	t.Helper()
	res := new(policy.Result)
	prepareInto(t, s, r, res)
	return res
}

// prepareInto prepares res, new or reused, for r under s (the policies
// s.Match finds).
func prepareInto(t *testing.T, s *policy.Set, r *http.Request, res *policy.Result) {
	t.Helper()
	if err := s.Prepare(r, s.Match(r), res); err != nil {
		t.Fatal(err)
	}
}

// takeResult prepares r under s (the policies s.Match finds) and takes the
// Result from st.
func takeResult(t *testing.T, s *policy.Set, st algorithms.Store, r *http.Request) *policy.Result {
	t.Helper()
	res := preparedResult(t, s, r)
	if err := res.Take(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestResultRefund: a refunded Result holds what the store reported of
// each check after the refund: the queue as it stands (a kept place, with
// a later request queued behind it, counted; a place given back not) and
// the other kinds' decisions as the Take left them; Given tells the places
// that came back. A store that is not a Refunder leaves the decisions.
func TestResultRefund(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	store := memoryStoreAt(t, &now)
	key := func(*http.Request) (string, error) { return "k", nil }
	queue := policy.Must(policy.New("queue", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: 10 * time.Second}, key))
	minute := policy.Must(policy.PerMinute("minute", 100, key))
	s, err := policy.NewSet([]*policy.Policy{queue, minute})
	if err != nil {
		t.Fatal(err)
	}
	take := func() *policy.Result {
		t.Helper()
		return takeResult(t, s, store, httptest.NewRequest("GET", "/", nil))
	}
	take()                 // departs at once: the queue is free at 1 s
	a, b := take(), take() // at 1 s and 2 s: the queue is free at 3 s
	now = now.Add(500 * time.Millisecond)
	minuteOfA := a.Decision(1)

	// a's place has b's behind it: kept. The queue is free in 2.5 s.
	if err := a.Refund(context.Background(), store, 500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if !a.Refunded() || a.Given(0) || a.Given(1) {
		t.Errorf("a: Refunded %v, Given %v %v; want refunded, nothing given back", a.Refunded(), a.Given(0), a.Given(1))
	}
	if d := a.Decision(0); d.Remaining != 8 || d.ResetAfter != 2500*time.Millisecond || d.Delay != 0 || !d.Allowed {
		t.Errorf("a's queue after the refund: %+v, want Remaining 8, ResetAfter 2.5s, Delay 0", d)
	}
	if d := a.Decision(1); d != minuteOfA {
		t.Errorf("a's minute after the refund: %+v, want the Take's %+v", d, minuteOfA)
	}
	// b's place is the last: given back, the queue free in 1.5 s.
	if err := b.Refund(context.Background(), store, 500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if !b.Given(0) || b.Given(1) {
		t.Errorf("b: Given %v %v; want the queue's place only", b.Given(0), b.Given(1))
	}
	if d := b.Decision(0); d.Remaining != 9 || d.ResetAfter != 1500*time.Millisecond {
		t.Errorf("b's queue after the refund: %+v, want Remaining 9, ResetAfter 1.5s", d)
	}
	// No Refunder: nothing changes.
	c := take()
	before := c.Decision(0)
	if err := c.Refund(context.Background(), struct{ algorithms.Store }{store}, 0); err != nil {
		t.Fatal(err)
	}
	if c.Refunded() || c.Given(0) || c.Decision(0) != before {
		t.Errorf("without a Refunder: Refunded %v, Given %v, %+v; want the Take's %+v", c.Refunded(), c.Given(0), c.Decision(0), before)
	}
}
