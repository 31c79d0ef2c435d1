package middleware_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigIETFMostConstraining: a configuration file names the profile
// "ietf-most-constraining", the name Profile.String gives it; the
// middleware built from it writes one RateLimit member through chi and a
// ServeMux. Applying the same file again needs no restart; going back to
// "ietf" does (another profile).
func TestConfigIETFMostConstraining(t *testing.T) {
	const doc = "headers: ietf-most-constraining\npolicies:\n" +
		"  - {name: per-second, algorithm: fixed_window, limit: 5, window: 1s}\n" +
		"  - {name: per-minute, algorithm: fixed_window, limit: 100, window: 1m}\n"
	if got, want := policy.HeaderProfile(middleware.IETFMostConstraining.String()), policy.HeadersIETFMostConstraining; got != want {
		t.Errorf("profile named %q in Go, %q in files", got, want)
	}
	for _, router := range []string{"chi", "ServeMux"} {
		store, _ := newStore(t)
		m, err := middleware.FromConfig(store, mustConfig(t, doc))
		if err != nil {
			t.Fatal(err)
		}
		w := serve(mostRouters(m.Handler)[router], "GET", "/")
		if got, want := w.Header().Values("RateLimit"), []string{`"per-second";r=4;t=1`}; !slices.Equal(got, want) {
			t.Errorf("%s: RateLimit %q, want %q", router, got, want)
		}
		if got, want := w.Header().Values("RateLimit-Policy"), []string{`"per-second";q=5;w=1, "per-minute";q=100;w=60`}; !slices.Equal(got, want) {
			t.Errorf("%s: RateLimit-Policy %q, want %q", router, got, want)
		}
		if err := m.ApplyConfig(mustConfig(t, doc)); err != nil {
			t.Errorf("%s: ApplyConfig(the same file) = %v", router, err)
		}
		if err := m.ApplyConfig(mustConfig(t, "headers: ietf\npolicies:\n  - {name: a, limit: 1, window: 1m}\n")); !errors.Is(err, middleware.ErrRestartNeeded) {
			t.Errorf("%s: ApplyConfig(headers: ietf) = %v, want ErrRestartNeeded", router, err)
		}
	}
}
