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

// TestResultGiveBack: GiveBack gives back the units of the policies in its
// mask only (the login policy's), the others (per-IP) keep theirs; the
// Result then holds the store's report of the login key after the
// give-back (its unit back: 2 left) and the Take's per-IP decision, and
// Given tells what came back. A
// second GiveBack, a denied Result and a store that is not a GiveBacker
// give nothing back.
func TestResultGiveBack(t *testing.T) {
	now := time.Unix(1_700_000_040, 0)
	store := memoryStoreAt(t, &now)
	key := func(*http.Request) (string, error) { return "k", nil }
	login := policy.Must(policy.New("login", algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 2, Window: time.Minute}, key, policy.CountIf(policy.CountFailed)))
	perIP := policy.Must(policy.New("ip", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 3, Window: time.Minute}, key))
	s, err := policy.NewSet([]*policy.Policy{perIP, login})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.CountIfMask(); got != 0b10 {
		t.Errorf("CountIfMask = %b, want 10", got)
	}
	take := func(st algorithms.Store) *policy.Result {
		t.Helper()
		return takeResult(t, s, st, httptest.NewRequest("POST", "/login", nil))
	}
	ctx := context.Background()
	res := take(store)
	ip, before := res.Decision(0), res.Decision(1)
	if err := res.GiveBack(ctx, store, 0, 0b10); err != nil {
		t.Fatal(err)
	}
	if !res.GaveBack() || res.Given(0) || !res.Given(1) || res.Decision(0) != ip || res.Decision(1).Remaining != 2 || before.Remaining != 1 {
		t.Errorf("after GiveBack: GaveBack %v, Given %v %v, ip decision %+v (was %+v), login decision %+v (was %+v); want login's 2 left",
			res.GaveBack(), res.Given(0), res.Given(1), res.Decision(0), ip, res.Decision(1), before)
	}
	if err := res.GiveBack(ctx, store, 0, 0b10); err != nil {
		t.Fatal(err)
	}
	next := take(store)
	if r0, r1 := next.Decision(0).Remaining, next.Decision(1).Remaining; r0 != 1 || r1 != 1 {
		t.Errorf("the next Take leaves ip %d and login %d, want 1 and 1 (ip counted twice, login once: its unit came back once)", r0, r1)
	}
	// A store that is not a GiveBacker: nothing comes back.
	plain := struct{ algorithms.Store }{store}
	res = take(plain)
	if err := res.GiveBack(ctx, plain, 0, 0b11); err != nil || res.GaveBack() {
		t.Errorf("GiveBack through a plain Store: %v, GaveBack %v", err, res.GaveBack())
	}
	// ip is now exhausted: a denied Take gives nothing back.
	res = take(store)
	if res.Allowed() {
		t.Fatalf("the fourth Take admitted: %+v", res.Decision(0))
	}
	if err := res.GiveBack(ctx, store, 0, 0b11); err != nil || res.GaveBack() {
		t.Errorf("GiveBack of a denied Result: %v, GaveBack %v", err, res.GaveBack())
	}
}
