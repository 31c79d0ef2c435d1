package middleware_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestHandlerNilNextPanics: Handler(nil) was accepted, and the first
// request it let through panicked with a nil dereference, after its
// decision had been counted; Handler panics at once, saying so, as
// http.Handle does with a nil handler.
func TestHandlerNilNextPanics(t *testing.T) {
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, remote)})
	for _, next := range []http.Handler{nil, http.HandlerFunc(nil), (*nilHandler)(nil)} {
		got := func() (p any) {
			defer func() { p = recover() }()
			m.Handler(next)
			return nil
		}()
		if got != "middleware: Handler: next is nil" {
			t.Errorf("Handler(%#v): panic %v, want %q", next, got, "middleware: Handler: next is nil")
		}
	}
	if rec := serve(m.Handler(ok), "GET", "/"); rec.Code != http.StatusOK {
		t.Errorf("Handler(ok): status %d, want 200", rec.Code)
	}
}

// nilHandler is a handler type whose nil pointer panics when served.
type nilHandler struct{ body string }

func (h *nilHandler) ServeHTTP(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(h.body)) }
