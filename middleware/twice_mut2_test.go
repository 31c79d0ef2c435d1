package middleware_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestCountedTwiceNamesEveryPolicy: a middleware of two policies nested in
// itself reports both, in the set's order, in its one ErrCountedTwice.
func TestCountedTwiceNamesEveryPolicy(t *testing.T) {
	store, _ := newStore(t)
	var got reports
	m := middleware.MustNew(store, []*policy.Policy{
		fixed("per-sec", 10, time.Second, peerIP),
		fixed("per-min", 100, time.Minute, peerIP),
	}, got.handler())
	srv := httptest.NewServer(nestedRouter("chi", m, m))
	defer srv.Close()
	getStatuses(t, srv.Client(), srv.URL+"/", 1)
	const want = `(policies "per-sec", "per-min", on a GET request)`
	if errs := got.twice(); len(errs) != 1 || !strings.Contains(errs[0].Error(), want) {
		t.Errorf("reports %v, want one ErrCountedTwice holding %s", errs, want)
	}
}
