package policy_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"
	chimw "github.com/go-chi/chi/v5/middleware"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestChiPatternGetHead: behind chi's middleware.GetHead, which routes a
// HEAD request with no HEAD route as GET (its route context's
// RouteMethod), ChiPattern asks with that method: HEAD /x finds the GET
// route "/x", as chi serves it; a HEAD request with its own route finds
// that one.
func TestChiPatternGetHead(t *testing.T) {
	r := chi.NewRouter()
	find := policy.ChiPattern(r)
	var got string
	r.Use(chimw.GetHead)
	r.Use(asking(find, &got))
	nop := func(http.ResponseWriter, *http.Request) {}
	r.Get("/x", nop)
	r.Get("/y/{id}", nop)
	r.Head("/y/{id}", nop)
	for _, tc := range []struct{ method, path, want string }{
		{"HEAD", "/x", "/x"},
		{"GET", "/x", "/x"},
		{"HEAD", "/y/7", "/y/{id}"},
		{"HEAD", "/z", ""},
	} {
		got = "unasked"
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(tc.method, tc.path, nil))
		if got != tc.want {
			t.Errorf("%s %s: ChiPattern = %q, want %q", tc.method, tc.path, got, tc.want)
		}
	}
}

// asking returns a middleware that stores in *got what find answers for
// each request, before passing it on.
func asking(find func(*http.Request) string, got *string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			*got = find(req)
			next.ServeHTTP(w, req)
		})
	}
}
