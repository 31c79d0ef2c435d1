package policy_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestHEADMethodPolicyOnOtherRoutes: a policy on the method HEAD takes
// HEAD requests from the policies on GET only where it applies itself, as
// a ServeMux HEAD pattern takes HEAD from the GET pattern of its own path
// only. A Set with a per-client GET limit and a HEAD limit on /health let
// every HEAD request elsewhere through unlimited: HEAD /reports went to the
// GET handler, under neither policy.
func TestHEADMethodPolicyOnOtherRoutes(t *testing.T) {
	gets := policy.Must(policy.PerMinute("gets", 1, remoteKey, policy.WithMethods("GET")))
	healthHead := policy.Must(policy.PerMinute("health-head", 100, remoteKey,
		policy.WithMethods("HEAD"), policy.WithRoutes("/health")))
	s, err := policy.NewSet([]*policy.Policy{gets, healthHead})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	var got []uint64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = append(got, s.Match(r)) })
	mux.Handle("GET /reports", h)
	mux.Handle("/health", h)
	for _, req := range []struct{ method, target string }{
		{"GET", "/reports"},
		{"HEAD", "/reports"}, // served by GET /reports: under gets
		{"GET", "/health"},
		{"HEAD", "/health"}, // the HEAD policy of /health takes it from gets
	} {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(req.method, req.target, nil))
		if w.Code != http.StatusOK {
			t.Fatalf("%s %s: status %d", req.method, req.target, w.Code)
		}
	}
	if want := []uint64{0b01, 0b01, 0b01, 0b10}; !slices.Equal(got, want) {
		t.Errorf("Match (GET /reports, HEAD /reports, GET /health, HEAD /health) = %02b, want %02b", got, want)
	}

	// With a predicate: the HEAD policy applies to some clients only; the
	// others' HEAD requests stay under the GET policy.
	internal := policy.Must(policy.PerMinute("internal-head", 100, remoteKey, policy.WithMethods("HEAD"),
		policy.WithMatch(func(r *http.Request) bool { return r.Header.Get("X-Internal") != "" })))
	s2, err := policy.NewSet([]*policy.Policy{gets, internal})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("HEAD", "/reports", nil)
	if got := s2.Match(r); got != 0b01 {
		t.Errorf("Match(HEAD) from a client the HEAD policy does not apply to = %02b, want 01", got)
	}
	r.Header.Set("X-Internal", "1")
	if got := s2.Match(r); got != 0b10 {
		t.Errorf("Match(HEAD) from a client the HEAD policy applies to = %02b, want 10", got)
	}
}

// TestHEADRoutePolicyThatDoesNotApply: a HEAD route takes HEAD requests
// from the GET route of its path only where its policy applies. With a
// limit on "GET /status" and a looser one on "HEAD /status" for internal
// monitors only (a predicate), the HEAD requests of every other client
// were under neither: the HEAD route's mere presence in the Set took them
// from the GET route, though its policy did not apply to them.
func TestHEADRoutePolicyThatDoesNotApply(t *testing.T) {
	get := policy.Must(policy.PerMinute("status", 1, remoteKey, policy.WithRoutes("GET /status")))
	monitors := policy.Must(policy.PerMinute("monitor-head", 100, remoteKey, policy.WithRoutes("HEAD /status"),
		policy.WithMatch(func(r *http.Request) bool { return r.Header.Get("X-Monitor") != "" })))
	s, err := policy.NewSet([]*policy.Policy{get, monitors})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	var got []uint64
	mux.Handle("GET /status", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = append(got, s.Match(r)) }))
	for _, monitor := range []bool{false, true} {
		for _, method := range []string{"GET", "HEAD"} {
			r := httptest.NewRequest(method, "/status", nil)
			if monitor {
				r.Header.Set("X-Monitor", "1")
			}
			mux.ServeHTTP(httptest.NewRecorder(), r)
		}
	}
	// GET and HEAD from a client, GET and HEAD from a monitor.
	if want := []uint64{0b01, 0b01, 0b01, 0b10}; !slices.Equal(got, want) {
		t.Errorf("Match (client GET, client HEAD, monitor GET, monitor HEAD) = %02b, want %02b", got, want)
	}
}
