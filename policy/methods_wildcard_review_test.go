package policy_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestMethodWildcardRefused: a method written as a wildcard ("*", ANY,
// ALL: CORS's, API gateways' and other routers' spelling of every method)
// or as several joined ("GET|POST", "GET+POST") is a token no client
// sends, so the policy silently never applied: methods: [ANY] on a login
// route left it unlimited. It is refused, in methods and in a route,
// saying how to write what was meant.
func TestMethodWildcardRefused(t *testing.T) {
	for _, tc := range []struct {
		opt          policy.Option
		field, wants string
	}{
		{policy.WithMethods("*"), "Methods", `"*" is no method a client sends: leave methods out for every method`},
		{policy.WithMethods("POST", "ANY"), "Methods", `"ANY" is no method a client sends: leave methods out for every method`},
		{policy.WithMethods("all"), "Methods", `"all" is no method a client sends: leave methods out for every method`},
		{policy.WithMethods("GET|POST"), "Methods", `"GET|POST" joins several methods: list each ("GET", "POST")`},
		{policy.WithMethods("get+post"), "Methods", `"get+post" joins several methods: list each ("GET", "POST")`},
		{policy.WithRoutes("ANY /login"), "Routes", `"ANY /login": "ANY" is no method a client sends: write the route without a method ("/login") for every method`},
		{policy.WithRoutes("* /login"), "Routes", `"* /login": "*" is no method a client sends: write the route without a method ("/login") for every method`},
		{policy.WithRoutes("GET|HEAD /x"), "Routes", `"GET|HEAD /x": "GET|HEAD" joins several methods: write a route for each ("GET /x", "HEAD /x")`},
	} {
		_, err := policy.PerMinute("login", 5, remoteKey, tc.opt)
		var pe *policy.Error
		if !errors.As(err, &pe) || pe.Policy != "login" || pe.Field != tc.field || pe.Reason != tc.wants {
			t.Errorf("PerMinute = %v; want an error on %s: %s", err, tc.field, tc.wants)
		}
	}
	// Custom methods stay the application's, those with a '-' or '_' too.
	for _, m := range []string{"PURGE", "M-SEARCH", "VERSION-CONTROL", "X_ANY", "ANYTHING", "GET2"} {
		if _, err := policy.PerMinute("custom", 5, remoteKey, policy.WithMethods(m), policy.WithRoutes(m+" /x")); err != nil {
			t.Errorf("method %q: %v", m, err)
		}
	}
	// In a file, at the entry.
	const head = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	wantRefused(t, head+"    methods: [POST, ANY]\n    routes: ['GET|POST /x']\n", "m.yaml", []string{
		`5:21 policies[0].methods: "ANY" is no method a client sends: leave methods out for every method`,
		`6:14 policies[0].routes: "GET|POST /x": "GET|POST" joins several methods: write a route for each ("GET /x", "POST /x")`,
	})
	if t.Failed() {
		return
	}
	_, err := policy.ParseConfig([]byte(head+"    methods: ['*']\n"), "m.yaml")
	if err == nil || !strings.Contains(err.Error(), "m.yaml:5:15: policies[0].methods:") {
		t.Errorf("methods: ['*'] = %v, want an error at 5:15", err)
	}
}
