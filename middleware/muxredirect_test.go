package middleware_test

import (
	"net/http"
	"testing"
	"time"

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
