package main

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestAppliesTo: the APPLIES TO column names methods and routes, so a
// route pattern with a method of its own does not read as a doubled method.
func TestAppliesTo(t *testing.T) {
	for _, tc := range []struct {
		d    policy.Definition
		want string
	}{
		{policy.Definition{}, "all requests"},
		{policy.Definition{Methods: []string{"POST"}, Routes: []string{"POST /login"}}, "methods POST; routes POST /login"},
		{policy.Definition{Routes: []string{"GET /search", "/api/{id}"}}, "routes GET /search, /api/{id}"},
		{policy.Definition{Methods: []string{"POST", "PUT"}}, "methods POST,PUT"},
	} {
		if got := appliesTo(tc.d); got != tc.want {
			t.Errorf("appliesTo(%+v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
