package policy_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/internal/resultroom"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestResultEachCountOfPolicies: a new Result prepared for one to eight
// policies (each count the first Prepare of its Result, which gives it
// room for as many as apply) holds each policy's key and its own
// decision (each policy's limit tells it apart).
func TestResultEachCountOfPolicies(t *testing.T) {
	ps, s, store := roomSet(t, 8, func(i int) int64 { return int64(10 + i) })
	r := httptest.NewRequest("GET", "/", nil)
	for n := 1; n <= 8; n++ {
		var res policy.Result
		takeHeld(t, fmt.Sprintf("%d policies", n), s, r, uint64(1)<<n-1, &res, store, ps)
	}
}

// TestResultGivenRoom: resultroom.Give makes a Result keep its check,
// decision and namespaced key in the room given (package middleware's
// way of giving its Results room): a key filling the room's 64 key bytes
// is written there from the first byte, not a byte past the room, and
// the first Prepare and Take allocate nothing.
func TestResultGivenRoom(t *testing.T) {
	key := "k"
	for len("p0:"+key) < len(resultroom.One{}.Keys) {
		key += "k"
	}
	s := setKeyed(t, 1, func(*http.Request) (string, error) { return key, nil })
	now := time.Unix(1_700_000_000, 0)
	store := memoryStoreAt(t, &now)
	r := httptest.NewRequest("GET", "/", nil)
	var held struct {
		room  resultroom.One
		after [8]byte // a byte past the room's keys must stay 0
	}
	var res policy.Result
	resultroom.Give(&res, &held.room)
	allocs := testing.AllocsPerRun(1, func() {
		if err := s.Prepare(r, 1, &res); err != nil {
			t.Fatal(err)
		}
		if err := res.Take(context.Background(), store); err != nil {
			t.Fatal(err)
		}
	})
	want := "p0:" + key
	if allocs != 0 || res.Key(0) != want || held.room.Checks[0].Key != want || string(held.room.Keys[:]) != want ||
		held.after != [8]byte{} || held.room.Decisions[0] != res.Decision(0) {
		t.Errorf("a Result given a room of one: %v allocations (want 0), Key %q, the room's check key %q, key bytes %q, bytes after %v, decision %+v (the Result's %+v)",
			allocs, res.Key(0), held.room.Checks[0].Key, held.room.Keys[:], held.after, held.room.Decisions[0], res.Decision(0))
	}
}

// TestGiveBackAfterRefund: a Result refunded is not given back: GiveBack
// returns nil and does nothing (GaveBack and Given false), and the unit
// the Take counted stays counted.
func TestGiveBackAfterRefund(t *testing.T) {
	now := time.Unix(1_700_000_040, 0)
	store := memoryStoreAt(t, &now)
	s := setOf(t, 1)
	r := httptest.NewRequest("GET", "/", nil)
	res := takeResult(t, s, store, r)
	ctx := context.Background()
	if err := res.Refund(ctx, store, 0); err != nil || !res.Refunded() || !res.Allowed() {
		t.Fatalf("Refund: %v, refunded %v, allowed %v", err, res.Refunded(), res.Allowed())
	}
	if err := res.GiveBack(ctx, store, 0, 1); err != nil || res.GaveBack() || res.Given(0) {
		t.Errorf("GiveBack after a refund: %v, gave back %v, given %v; want nil, nothing done", err, res.GaveBack(), res.Given(0))
	}
	if next := takeResult(t, s, store, r); next.Decision(0).Remaining != 8 {
		t.Errorf("the next Take leaves %d of 10, want 8 (the refunded request's unit still counted)", next.Decision(0).Remaining)
	}
}

// TestLowestOfOneAndNone: Lowest of a taken Result with one decision is
// that decision, 0; of a taken Result with none, -1.
func TestLowestOfOneAndNone(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	store := memoryStoreAt(t, &now)
	s := setOf(t, 1)
	r := httptest.NewRequest("GET", "/", nil)
	for _, tc := range []struct {
		mask uint64
		want int
	}{{1, 0}, {0, -1}} {
		var res policy.Result
		if err := s.Prepare(r, tc.mask, &res); err != nil {
			t.Fatal(err)
		}
		if err := res.Take(context.Background(), store); err != nil {
			t.Fatal(err)
		}
		if got := res.Lowest(); got != tc.want {
			t.Errorf("Lowest of a taken Result of %d decisions = %d, want %d", res.Len(), got, tc.want)
		}
	}
}

// TestResultReuseOfManyDoesNotAllocate: a Result reused for five to eight
// policies (more than the rooms of package middleware hold: the room is
// Prepare's own) costs no allocation per request once the first Prepare
// has given it room, keys included, on the memory store (which decides up
// to eight checks without allocating).
func TestResultReuseOfManyDoesNotAllocate(t *testing.T) {
	_, s, store := roomSet(t, 8, func(int) int64 { return 1e9 })
	r := httptest.NewRequest("GET", "/", nil)
	ctx := context.Background()
	for n := 5; n <= 8; n++ {
		mask := uint64(1)<<n - 1
		var res policy.Result
		if err := s.Prepare(r, mask, &res); err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(20, func() {
			if err := s.Prepare(r, mask, &res); err != nil {
				t.Fatal(err)
			}
			if err := res.Take(ctx, store); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%d policies: %v allocations per Prepare and Take of a reused Result, want 0", n, allocs)
		}
	}
}
