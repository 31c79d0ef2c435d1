package middleware_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestCopyBackToARoutedRequestWritesOnlyThePathValues: a request a
// router further out served already (a ServeMux's "/api/", chi's Mount
// "/api/*") is routed again inside the middleware (the ServeMux it
// wraps, the chi sub-router in whose r.Use it is), which matches {id} on
// the copy next is handed. The copy-back gave the caller's request that
// pattern and its values by overwriting the whole of it, which raced
// (go test -race) with a goroutine of the caller still reading its
// request (a watcher of its client, a logger of its URL), as it did for
// a request no router had served (TestCopyBackWritesOnlyThePathValues):
// a router serving the caller's request itself writes its pattern and
// path values alone. The caller sees the pattern and path values it sees
// without the middleware. Through a server under net/http.
func TestCopyBackToARoutedRequestWritesOnlyThePathValues(t *testing.T) {
	for _, router := range []string{"ServeMux in ServeMux", "ServeMux in chi", "chi in chi"} {
		t.Run(router, func(t *testing.T) {
			store, clock := newStore(t)
			m := middleware.MustNew(store, []*policy.Policy{fixed("p", 100, 60e9, remote)}, middleware.WithClock(clock))
			baseline := routedCaller(t, router, func(h http.Handler) http.Handler { return h })
			if got := routedCaller(t, router, m.Handler); got != baseline {
				t.Errorf("the caller saw %q, want %q (as without the middleware)", got, baseline)
			}
		})
	}
}

// routedCaller serves GET /api/items/7 with router, wrap between the
// caller (a watcher of its request) and the router that matches {id}
// (see TestCopyBackToARoutedRequestWritesOnlyThePathValues), and returns
// the caller's pattern before and after, and its path values id and *.
func routedCaller(t *testing.T, router string, wrap func(http.Handler) http.Handler) [4]string {
	t.Helper()
	var got [4]string
	watch := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			done := make(chan string)
			go func() { done <- r.Method + " " + r.URL.Path }() // reads r while next serves it
			got[0] = r.Pattern
			next.ServeHTTP(w, r)
			if read := <-done; read != "GET /api/items/7" {
				t.Errorf("the watcher read %q", read)
			}
			got[1], got[2], got[3] = r.Pattern, r.PathValue("id"), r.PathValue("*")
		})
	}
	handler := func(http.ResponseWriter, *http.Request) {}
	inner := http.NewServeMux()
	inner.HandleFunc("GET /api/items/{id}", handler)
	var h http.Handler
	switch router {
	case "ServeMux in ServeMux":
		outer := http.NewServeMux()
		outer.Handle("/api/", watch(wrap(inner)))
		h = outer
	case "ServeMux in chi":
		outer := chi.NewRouter()
		outer.Handle("/api/*", watch(wrap(inner)))
		h = outer
	case "chi in chi":
		sub := chi.NewRouter()
		sub.Use(watch, wrap)
		sub.Get("/items/{id}", handler)
		outer := chi.NewRouter()
		outer.Mount("/api", sub)
		h = outer
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	res, err := srv.Client().Get(srv.URL + "/api/items/7")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", res.StatusCode)
	}
	return got
}
