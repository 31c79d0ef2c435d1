package policy_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigured: a policy reports its own Spec; a copy made by WithLimit,
// lowered or raised, guarded or not, and a copy of it, the Spec of the
// policy first made from.
func TestConfigured(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Second, Burst: 25}
	p := policy.Must(policy.New("tb", spec, constKey))
	low := policy.Must(p.WithLimit(4))
	for name, q := range map[string]*policy.Policy{
		"configured": p, "lowered": low, "lowered twice": policy.Must(low.WithLimit(2)),
		"raised": policy.Must(p.WithLimit(12)), "unguarded": low.Unguarded(),
	} {
		if got := q.Configured(); got != spec {
			t.Errorf("%s: Configured() = %+v, want %+v", name, got, spec)
		}
	}
}

// costSet returns a Set of upload (100 a minute, fixed window, charged
// the X-Cost header) at limit, copied by WithLimit when it is not 100,
// and free (10 a minute, every request costing 1), keyed by constKey.
func costSet(t *testing.T, limit int64) *policy.Set {
	t.Helper()
	upload := policy.Must(policy.New("upload", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Minute}, constKey,
		policy.WithCost(func(r *http.Request) int64 {
			n, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
			return n
		})))
	upload = policy.Must(upload.WithLimit(limit))
	free := policy.Must(policy.PerMinute("free", 10, constKey))
	s, err := policy.NewSet([]*policy.Policy{upload, free})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func costing(n int64) *http.Request {
	r := httptest.NewRequest("POST", "/upload", nil)
	r.Header.Set("X-Cost", strconv.FormatInt(n, 10))
	return r
}

// TestAboveLoweredLimit: a cost above a copy's lowered limit (80 of a
// configured 100) is prepared, not out of range: AboveLimit reports it,
// and Take and Peek deny the request by that policy alone without
// consuming anything (free, which would admit it, keeps its 9), with the
// decision of the key at 80 and the RetryAfter after which the configured
// 100 would admit it (the next minute, the 30 used in this one). A cost
// above the configured
// capacity is out of range, named with the capacity in force; a raised
// copy (150) admits a cost above the configured one.
func TestAboveLoweredLimit(t *testing.T) {
	ctx := context.Background()
	clock := algotest.NewClock(time.Unix(1_700_000_040, 0))
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	s := costSet(t, 80)
	var res policy.Result
	if err := s.Prepare(costing(30), s.Match(costing(30)), &res); err != nil {
		t.Fatal(err)
	}
	if err := res.Take(ctx, store); err != nil || !res.Allowed() || res.AboveLimit(0) {
		t.Fatalf("30 units: Take = %v, allowed %v, above %v; want admitted", err, res.Allowed(), res.AboveLimit(0))
	}

	for _, how := range []string{"Take", "Peek"} {
		if err := s.Prepare(costing(90), s.Match(costing(90)), &res); err != nil {
			t.Fatalf("%s: Prepare of 90 units at 80 = %v, want no error", how, err)
		}
		if !res.AboveLimit(0) || res.AboveLimit(1) || res.AboveLimit(2) || res.Cost(0) != 90 {
			t.Errorf("%s: AboveLimit %v %v %v, Cost %d; want upload alone, 90", how, res.AboveLimit(0), res.AboveLimit(1), res.AboveLimit(2), res.Cost(0))
		}
		if how == "Take" {
			err = res.Take(ctx, store)
		} else {
			err = res.Peek(ctx, store)
		}
		up, free := res.Decision(0), res.Decision(1)
		want := algorithms.Decision{Limit: 80, Remaining: 50, RetryAfter: time.Minute, NextAfter: time.Minute, ResetAfter: time.Minute}
		if err != nil || !res.Taken() || !res.Peeked() || res.Allowed() || up != want || !free.Allowed || free.Remaining != 9 {
			t.Errorf("%s: %v, taken %v, peeked %v, allowed %v, upload %+v, free %+v;\nwant upload %+v, free allowed with 9 left",
				how, err, res.Taken(), res.Peeked(), res.Allowed(), up, free, want)
		}
	}
	// Nothing was consumed: free still has 9, upload 50 at 80.
	if err := s.Prepare(costing(1), s.Match(costing(1)), &res); err != nil {
		t.Fatal(err)
	}
	if err := res.Peek(ctx, store); err != nil || res.Decision(0).Remaining != 50 || res.Decision(1).Remaining != 9 {
		t.Errorf("after the denials: %v, upload %+v, free %+v; want 50 and 9 left", err, res.Decision(0), res.Decision(1))
	}

	err = s.Prepare(costing(150), s.Match(costing(150)), &res)
	var ce *policy.CostError
	if !errors.As(err, &ce) || ce.Error() != `policy: "upload": cost 150 exceeds the capacity 80` || res.Len() != 0 {
		t.Errorf("150 units at 80: Prepare = %v, %d checks; want the CostError of upload, none", err, res.Len())
	}

	raised := costSet(t, 150)
	if err := raised.Prepare(costing(120), raised.Match(costing(120)), &res); err != nil || res.AboveLimit(0) {
		t.Errorf("120 units at 150: Prepare = %v, above %v; want a check within the limit", err, res.AboveLimit(0))
	}
}

// takeOnly is a store that cannot peek: its Take is the memory store's.
type takeOnly struct{ algorithms.Store }

// TestAboveLoweredLimitStoreCannotPeek: with a store that cannot peek,
// Take refuses a cost above the lowered limit with a *CostError naming the
// policy (the capacity in force), calls no store and leaves res not
// taken; Peek's error is errors.ErrUnsupported, as for any Result.
func TestAboveLoweredLimitStoreCannotPeek(t *testing.T) {
	mem, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	s := costSet(t, 80)
	var res policy.Result
	if err := s.Prepare(costing(90), s.Match(costing(90)), &res); err != nil {
		t.Fatal(err)
	}
	err = res.Take(context.Background(), takeOnly{mem})
	var ce *policy.CostError
	if !errors.As(err, &ce) || ce.Policy.Name() != "upload" || ce.Cost != 90 || len(ce.Others) != 0 || res.Taken() {
		t.Errorf("Take = %v, taken %v; want the CostError of upload at 90, not taken", err, res.Taken())
	}
	if err := res.Peek(context.Background(), takeOnly{mem}); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Peek = %v, want ErrUnsupported", err)
	}
}
