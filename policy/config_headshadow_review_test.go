package policy_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// matchedOn serves a request with method to path through mux, behind a
// handler that records which policies of s apply to it (Set.Match, the
// pattern found by ServeMuxPattern, as a limiter around the mux does).
func matchedOn(s *policy.Set, mux *http.ServeMux, method, path string) uint64 {
	var mask uint64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mask = s.Match(r)
		mux.ServeHTTP(w, r)
	})
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, path, nil))
	return mask
}

// TestHeadOnlyPolicyOnGetRoute: a policy on the method HEAD with a route
// on GET ("GET /x") applies to HEAD requests to that route, as ServeMux
// sends them to the GET pattern: it is valid on its own fields. But in a
// Set where another policy has a route on HEAD for the same path, that
// one takes every HEAD request there (Set.Match), and the first policy
// applies to no request at all.
func TestHeadOnlyPolicyOnGetRoute(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Second}
	headOnly := policy.Must(policy.New("head-only", spec, keyfunc.Global(), policy.WithMethods("HEAD"), policy.WithRoutes("GET /x")))
	headRoute := policy.Must(policy.New("head-route", spec, keyfunc.Global(), policy.WithRoutes("HEAD /x")))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /x", func(http.ResponseWriter, *http.Request) {})
	alone, err := policy.NewSet([]*policy.Policy{headOnly}, policy.WithPatternFunc(policy.ServeMuxPattern(mux)))
	if err != nil {
		t.Fatal(err)
	}
	if got := matchedOn(alone, mux, "HEAD", "/x"); got != 1 {
		t.Errorf("alone, HEAD /x: Match = %b, want 1", got)
	}
	both, err := policy.NewSet([]*policy.Policy{headOnly, headRoute}, policy.WithPatternFunc(policy.ServeMuxPattern(mux)))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"} {
		if got := matchedOn(both, mux, m, "/x"); got&1 != 0 {
			t.Errorf("with a HEAD route, %s /x: Match = %b, want head-only (bit 0) never", m, got)
		}
	}
	if got := matchedOn(both, mux, "HEAD", "/x"); got != 2 {
		t.Errorf("with a HEAD route, HEAD /x: Match = %b, want 10", got)
	}
}

// TestConfigHeadShadowedRouteIsRefused: in a file, a route on GET of a
// policy whose methods name HEAD and not GET covers HEAD requests only;
// when another policy of the file has a route on HEAD for the same path,
// it takes them all in the Set the file makes, and the route never
// applies. That was accepted silently; it is reported at the route, with
// the file's other problems. On its own, or where the HEAD route's path
// differs (even only by chi's trailing slash: ServeMux keeps the two
// apart), or where the policy also covers GET, it stays valid.
func TestConfigHeadShadowedRouteIsRefused(t *testing.T) {
	const pol = "  - name: %s\n    limit: 1\n    window: 1s\n"
	p := func(name, rest string) string { return fmt.Sprintf(pol, name) + rest }
	for _, tc := range []struct {
		name string
		doc  string
		want []string // nil: valid
	}{
		{"shadowed by a later policy",
			"policies:\n" + p("head-only", "    methods: [HEAD]\n    routes: [\"GET /x\"]\n") + p("head-route", "    routes: [\"HEAD /x\"]\n"),
			[]string{`6:14 policies[0].routes: "GET /x" covers only HEAD requests under methods ["HEAD"], and policies[1]'s route "HEAD /x" takes every HEAD request to /x: the policy would never apply there`}},
		{"shadowed by an earlier policy, one route of two, with another problem",
			"policies:\n" + p("head-route", "    methods: [GET]\n    routes: [\"HEAD\\t/x/\"]\n") +
				p("head-only", "    methods: [HEAD, POST]\n    routes: [\"POST /y\", \"GET /x/\"]\n") + "  - {name: c, limit: 0, window: 1s}\n",
			[]string{
				`11:25 policies[1].routes: "GET /x/" covers only HEAD requests under methods ["HEAD" "POST"], and policies[0]'s route "HEAD\t/x/" takes every HEAD request to /x/: the policy would never apply there`,
				`12:22 policies[2].limit: must be positive, got 0`,
			}},
		{"alone",
			"policies:\n" + p("head-only", "    methods: [HEAD]\n    routes: [\"GET /x\"]\n"), nil},
		{"another path",
			"policies:\n" + p("head-only", "    methods: [HEAD]\n    routes: [\"GET /x/\"]\n") + p("head-route", "    routes: [\"HEAD /x\"]\n"), nil},
		{"covering GET too",
			"policies:\n" + p("get-head", "    methods: [GET, HEAD]\n    routes: [\"GET /x\"]\n") + p("head-route", "    routes: [\"HEAD /x\"]\n"), nil},
		{"every method",
			"policies:\n" + p("any", "    routes: [\"GET /x\"]\n") + p("head-route", "    routes: [\"HEAD /x\"]\n"), nil},
		{"its own HEAD route",
			"policies:\n" + p("head-only", "    methods: [HEAD]\n    routes: [\"GET /x\", \"HEAD /x\"]\n") + p("head-route", "    routes: [\"HEAD /x\"]\n"), nil},
		// A route with no method under methods naming HEAD is a route on
		// HEAD too (the Set gives it HEAD requests to its path).
		{"shadowed by a HEAD method on a route",
			"policies:\n" + p("head-only", "    methods: [HEAD]\n    routes: [\"GET /x\"]\n") + p("head-method-route", "    methods: [HEAD]\n    routes: [\"/x\"]\n"),
			[]string{`6:14 policies[0].routes: "GET /x" covers only HEAD requests under methods ["HEAD"], and policies[1]'s route "/x" takes every HEAD request to /x: the policy would never apply there`}},
		{"its own HEAD method on a route",
			"policies:\n" + p("head-only", "    methods: [HEAD]\n    routes: [\"GET /x\", \"/x\"]\n") + p("head-route", "    routes: [\"HEAD /x\"]\n"), nil},
		{"a HEAD method, not a HEAD route",
			"policies:\n" + p("head-only", "    methods: [HEAD]\n    routes: [\"GET /x\"]\n") + p("head-method", "    methods: [HEAD]\n"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := policy.ParseConfig([]byte(tc.doc), "h.yaml")
			wantProblems(t, err, tc.want)
		})
	}
}
