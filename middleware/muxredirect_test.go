package middleware_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestServeMuxRedirectCountsOnce: a middleware wrapping a whole ServeMux,
// with WithPatternFunc(policy.ServeMuxPattern(mux)), and a limit of 2 on
// "POST /login/". A POST to /login is redirected by the mux (307) to
// /login/, and /a/../login/ to /login/ (the cleaned path); the client
// sends the POST again there. ServeMux.Handler reports the pattern the
// redirected request will match, so the redirect counted under the login
// policy and the request sent again counted once more: the first login
// used both units and the second one's redirect was refused (429). Each
// login now costs one unit, as with the limiter wrapping the routed
// handler; the redirects are not reported as unrouted either.
func TestServeMuxRedirectCountsOnce(t *testing.T) {
	store, _ := newStore(t)
	mux := http.NewServeMux()
	mux.Handle("POST /login/", ok)
	login := fixed("login", 2, time.Minute, remote, policy.WithRoutes("POST /login/"))
	var reported []error
	m := middleware.MustNew(store, []*policy.Policy{login},
		middleware.WithPatternFunc(policy.ServeMuxPattern(mux)),
		middleware.WithErrorHandler(func(_ *http.Request, err error) { reported = append(reported, err) }))
	h := m.Handler(mux)
	for i, start := range []string{"/login", "/a/../login/"} {
		w := serve(h, "POST", start)
		if w.Code != http.StatusTemporaryRedirect || w.Header().Get("Location") != "/login/" {
			t.Fatalf("login %d: POST %s: %d to %q, want 307 to /login/", i, start, w.Code, w.Header().Get("Location"))
		}
		if w.Header().Get("RateLimit") != "" {
			t.Errorf("login %d: the redirect carries RateLimit %q; it is under no policy", i, w.Header().Get("RateLimit"))
		}
		if w = serve(h, "POST", "/login/"); w.Code != 200 {
			t.Fatalf("login %d: POST /login/ after the redirect: %d, want 200", i, w.Code)
		}
	}
	if w := serve(h, "POST", "/login/"); w.Code != http.StatusTooManyRequests {
		t.Errorf("third login: %d, want 429 (the policy applies to the route)", w.Code)
	}
	if got := m.Stats().Unrouted; got != 0 || len(reported) != 0 {
		t.Errorf("Stats().Unrouted = %d, reported %v; want 0 and none (a redirect is not an unknown route)", got, reported)
	}
}

// TestRouteKeyOfA404: a policy keyed by client and route (no routes of
// its own) in a middleware around a ServeMux, which knows the route with
// ServeMuxPattern, meets a request no route matches. It is the mux's to
// answer (404), under the policy with the route part policy.NoRoute: not
// a 400 for want of a route key, and not a way around the limit (a
// scanner's 404s count, all under one key per client).
func TestRouteKeyOfA404(t *testing.T) {
	store, _ := newStore(t)
	mux := http.NewServeMux()
	mux.Handle("GET /users/{id}", ok)
	p := fixed("per-route", 2, time.Minute, keyfunc.Must(keyfunc.Join(remote, keyfunc.Route())))
	var reported []error
	m := middleware.MustNew(store, []*policy.Policy{p},
		middleware.WithPatternFunc(policy.ServeMuxPattern(mux)),
		middleware.WithErrorHandler(func(_ *http.Request, err error) { reported = append(reported, err) }))
	h := m.Handler(mux)
	for i, path := range []string{"/nowhere", "/else"} {
		w := serve(h, "GET", path)
		if w.Code != http.StatusNotFound {
			t.Fatalf("404 %d: GET %s: %d, want 404 (the mux's answer)", i, path, w.Code)
		}
		if want := fmt.Sprintf(`"per-route";r=%d;t=60`, 1-i); w.Header().Get("RateLimit") != want {
			t.Errorf("404 %d: RateLimit %q, want %q", i, w.Header().Get("RateLimit"), want)
		}
	}
	if w := serve(h, "GET", "/third"); w.Code != http.StatusTooManyRequests {
		t.Errorf("a third 404 in the minute: %d, want 429 (one key for the client's unrouted requests)", w.Code)
	}
	if w := serve(h, "GET", "/users/7"); w.Code != 200 {
		t.Errorf("a routed request: %d, want 200 (its own key)", w.Code)
	}
	for _, err := range reported {
		t.Errorf("reported %v; want nothing", err)
	}
}
