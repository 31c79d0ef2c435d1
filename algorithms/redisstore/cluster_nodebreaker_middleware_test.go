package redisstore_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestMiddlewareBreakerClosedWhileOneMasterIsDown: a middleware with its
// default breaker (5 failures in a row) over a Cluster store whose own
// breaker is per master (2 failures): with one master stopped, a dozen
// requests in a row for a key it served fail twice (refused dials), then
// are refused by the store's breaker for that master, unsent; the
// middleware answers them by its failure mode (open: 200, no header).
// Its own breaker counts the two failures but not the store's refusals,
// so it stays closed, and the next request, for a key another master
// serves, is decided by Redis (its RateLimit header). Counting the
// refusals as failures, it opened at the fifth request of the run and
// kept every key from Redis.
func TestMiddlewareBreakerClosedWhileOneMasterIsDown(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts a 3-node cluster of its own; run without -short")
	}
	cl, client := nodeBreakerCluster(t)
	s, clk := nodeBreakerStore(t, client, 2, time.Hour)
	user := keyfunc.Must(keyfunc.Header("X-User"))
	m := middleware.MustNew(s, []*policy.Policy{policy.Must(policy.PerMinute("p", 100, user))},
		middleware.WithClock(clk), middleware.WithErrorHandler(func(*http.Request, error) {}))
	mux := http.NewServeMux()
	mux.Handle("GET /", m.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	// The hash tag of a key is the client key: user-2's slot (157) is
	// node 0's, user-0's (8415) node 1's (see TestClusterBreakerIsPerNode).
	get := func(u string) (int, string) {
		var code int
		var line string
		hangguard.Run(t, 10*time.Second, "GET as "+u, func() {
			req, err := http.NewRequest("GET", srv.URL+"/", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-User", u)
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			code, line = resp.StatusCode, resp.Header.Get("RateLimit")
		})
		return code, line
	}
	for _, u := range []string{"user-2", "user-0"} {
		if code, line := get(u); code != http.StatusNoContent || !strings.HasPrefix(line, `"p";r=99;`) {
			t.Fatalf("%s with every node up: %d RateLimit %q; want 204 decided by Redis", u, code, line)
		}
	}
	if err := cl.Nodes[0].Stop(); err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		if code, line := get("user-2"); code != http.StatusNoContent || line != "" {
			t.Fatalf("request %d for a key of the stopped node: %d RateLimit %q; want the failure mode (204, no header)", i, code, line)
		}
	}
	if code, line := get("user-0"); code != http.StatusNoContent || !strings.HasPrefix(line, `"p";r=98;`) {
		t.Fatalf("user-0 after the run for the stopped node: %d RateLimit %q; want 204 decided by Redis (r=98)", code, line)
	}
	if st := m.Stats(); st.BreakerOpen != 0 || st.StoreErrors != 12 {
		t.Errorf("stats %+v; want the middleware's breaker never open, 12 store errors", st)
	}
}
