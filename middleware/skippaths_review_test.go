package middleware_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestSkipPathsEncodedPathIsCounted: chi routes on r.URL.RawPath when the
// client's percent-encoding is not the default one, so "/%68ealthz" has
// the URL path "/healthz" but is served by whatever route its raw form
// matches ("/{page}" here). SkipPaths("/healthz") must not wave it
// through: every such request would reach that handler unlimited
// (standards.md 7.1, path normalisation). The plain "/healthz" is still
// skipped.
func TestSkipPathsEncodedPathIsCounted(t *testing.T) {
	store, _ := newStore(t)
	ps := []*policy.Policy{fixed("p", 1, time.Minute, remote)}
	m := middleware.MustNew(store, ps, middleware.WithSkip(middleware.SkipPaths("/healthz")))
	r := chi.NewRouter()
	r.Use(m.Handler)
	r.Get("/healthz", ok)
	pages := 0
	r.Get("/{page}", func(w http.ResponseWriter, r *http.Request) { pages++; ok(w, r) })
	for i := range 3 {
		if w := serve(r, "GET", "/healthz"); w.Code != 200 || w.Header().Get("RateLimit") != "" {
			t.Errorf("/healthz %d: %d %q, want 200 and no RateLimit (skipped)", i+1, w.Code, w.Header().Get("RateLimit"))
		}
	}
	codes := []int{}
	for range 3 {
		codes = append(codes, serve(r, "GET", "/%68ealthz").Code)
	}
	if codes[0] != 200 || codes[1] != 429 || codes[2] != 429 {
		t.Errorf("/%%68ealthz (routed to /{page}, %d served): statuses %v, want [200 429 429]: an encoded path skipped by SkipPaths bypasses the limit", pages, codes)
	}
}
