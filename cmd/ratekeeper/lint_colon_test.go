package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestLintColonParamRoute: a route with a segment written as express,
// httprouter and gin write a parameter (":id") loads, for a pattern
// function that reports such patterns, but ServeMux and chi read it as
// literal text, so under them the policy never applies: check says so and
// names the route to write. A ':' inside a segment ("/v1/{name}:cancel",
// "/time/12:30") or inside a chi regexp draws nothing.
func TestLintColonParamRoute(t *testing.T) {
	for _, tc := range []struct{ route, want string }{
		{"GET /users/:id", `route "GET /users/:id" has the segment ":id", a parameter in express, httprouter and gin but literal text to ServeMux and chi, under which the policy never applies; write "GET /users/{id}" for them (keep it only under a pattern function that reports such patterns)`},
		{"/users/:id/posts/:post", `route "/users/:id/posts/:post" has the segment ":id", a parameter in express, httprouter and gin but literal text to ServeMux and chi, under which the policy never applies; write "/users/{id}/posts/{post}" for them (keep it only under a pattern function that reports such patterns)`},
		{"/v1/{name}:cancel", ""},
		{"/time/12:30", ""},
		{"/files/{path:[a-z:]+}", ""},
	} {
		doc := fmt.Sprintf("policies:\n  - {name: p, limit: 5, window: 1m, algorithm: sliding_window, key: [ip], routes: [%q]}\n", tc.route)
		cfg, err := policy.ParseConfig([]byte(doc), "test.yaml")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, a := range lint(cfg) {
			if strings.Contains(a, "segment") {
				got = append(got, a)
			}
		}
		var want []string
		if tc.want != "" {
			want = []string{"p (line 2): " + tc.want}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("route %q: advice %q, want %q", tc.route, got, want)
		}
	}
}
