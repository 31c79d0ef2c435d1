package policy

import (
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
)

// TestChiRoutePatternIs: chiRoutePatternIs agrees with chi's own
// RoutePattern for stacks of patterns as mounts build them (wildcards to
// collapse, repeatedly; trailing slashes to trim; the root; one longer
// than its stack buffer), and, for a mounted route, allocates nothing.
func TestChiRoutePatternIs(t *testing.T) {
	long := "/" + strings.Repeat("a", 200) + "/*"
	for _, stack := range [][]string{
		nil,
		{"/"},
		{"/login"},
		{"/login/"},
		{"/api/*", "/"},
		{"/api/*", "/v2/*", "/"},
		{"/api/*", "/v2/*", "/{x}"},
		{"/a/*", "/*", "/*", "/b//"},
		{"/a/*/*/", "/c"},
		{"/*", "/"},
		{long, "/items/{id}/"},
	} {
		rc := chi.NewRouteContext()
		rc.RoutePatterns = stack
		want := rc.RoutePattern()
		if !chiRoutePatternIs(rc, want) {
			t.Errorf("%q: not %q, which chi reports", stack, want)
		}
		for _, other := range []string{want + "/", strings.TrimSuffix(want, "/") + "x", strings.Join(stack, "")} {
			if other != want && chiRoutePatternIs(rc, other) {
				t.Errorf("%q: %q, though chi reports %q", stack, other, want)
			}
		}
	}
	rc := chi.NewRouteContext()
	rc.RoutePatterns = []string{"/api/*", "/v2/*", "/login/"}
	if n := testing.AllocsPerRun(100, func() { chiRoutePatternIs(rc, "/api/v2/login") }); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}
