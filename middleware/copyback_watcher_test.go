package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestCopyBackWritesOnlyThePathValues: a router inside the middleware
// (a ServeMux it wraps, or chi routing after its r.Use) matched path
// values on the copy of the request next was handed; the copy-back gave
// them to the caller's request by overwriting the whole of it (*r = a
// copy of the copy), which raced (go test -race) with a goroutine of the
// caller still reading its request (a watcher of its client, a logger of
// its URL), though no field but the path values changed: a router
// serving the caller's request itself writes its pattern and path values
// alone. The caller, whose request no router had served, still sees the
// pattern and path values.
func TestCopyBackWritesOnlyThePathValues(t *testing.T) {
	for _, router := range []string{"ServeMux", "chi"} {
		t.Run(router, func(t *testing.T) {
			store, clock := newStore(t)
			m := middleware.MustNew(store, []*policy.Policy{fixed("p", 100, 60e9, remote)}, middleware.WithClock(clock))
			var pattern, id string
			watch := func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					done := make(chan string)
					go func() { done <- r.URL.Path }() // reads r while next serves it
					next.ServeHTTP(w, r)
					if got := <-done; got != "/items/7" {
						t.Errorf("the watcher read %q", got)
					}
					pattern, id = r.Pattern, r.PathValue("id")
				})
			}
			ok := func(http.ResponseWriter, *http.Request) {}
			var h http.Handler
			if router == "chi" {
				r := chi.NewRouter()
				r.Use(watch, m.Handler)
				r.Get("/items/{id}", ok)
				h = r
			} else {
				mux := http.NewServeMux()
				mux.HandleFunc("GET /items/{id}", ok)
				h = watch(m.Handler(mux))
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", "/items/7", nil))
			if w.Code != http.StatusOK {
				t.Fatalf("status %d", w.Code)
			}
			want := "GET /items/{id}"
			if router == "chi" {
				want = "/items/{id}"
			}
			if pattern != want || id != "7" {
				t.Errorf("the caller saw pattern %q id %q, want %q and 7", pattern, id, want)
			}
		})
	}
}
