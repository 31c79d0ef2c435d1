package policy_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestChiSlashTwins: chi reports a route registered as "/x/" as "/x", the
// pattern of the route "/x" (RoutePattern trims the slash), so a policy on
// "GET /x" and another on "GET /x/" both applied to the requests of both
// routes, silently: through a real chi router, a request to /x was under
// the "/x/" policy's limit too (and one to /x/ under the "/x" one's).
// ServeMux reports each route as registered, and tells them apart. Under
// ChiPattern, the Set knows its patterns are chi's: two policies whose
// routes chi cannot tell apart are an error naming both; elsewhere (no
// pattern function, ServeMuxPattern; the same route twice in one policy;
// methods that do not meet) they are not.
func TestChiSlashTwins(t *testing.T) {
	plain := policy.Must(policy.PerMinute("plain", 5, remoteKey, policy.WithRoutes("GET /x")))
	slash := policy.Must(policy.PerMinute("slash", 5, remoteKey, policy.WithRoutes("GET /x/")))
	nop := func(http.ResponseWriter, *http.Request) {}

	// What chi does: after routing (r.With), both apply to both routes.
	r := chi.NewRouter()
	s, err := policy.NewSet([]*policy.Policy{plain, slash})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	mw := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			got[req.URL.Path] = s.Match(req)
			next.ServeHTTP(w, req)
		})
	}
	r.With(mw).Get("/x", nop)
	r.With(mw).Get("/x/", nop)
	for _, path := range []string{"/x", "/x/"} {
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
	}
	if got["/x"] != 3 || got["/x/"] != 3 {
		t.Fatalf("chi: masks %v, want both policies on both routes (chi reports both as /x)", got)
	}

	// Under ChiPattern: an error naming both policies and the route.
	_, err = policy.NewSet([]*policy.Policy{plain, slash}, policy.WithPatternFunc(policy.ChiPattern(r)))
	var pe *policy.Error
	if err == nil || !errors.As(err, &pe) || pe.Policy != "slash" || pe.Field != "Routes" ||
		!strings.Contains(err.Error(), `"plain"`) || !strings.Contains(err.Error(), `"GET /x"`) || !strings.Contains(err.Error(), `"GET /x/"`) {
		t.Errorf("NewSet(GET /x, GET /x/) under ChiPattern = %v, want an error at slash's Routes naming plain and both routes", err)
	}
	anyMethod := policy.Must(policy.PerMinute("any", 5, remoteKey, policy.WithRoutes("/x/")))
	if _, err := policy.NewSet([]*policy.Policy{plain, anyMethod}, policy.WithPatternFunc(policy.ChiPattern(r))); err == nil {
		t.Errorf("NewSet(GET /x, /x/) under ChiPattern: no error, want one (a route on any method meets GET)")
	}
	viaMethods := policy.Must(policy.PerMinute("via", 5, remoteKey, policy.WithMethods("GET"), policy.WithRoutes("/x/")))
	if _, err := policy.NewSet([]*policy.Policy{plain, viaMethods}, policy.WithPatternFunc(policy.ChiPattern(r))); err == nil {
		t.Errorf("NewSet(GET /x, methods GET with /x/) under ChiPattern: no error, want one")
	}

	// Not errors.
	post := policy.Must(policy.PerMinute("post", 5, remoteKey, policy.WithRoutes("POST /x/")))
	postMethods := policy.Must(policy.PerMinute("postm", 5, remoteKey, policy.WithMethods("POST"), policy.WithRoutes("/x/")))
	both := policy.Must(policy.PerMinute("both", 5, remoteKey, policy.WithRoutes("GET /x", "GET /x/")))
	other := policy.Must(policy.PerMinute("other", 5, remoteKey, policy.WithRoutes("GET /y/")))
	for _, tc := range []struct {
		name string
		ps   []*policy.Policy
		opts []policy.SetOption
	}{
		{"no pattern function", []*policy.Policy{plain, slash}, nil},
		{"ServeMuxPattern", []*policy.Policy{plain, slash}, []policy.SetOption{policy.WithPatternFunc(policy.ServeMuxPattern(http.NewServeMux()))}},
		{"other methods", []*policy.Policy{plain, post}, []policy.SetOption{policy.WithPatternFunc(policy.ChiPattern(r))}},
		{"other methods by WithMethods", []*policy.Policy{plain, postMethods}, []policy.SetOption{policy.WithPatternFunc(policy.ChiPattern(r))}},
		{"one policy", []*policy.Policy{both}, []policy.SetOption{policy.WithPatternFunc(policy.ChiPattern(r))}},
		{"other paths", []*policy.Policy{plain, other}, []policy.SetOption{policy.WithPatternFunc(policy.ChiPattern(r))}},
		{"same route", []*policy.Policy{slash, policy.Must(policy.PerMinute("slash2", 5, remoteKey, policy.WithRoutes("GET /x/")))}, []policy.SetOption{policy.WithPatternFunc(policy.ChiPattern(r))}},
	} {
		if _, err := policy.NewSet(tc.ps, tc.opts...); err != nil {
			t.Errorf("%s: NewSet = %v, want no error", tc.name, err)
		}
	}
}
