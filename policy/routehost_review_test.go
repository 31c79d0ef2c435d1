package policy_test

import (
	"errors"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestRouteWithHostSaysSo: a ServeMux pattern with a host ("GET
// example.com/login", as registered) or a URL copied from a browser is
// refused, as WithRoutes says, but the error only said "the path must
// start with '/'", which the path after the host does. It now names the
// host or the URL, and the route to write.
func TestRouteWithHostSaysSo(t *testing.T) {
	for _, tc := range []struct{ route, want string }{
		{"GET example.com/login", `"GET example.com/login" names a host (example.com): a route is a path alone, compared under any host; write "GET /login"`},
		{"api.example.com:8443/v1/{id}", `"api.example.com:8443/v1/{id}" names a host (api.example.com:8443): a route is a path alone, compared under any host; write "/v1/{id}"`},
		{"https://example.com/login", `"https://example.com/login" is a URL: a route is a path alone, compared under any host; write "/login"`},
		{"POST http://example.com", `"POST http://example.com" is a URL: a route is a path alone, compared under any host; write "POST /"`},
		{"login", `"login": the path must start with '/'`},
	} {
		_, err := policy.PerMinute("login", 5, remoteKey, policy.WithRoutes(tc.route))
		var pe *policy.Error
		if !errors.As(err, &pe) || pe.Field != "Routes" || pe.Reason != tc.want {
			t.Errorf("WithRoutes(%q) = %v, want an error on Routes: %s", tc.route, err, tc.want)
		}
	}
}
