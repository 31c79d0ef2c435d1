package middleware_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestCopyBackWritesNothingHandSetValuesShare: a caller that set path
// values by hand (r.SetPathValue, no router serving its request, so no
// pattern) holds them in a map its copies share, the copy next is handed
// among them. The path values a ServeMux inside the middleware matched
// were given back by SetPathValue into that map, taken for the caller's
// own: that raced (go test -race) with a goroutine of the handler still
// reading its request's path values, and showed "id" to a copy the caller
// made, which no router served. Through a server under net/http.
func TestCopyBackWritesNothingHandSetValuesShare(t *testing.T) {
	store, clock := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 100, 60e9, remote)}, middleware.WithClock(clock))
	read := make(chan string, 1)
	inner := http.NewServeMux()
	inner.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		go func() { read <- r.PathValue("tenant") }() // still reading r once the handler returned
	})
	var sibling, caller *http.Request
	var got [3]string // the caller's pattern, id and tenant after the middleware
	outer := func(w http.ResponseWriter, r *http.Request) {
		r.SetPathValue("tenant", "acme") // by hand: no router served r
		sibling = r                      // a copy the caller keeps, sharing r's values
		caller = r.WithContext(context.WithValue(r.Context(), siblingKey{}, 1))
		m.Handler(inner).ServeHTTP(w, caller)
		got = [3]string{caller.Pattern, caller.PathValue("id"), caller.PathValue("tenant")}
	}
	srv := httptest.NewServer(http.HandlerFunc(outer))
	defer srv.Close()
	res, err := srv.Client().Get(srv.URL + "/items/42")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", res.StatusCode)
	}
	if v := <-read; v != "acme" {
		t.Errorf("the handler's goroutine read tenant = %q, want acme", v)
	}
	if want := [3]string{"GET /items/{id}", "42", "acme"}; got != want {
		t.Errorf("the caller saw pattern, id, tenant %q, want %q", got, want)
	}
	if v := sibling.PathValue("id"); v != "" {
		t.Errorf("a copy the caller made: PathValue(id) = %q, want none (no router served it)", v)
	}
}
