package adaptive_test

import (
	"net/http"
	"testing"

	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// TestHandlerNilNextPanics: Controller.Handler and Fleet.Handler took a nil
// handler and panicked with a nil dereference at the first request; they
// panic at once, saying so, as http.Handle does.
func TestHandlerNilNextPanics(t *testing.T) {
	m := newMiddleware(t, 100)
	c, _ := newController(t, m, adaptive.Config{})
	f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Instances: func() int { return 2 }})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		wrap func(http.Handler) http.Handler
		want string
	}{
		{"Controller", c.Handler, "adaptive: Controller.Handler: next is nil"},
		{"Fleet", f.Handler, "adaptive: Fleet.Handler: next is nil"},
	} {
		for _, next := range []http.Handler{nil, http.HandlerFunc(nil)} {
			got := func() (p any) {
				defer func() { p = recover() }()
				tc.wrap(next)
				return nil
			}()
			if got != tc.want {
				t.Errorf("%s.Handler(%#v): panic %v, want %q", tc.name, next, got, tc.want)
			}
		}
	}
}
