package middleware_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	chimw "github.com/go-chi/chi/v5/middleware"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// rr4Req is one request of a routes-review sequence and the status it
// must get.
type rr4Req struct {
	method, target string
	want           int
}

func rr4Run(t *testing.T, h http.Handler, reqs ...rr4Req) {
	t.Helper()
	for i, q := range reqs {
		if w := serve(h, q.method, q.target); w.Code != q.want {
			t.Errorf("#%d %s %s: %d, want %d", i+1, q.method, q.target, w.Code, q.want)
		}
	}
}

func TestRoutesReview4Probe(t *testing.T) {
	t.Run("mux percent-encoded path counts under the route", func(t *testing.T) {
		mux := http.NewServeMux()
		mux.Handle("POST /login", ok)
		store, _ := newStore(t)
		m := middleware.MustNew(store, []*policy.Policy{fixed("login", 1, time.Minute, remote, policy.WithRoutes("POST /login"))},
			middleware.WithPatternFunc(policy.ServeMuxPattern(mux)))
		rr4Run(t, m.Handler(mux), rr4Req{"POST", "/log%69n", 200}, rr4Req{"POST", "/login", 429}, rr4Req{"POST", "//login", 307}, rr4Req{"POST", "/x/../login", 307})
	})
	t.Run("mux host pattern", func(t *testing.T) {
		mux := http.NewServeMux()
		mux.Handle("example.com/", ok)
		store, _ := newStore(t)
		m := middleware.MustNew(store, []*policy.Policy{fixed("root", 1, time.Minute, remote, policy.WithRoutes("/"))},
			middleware.WithPatternFunc(policy.ServeMuxPattern(mux)))
		rr4Run(t, m.Handler(mux), rr4Req{"GET", "http://example.com/a", 200}, rr4Req{"GET", "http://example.com/b", 429}, rr4Req{"GET", "http://other.com/a", 404})
	})
	t.Run("mux {$} and {rest...}", func(t *testing.T) {
		mux := http.NewServeMux()
		mux.Handle("GET /{$}", ok)
		mux.Handle("GET /files/{rest...}", ok)
		store, _ := newStore(t)
		m := middleware.MustNew(store, []*policy.Policy{
			fixed("home", 1, time.Minute, remote, policy.WithRoutes("GET /{$}")),
			fixed("files", 1, time.Minute, remote, policy.WithRoutes("GET /files/{rest...}")),
		}, middleware.WithPatternFunc(policy.ServeMuxPattern(mux)))
		rr4Run(t, m.Handler(mux), rr4Req{"GET", "/", 200}, rr4Req{"HEAD", "/", 429}, rr4Req{"GET", "/files/a/b", 200}, rr4Req{"GET", "/files", 307}, rr4Req{"GET", "/files/", 429})
	})
	t.Run("chi regexp, mount, HEAD via GetHead, StripSlashes", func(t *testing.T) {
		r := chi.NewRouter()
		store, _ := newStore(t)
		m := middleware.MustNew(store, []*policy.Policy{
			fixed("user", 1, time.Minute, remote, policy.WithRoutes("GET /api/users/{id:[0-9]+}")),
			fixed("login", 1, time.Minute, remote, policy.WithRoutes("POST /login")),
		}, middleware.WithPatternFunc(policy.ChiPattern(r)))
		r.Use(chimw.StripSlashes, chimw.GetHead, m.Handler)
		r.Post("/login", ok)
		sub := chi.NewRouter()
		sub.Get("/users/{id:[0-9]+}", ok)
		r.Mount("/api", sub)
		rr4Run(t, r, rr4Req{"GET", "/api/users/1", 200}, rr4Req{"HEAD", "/api/users/2", 429}, rr4Req{"GET", "/api/users/x", 404},
			rr4Req{"POST", "/login/", 200}, rr4Req{"POST", "/login", 429})
	})
	t.Run("chi sub-router Use with its ChiPattern", func(t *testing.T) {
		r := chi.NewRouter()
		store, _ := newStore(t)
		r.Route("/api", func(r chi.Router) {
			m := middleware.MustNew(store, []*policy.Policy{
				fixed("user", 1, time.Minute, remote, policy.WithRoutes("/api/users/{id}")),
			}, middleware.WithPatternFunc(policy.ChiPattern(r)))
			r.Use(m.Handler)
			r.Route("/users", func(r chi.Router) { r.Get("/{id}", ok) })
		})
		rr4Run(t, r, rr4Req{"GET", "/api/users/1", 200}, rr4Req{"GET", "/api/users/2", 429})
	})
	t.Run("chi wildcard", func(t *testing.T) {
		r := chi.NewRouter()
		store, _ := newStore(t)
		m := middleware.MustNew(store, []*policy.Policy{
			fixed("static", 1, time.Minute, remote, policy.WithRoutes("/static/*")),
		}, middleware.WithPatternFunc(policy.ChiPattern(r)))
		r.Use(m.Handler)
		r.Get("/static/*", ok)
		rr4Run(t, r, rr4Req{"GET", "/static/a/b", 200}, rr4Req{"GET", "/static/", 429})
	})
}
