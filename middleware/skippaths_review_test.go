package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	chimw "github.com/go-chi/chi/v5/middleware"

	"github.com/ratekeeper/ratekeeper/keyfunc"
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

// TestSkipPathsOtherMethodIsCounted: SkipPaths("/healthz") exempts the
// health check, a GET. A request to that path with another method is
// not the health check: both routers serve it from another route when
// one matches ("POST /{page}" here), and skipped it would reach that
// handler with no limit at all, every time.
func TestSkipPathsOtherMethodIsCounted(t *testing.T) {
	for _, router := range []string{"chi", "ServeMux"} {
		t.Run(router, func(t *testing.T) {
			store, _ := newStore(t)
			m := middleware.MustNew(store, []*policy.Policy{fixed("p", 1, time.Minute, keyfunc.Global())},
				middleware.WithSkip(middleware.SkipPaths("/healthz")))
			var pages atomic.Int64
			page := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { pages.Add(1) })
			var h http.Handler
			if router == "chi" {
				r := chi.NewRouter()
				r.Use(chimw.GetHead, m.Handler) // chi answers HEAD 405 without GetHead
				r.Get("/healthz", ok)
				r.Post("/{page}", page)
				h = r
			} else {
				mux := http.NewServeMux()
				mux.Handle("GET /healthz", ok)
				mux.Handle("POST /{page}", page)
				h = m.Handler(mux)
			}
			for i := range 3 {
				if code := serve(h, "GET", "/healthz").Code; code != 200 {
					t.Errorf("GET /healthz %d: %d, want 200 (skipped)", i, code)
				}
				if code := serve(h, "HEAD", "/healthz").Code; code != 200 {
					t.Errorf("HEAD /healthz %d: %d, want 200 (skipped)", i, code)
				}
			}
			var codes []int
			for range 3 {
				codes = append(codes, serve(h, "POST", "/healthz").Code)
			}
			if pages.Load() != 1 || codes[0] != 200 || codes[1] != 429 || codes[2] != 429 {
				t.Errorf("POST /healthz (routed to /{page}): statuses %v, /{page} served %d, want [200 429 429] and 1: SkipPaths exempted another route's requests", codes, pages.Load())
			}
		})
	}
}

// TestSkipPathsMethodEntries: an entry naming a method skips that method
// alone (a GET one HEAD too); a bare path is a GET entry.
func TestSkipPathsMethodEntries(t *testing.T) {
	skip := middleware.SkipPaths("/healthz", "POST /hooks/deploy", "HEAD /ping", "PUT\t/tabbed")
	for _, tc := range []struct {
		method, path string
		want         bool
	}{
		{"GET", "/healthz", true}, {"HEAD", "/healthz", true}, {"POST", "/healthz", false},
		{"OPTIONS", "/healthz", false}, {"get", "/healthz", false},
		{"POST", "/hooks/deploy", true}, {"GET", "/hooks/deploy", false}, {"PUT", "/hooks/deploy", false},
		{"HEAD", "/ping", true}, {"GET", "/ping", false}, {"PUT", "/tabbed", true},
	} {
		if got := skip(httptest.NewRequest(tc.method, tc.path, nil)); got != tc.want {
			t.Errorf("%s %s: skipped %v, want %v", tc.method, tc.path, got, tc.want)
		}
	}
}
