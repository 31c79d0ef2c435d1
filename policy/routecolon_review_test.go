package policy_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestRouteWithColonParamRefused: a route written with express's,
// httprouter's or gin's parameters ("/users/:id", as express-rate-limit's
// users write routes) was accepted, since ServeMux and chi register it,
// but as literal text: the request for /users/42 is routed to the app's
// "/users/{id}", and the policy silently never applied. A segment
// starting with ':' and a name is refused, naming the route to write. A
// colon elsewhere in a segment (Google's custom methods,
// "/v1/{name}:cancel") or within a chi regexp stays accepted.
func TestRouteWithColonParamRefused(t *testing.T) {
	for _, tc := range []struct{ route, want string }{
		{"/users/:id", `"/users/:id" has the segment ":id", a parameter in express, httprouter and gin but literal text to ServeMux and chi; write "/users/{id}"`},
		{"GET /orgs/:org/repos/:repo/", `"GET /orgs/:org/repos/:repo/" has the segment ":org", a parameter in express, httprouter and gin but literal text to ServeMux and chi; write "GET /orgs/{org}/repos/{repo}/"`},
		{"/files/:path*", `"/files/:path*" has the segment ":path*", a parameter in express, httprouter and gin but literal text to ServeMux and chi; write "/files/{path...}" (ServeMux) or "/files/*" (chi)`},
		{"/dl/:file.:ext", `"/dl/:file.:ext" has the segment ":file.:ext", a parameter in express, httprouter and gin but literal text to ServeMux and chi; write each parameter as {name}`},
	} {
		p, err := policy.PerMinute("users", 5, remoteKey, policy.WithRoutes(tc.route))
		var pe *policy.Error
		if !errors.As(err, &pe) || pe.Field != "Routes" || pe.Reason != tc.want {
			if err == nil {
				// What it did: nothing, for a request the router sent to
				// the route meant.
				s, _ := policy.NewSet([]*policy.Policy{p})
				var got []uint64
				mux := http.NewServeMux()
				mux.HandleFunc("/users/{id}", func(w http.ResponseWriter, r *http.Request) { got = append(got, s.Match(r)) })
				mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/users/42", nil))
				r := chi.NewRouter()
				r.Get("/users/{id}", func(w http.ResponseWriter, r *http.Request) { got = append(got, s.Match(r)) })
				r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/users/42", nil))
				t.Errorf("WithRoutes(%q) accepted; Match of GET /users/42 under ServeMux and chi = %v; want an error: %s", tc.route, got, tc.want)
				continue
			}
			t.Errorf("WithRoutes(%q) = %v, want an error on Routes: %s", tc.route, err, tc.want)
		}
	}
	for _, rt := range []string{"/v1/{name}:cancel", "/v1/projects:list", "/a/{t:[0-9]+:[0-9]+}", "/a/:", "/a/::x", "/a/:1"} {
		if _, err := policy.PerMinute("ok", 5, remoteKey, policy.WithRoutes(rt)); err != nil {
			t.Errorf("WithRoutes(%q) = %v", rt, err)
		}
	}
	wantRefused(t, "policies:\n  - {name: a, limit: 1, window: 1s, routes: ['DELETE /users/:id']}\n", "c.yaml", []string{
		`2:46 policies[0].routes: "DELETE /users/:id" has the segment ":id", a parameter in express, httprouter and gin but literal text to ServeMux and chi; write "DELETE /users/{id}"`,
	})
}
