package policy_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestTakeOneMemoryStore: a Result of one policy taken on the in-memory
// store (decided by its TakeOne, asked by the store's type) holds the
// store's decision, and the store's errors come back wrapped, the Result
// not taken: a closed store, a context ended.
func TestTakeOneMemoryStore(t *testing.T) {
	now := time.Unix(1_700_000_040, 0)
	store := memoryStoreAt(t, &now)
	p := policy.Must(policy.PerMinute("solo", 2, remoteKey))
	s, err := policy.NewSet([]*policy.Policy{p})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	var res policy.Result
	for i, want := range []struct {
		allowed   bool
		remaining int64
	}{{true, 1}, {true, 0}, {false, 0}} {
		prepareInto(t, s, r, &res)
		if err := res.Take(context.Background(), store); err != nil {
			t.Fatalf("Take %d: %v", i, err)
		}
		if d := res.Decision(0); !res.Taken() || d.Allowed != want.allowed || d.Limit != 2 || d.Remaining != want.remaining {
			t.Errorf("Take %d: taken %v, decision %+v; want allowed %v, limit 2, remaining %d", i, res.Taken(), d, want.allowed, want.remaining)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	prepareInto(t, s, r, &res)
	if err := res.Take(ctx, store); !errors.Is(err, context.Canceled) || res.Taken() {
		t.Errorf("Take on an ended context = %v, taken %v; want context.Canceled, not taken", err, res.Taken())
	}

	store.Close()
	prepareInto(t, s, r, &res)
	err = res.Take(context.Background(), store)
	if !errors.Is(err, algorithms.ErrClosed) || !strings.HasPrefix(err.Error(), "policy: store: ") || res.Taken() {
		t.Errorf("Take on a closed store = %v, taken %v; want policy: store: ... wrapping ErrClosed, not taken", err, res.Taken())
	}
}

// TestPrepareOneAfterFoldedCheck: a Result reused for one policy after a
// policy folded into its guard (a WithLimit copy, whose one check is made
// under its guard's Spec, judged at its own limit: Check.Limit) holds a
// check of that policy alone: nothing of the folded one's is left in the
// room, so the store decides it at its own limit.
func TestPrepareOneAfterFoldedCheck(t *testing.T) {
	now := time.Unix(1_700_000_040, 0)
	store := memoryStoreAt(t, &now)
	defer store.Close()
	lowered, err := policy.Must(policy.PerMinute("lowered", 10, remoteKey)).WithLimit(5)
	if err != nil {
		t.Fatal(err)
	}
	folded, err := policy.NewSet([]*policy.Policy{lowered, policy.Must(policy.PerHour("other", 7, remoteKey))})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := policy.NewSet([]*policy.Policy{policy.Must(policy.PerMinute("plain", 3, remoteKey))})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	var res policy.Result
	prepareInto(t, folded, r, &res)
	if err := res.Take(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	if d := res.Decision(0); d.Limit != 5 {
		t.Fatalf("folded policy: Limit %d, want 5", d.Limit)
	}
	prepareInto(t, plain, r, &res)
	if err := res.Take(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	if d := res.Decision(0); !d.Allowed || d.Limit != 3 || d.Remaining != 2 {
		t.Errorf("one policy after a folded one: decision %+v; want allowed, limit 3, remaining 2", d)
	}
}
