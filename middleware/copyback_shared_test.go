package middleware_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

type siblingKey struct{}

// TestCopyBackWritesNothingTheCopyShares: the path values a ServeMux
// inside the middleware matched are given to the request the middleware
// was handed (see Handler) without writing into what net/http's copies
// of a request share: chi keeps its path values in the map a request
// shares with its copies, and writing the ServeMux's "id" there (by
// SetPathValue) raced with a goroutine of the handler still reading its
// request's path values (go test -race), and showed "id" to a copy made
// further out, which no router served.
func TestCopyBackWritesNothingTheCopyShares(t *testing.T) {
	store, clock := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 100, 60e9, remote)}, middleware.WithClock(clock))
	read := make(chan string, 1)
	inner := http.NewServeMux()
	inner.HandleFunc("GET /t/{tenant}/items/{id}", func(w http.ResponseWriter, r *http.Request) {
		go func() { read <- r.PathValue("*") }() // still reading r once the handler returned
	})
	var sibling *http.Request // a copy made further out, which no router serves
	var caller *http.Request  // the request the middleware is handed
	keep := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sibling = r
			caller = r.WithContext(context.WithValue(r.Context(), siblingKey{}, 1))
			next.ServeHTTP(w, caller)
		})
	}
	outer := chi.NewRouter()
	outer.With(keep).Handle("/t/{tenant}/*", m.Handler(inner))
	w := httptest.NewRecorder()
	outer.ServeHTTP(w, httptest.NewRequest("GET", "/t/acme/items/42", nil))
	if got := <-read; got != "items/42" {
		t.Errorf("the handler's goroutine read * = %q, want items/42", got)
	}
	if w.Code != http.StatusOK {
		t.Fatalf("status %d, want 200", w.Code)
	}
	if got, want := caller.PathValue("id"), "42"; got != want {
		t.Errorf("the caller's PathValue(id) = %q, want %q (given back)", got, want)
	}
	if got, want := caller.Pattern, "GET /t/{tenant}/items/{id}"; got != want {
		t.Errorf("the caller's Pattern = %q, want %q", got, want)
	}
	if got := sibling.PathValue("id"); got != "" {
		t.Errorf("a copy made further out: PathValue(id) = %q, want none (no router served it)", got)
	}
	if got, want := sibling.PathValue("tenant"), "acme"; got != want {
		t.Errorf("a copy made further out: PathValue(tenant) = %q, want %q (chi's)", got, want)
	}
}
