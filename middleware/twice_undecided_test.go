package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestSharedPolicyUndecidedOutsideIsDecidedInside: a policy shared by a
// global middleware that fails open and a stricter one further in that
// fails closed (a login route) is not decided by the global one when the
// store fails: the inner one must still decide it, and so fail closed. It
// left it out as if the outer one had decided it, and, with no other
// policy, passed the request on unlimited (200).
func TestSharedPolicyUndecidedOutsideIsDecidedInside(t *testing.T) {
	shared := fixed("per-min", 3, time.Minute, peerIP)
	store := &failing{}
	global := middleware.MustNew(store, []*policy.Policy{shared})
	strict := middleware.MustNew(store, []*policy.Policy{shared}, middleware.OnStoreError(middleware.FailClosed(time.Second)))
	srv := httptest.NewServer(nestedRouter("chi", global, strict))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("login with the store down: %d, want 503 (the inner middleware fails closed)", resp.StatusCode)
	}
	if s := strict.Stats(); s.FailedClosed != 1 {
		t.Errorf("inner Stats %+v, want FailedClosed 1", s)
	}
}

// TestSharedPolicyUndecidedOutsideIsNoRepeat: a middleware further out
// whose store failed (failing open) decided nothing, so the one further in
// that decides the shared policy counts it for the first time: it limits
// the request and reports no ErrCountedTwice (there is nothing counted
// twice, nor a denial further out to explain).
func TestSharedPolicyUndecidedOutsideIsNoRepeat(t *testing.T) {
	shared := fixed("per-min", 1, time.Minute, peerIP)
	store, _ := newStore(t)
	var got reports
	global := middleware.MustNew(&failing{}, []*policy.Policy{shared})
	strict := middleware.MustNew(store, []*policy.Policy{shared}, got.handler())
	srv := httptest.NewServer(nestedRouter("chi", global, strict))
	defer srv.Close()
	codes, _ := getStatuses(t, srv.Client(), srv.URL+"/", 2)
	if codes[0] != http.StatusOK || codes[1] != http.StatusTooManyRequests {
		t.Errorf("statuses %v, want 200 then 429 (decided further in)", codes)
	}
	if errs := got.twice(); len(errs) != 0 {
		t.Errorf("reports %v, want no ErrCountedTwice", errs)
	}
}
