package policy_test

import (
	"errors"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestRouteWithQueryRefused: a route holding a query ("/search?q=1") or a
// fragment ("/docs#top") was accepted, as ServeMux and chi register such
// a pattern; but both match it against the path alone, which holds a '?'
// or '#' only escaped (%3F, %23): a request to /search?q=1 is routed to
// "/search", and the policy silently never applied. Such a route is
// refused; a '?' or '#' within a chi regexp's braces is the regexp's.
func TestRouteWithQueryRefused(t *testing.T) {
	for _, tc := range []struct{ route, want string }{
		{"/search?q=1", `"/search?q=1" holds a query: a route pattern matches the path alone, which holds a '?' only escaped (%3F); write "/search"`},
		{"GET /search?", `"GET /search?" holds a query: a route pattern matches the path alone, which holds a '?' only escaped (%3F); write "GET /search"`},
		{"/docs#top", `"/docs#top" holds a fragment: a client never sends one, and the path holds a '#' only escaped (%23); write "/docs"`},
		{"/a/{id}?x#y", `"/a/{id}?x#y" holds a query: a route pattern matches the path alone, which holds a '?' only escaped (%3F); write "/a/{id}"`},
	} {
		_, err := policy.PerMinute("search", 5, remoteKey, policy.WithRoutes(tc.route))
		var pe *policy.Error
		if !errors.As(err, &pe) || pe.Field != "Routes" || pe.Reason != tc.want {
			t.Errorf("WithRoutes(%q) = %v, want an error on Routes: %s", tc.route, err, tc.want)
		}
	}
	// Within a chi regexp, '?' and '#' are the regexp's.
	for _, rt := range []string{"/a/{id:[0-9]+?}", "/a/{ext:(json)?}", "/a/{tag:#[a-z]+}"} {
		if _, err := policy.PerMinute("ok", 5, remoteKey, policy.WithRoutes(rt)); err != nil {
			t.Errorf("WithRoutes(%q) = %v", rt, err)
		}
	}
	wantRefused(t, "policies:\n  - {name: a, limit: 1, window: 1s, routes: ['/x', 'GET /search?q=1']}\n", "q.yaml", []string{
		`2:52 policies[0].routes: "GET /search?q=1" holds a query: a route pattern matches the path alone, which holds a '?' only escaped (%3F); write "GET /search"`,
	})
}
