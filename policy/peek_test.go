package policy_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/policy"
)

// takeOnlyStore is a store that can only Take.
type takeOnlyStore struct{ algorithms.Store }

// TestResultPeekAndReset: a peeked Result holds every policy's decision
// alone (the per-minute one denying, the per-hour one admitting), is
// Taken and Peeked, consumed nothing, and is neither refunded nor given
// back; Reset of one policy's key through the Result forgets that key only;
// a store without Peek or Reset is an error wrapping errors.ErrUnsupported;
// a Result without checks calls no store.
func TestResultPeekAndReset(t *testing.T) {
	now := time.Unix(1_700_000_040, 0)
	store := memoryStoreAt(t, &now)
	key := func(*http.Request) (string, error) { return "k", nil }
	minute := policy.Must(policy.PerMinute("minute", 1, key))
	hour := policy.Must(policy.PerHour("hour", 10, key, policy.CountIf(policy.CountFailed)))
	s, err := policy.NewSet([]*policy.Policy{minute, hour})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	takeResult(t, s, store, r) // minute spent, hour 9 left
	res := new(policy.Result)
	if err := s.Prepare(r, s.Match(r), res); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 2 {
		if err := res.Peek(ctx, store); err != nil {
			t.Fatal(err)
		}
		if !res.Taken() || !res.Peeked() || res.Allowed() || res.Decision(0).Allowed || !res.Decision(1).Allowed || res.Decision(1).Remaining != 9 || res.RetryAfter() <= 0 || res.RetryAfter() != res.Decision(0).RetryAfter {
			t.Fatalf("peeked: taken %v peeked %v allowed %v, decisions %+v %+v; want minute denied (its wait the Result's), hour admitted with 9 left",
				res.Taken(), res.Peeked(), res.Allowed(), res.Decision(0), res.Decision(1))
		}
	}
	if err := res.GiveBack(ctx, store, 0, 0b10); err != nil || res.GaveBack() {
		t.Errorf("give-back of a peeked Result: %v, gave back %v; want nothing done", err, res.GaveBack())
	}
	if err := res.Refund(ctx, store, 0); err != nil || res.Refunded() {
		t.Errorf("refund of a peeked Result: %v, refunded %v; want nothing done", err, res.Refunded())
	}
	if err := res.Reset(ctx, store, 0b01); err != nil {
		t.Fatal(err)
	}
	// Peeked again, now admitted: a give-back still gives nothing back
	// (the hour's 9 left stay 9, the take below finds them).
	if err := res.Peek(ctx, store); err != nil || !res.Allowed() {
		t.Fatalf("peek after the reset: %v, allowed %v; want admitted", err, res.Allowed())
	}
	if err := res.GiveBack(ctx, store, 0, 0b10); err != nil || res.GaveBack() {
		t.Errorf("give-back of an admitted peeked Result: %v, gave back %v; want nothing done", err, res.GaveBack())
	}
	again := takeResult(t, s, store, r)
	if !again.Allowed() || again.Decision(0).Remaining != 0 || again.Decision(1).Remaining != 8 {
		t.Errorf("after resetting the minute policy: %+v %+v; want admitted, minute 0 left, hour 8 left (not reset)", again.Decision(0), again.Decision(1))
	}
	if again.Peeked() {
		t.Error("a taken Result reports Peeked")
	}
	if err := res.Peek(ctx, takeOnlyStore{store}); !errors.Is(err, errors.ErrUnsupported) || res.Taken() {
		t.Errorf("peek through a store that cannot: %v, taken %v; want errors.ErrUnsupported and no decisions", err, res.Taken())
	}
	if err := res.Reset(ctx, takeOnlyStore{store}, 0b11); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("reset through a store that cannot: %v; want errors.ErrUnsupported", err)
	}
	empty := new(policy.Result)
	if err := s.Prepare(r, 0, empty); err != nil {
		t.Fatal(err)
	}
	if err := empty.Peek(ctx, takeOnlyStore{store}); err != nil || !empty.Taken() || !empty.Allowed() {
		t.Errorf("peek of no checks: %v, taken %v, allowed %v; want no store call, taken and allowed", err, empty.Taken(), empty.Allowed())
	}
	if err := empty.Reset(ctx, takeOnlyStore{store}, ^uint64(0)); err != nil {
		t.Errorf("reset of no checks: %v, want no store call", err)
	}
}
