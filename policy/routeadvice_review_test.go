package policy_test

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// quotedRoute matches a Go-quoted string, as the errors of WithRoutes
// quote the routes they name.
var quotedRoute = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// routesToWrite returns the routes a WithRoutes error tells the user to
// write: the quoted strings of each clause that starts with "write ",
// up to the next "; " or the end.
func routesToWrite(reason string) []string {
	var out []string
	for rest := reason; ; {
		i := strings.Index(rest, "write ")
		if i < 0 {
			return out
		}
		rest = rest[i+len("write "):]
		clause := rest
		if j := strings.Index(clause, "; "); j >= 0 {
			clause = clause[:j]
		}
		for _, q := range quotedRoute.FindAllString(clause, -1) {
			if s, err := strconv.Unquote(q); err == nil {
				out = append(out, s)
			}
		}
	}
}

// TestRouteAdviceLoads: a refused route's error that says which route to
// write names one that loads. A route with two faults was told to mend
// one and to write a route that still had the other, refused in its
// turn: a URL copied from a browser with its query ("is a URL ...; write
// "/search?q=1""), a host before a path with a query, a wildcard method
// before a fragment. An express-style parameter (":id") is no fault: the
// routers a WithPatternFunc reads (httprouter, gin, echo) report their
// patterns so (TestColonParamRoutesLoad).
func TestRouteAdviceLoads(t *testing.T) {
	for _, tc := range []struct {
		route string
		want  string // a route the error must tell to write; "" for none
	}{
		{"https://example.com/search?q=1", "/search"},
		{"https://example.com/docs#top", "/docs"},
		{"GET example.com/users/:id", "GET /users/:id"},
		{"example.com/users/:id?x=1", "/users/:id"},
		{"/users/:id?tab=2", "/users/:id"},
		{"/users/:id#top", "/users/:id"},
		{"ANY /docs#top", "/docs"},
		{"* /users/:id", "/users/:id"},
		{"GET|POST /search?q=1", "GET /search"},
		{"http://example.com/files/:path*", "/files/:path*"},
		// One fault: the advice was right, and stays so.
		{"GET example.com/login", "GET /login"},
		{"/search?q=1", "/search"},
		{"ANY /login", "/login"},
		{"GET|HEAD /x", "GET /x"},
	} {
		_, err := policy.PerMinute("p", 5, remoteKey, policy.WithRoutes(tc.route))
		var pe *policy.Error
		if !errors.As(err, &pe) || pe.Field != "Routes" {
			t.Errorf("WithRoutes(%q) = %v, want an error on Routes", tc.route, err)
			continue
		}
		write := routesToWrite(pe.Reason)
		for _, rt := range write {
			if _, err := policy.PerMinute("p", 5, remoteKey, policy.WithRoutes(rt)); err != nil {
				t.Errorf("WithRoutes(%q): %s\n\ttells to write %q, refused: %v", tc.route, pe.Reason, rt, err)
			}
		}
		if tc.want != "" && !strings.Contains(strings.Join(write, "\n")+"\n", tc.want+"\n") {
			t.Errorf("WithRoutes(%q): %s\n\ttells to write %q, want %q among them", tc.route, pe.Reason, write, tc.want)
		}
	}
}

// TestColonParamRoutesLoad: a route with express-style parameters loads:
// ServeMux and chi read it as literal text, but under a WithPatternFunc
// reading httprouter's MatchedRoutePath, gin's FullPath or echo's Path the
// patterns reported are written so, and a route must be written as they
// are to match.
func TestColonParamRoutesLoad(t *testing.T) {
	for _, rt := range []string{"GET /users/:id", "/users/:id/posts/:post", "/files/*filepath", "/v1/{name}:cancel"} {
		if _, err := policy.PerMinute("p", 5, remoteKey, policy.WithRoutes(rt)); err != nil {
			t.Errorf("WithRoutes(%q) = %v, want it loaded", rt, err)
		}
	}
}
