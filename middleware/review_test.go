package middleware_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// keepingHandler is a slog.Handler that keeps the records it is given, as
// an asynchronous or buffering handler does (the strings of a record are
// immutable Go strings: a handler may keep them).
type keepingHandler struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *keepingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *keepingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.recs = append(h.recs, r.Clone())
	h.mu.Unlock()
	return nil
}
func (h *keepingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *keepingHandler) WithGroup(string) slog.Handler      { return h }

// TestReviewWithoutContextLoggedKeyStable checks that the key a LogObserver
// logs for a denied request keeps its value after the request: without
// context the Result (and the buffer its keys are built in) is recycled,
// so a logged key must not point into it. (Keys are logged with
// LogRawKeys only.)
func TestReviewWithoutContextLoggedKeyStable(t *testing.T) {
	store, _ := newStore(t)
	kh := &keepingHandler{}
	lo, err := middleware.NewLogObserver(slog.New(kh), middleware.LogRawKeys())
	if err != nil {
		t.Fatal(err)
	}
	h := middleware.MustNew(store, []*policy.Policy{fixed("p", 1, time.Minute, remote)},
		middleware.WithoutContext(), middleware.WithObserver(lo)).Handler(ok)
	const clients = 8
	var want []string
	for c := range clients {
		addr := "192.0.2." + strconv.Itoa(c) + ":1"
		for range 2 { // the second is denied and logged
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = addr
			h.ServeHTTP(httptest.NewRecorder(), r)
		}
		want = append(want, "p:"+addr)
	}
	// Requests of other clients reuse the recycled Results.
	for i := range 200 {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "198.51.100." + strconv.Itoa(i%250) + ":9"
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	kh.mu.Lock()
	defer kh.mu.Unlock()
	var keys []string
	for _, rec := range kh.recs {
		rec.Attrs(func(a slog.Attr) bool {
			if a.Key == "key" {
				keys = append(keys, a.Value.String())
			}
			return true
		})
	}
	if len(keys) < clients {
		t.Fatalf("%d keys logged, want at least %d", len(keys), clients)
	}
	for i, w := range want {
		if keys[i] != w {
			t.Errorf("denial %d logged key %q after the request, want %q", i+1, keys[i], w)
		}
	}
}

// TestReviewWithoutContextHeadersAfterReuse checks that the headers of a
// response (here read by an outer handler after the request, as a logging
// middleware does) keep their values while later requests reuse the
// recycled Result, for every profile and for denied requests too.
func TestReviewWithoutContextHeadersAfterReuse(t *testing.T) {
	for _, p := range []middleware.Profile{middleware.IETF, middleware.Draft7, middleware.Draft6, middleware.Legacy} {
		t.Run(strconv.Itoa(int(p)), func(t *testing.T) {
			store, _ := newStore(t)
			h := middleware.MustNew(store, []*policy.Policy{
				fixed("a", 2, time.Minute, remote), fixed("b", 5, time.Minute, remote),
			}, middleware.WithoutContext(), middleware.WithHeaders(p)).Handler(ok)
			type saved struct {
				w    *httptest.ResponseRecorder
				snap http.Header
			}
			var all []saved
			for i := range 60 {
				r := httptest.NewRequest("GET", "/", nil)
				r.RemoteAddr = "192.0.2." + strconv.Itoa(i%7) + ":1"
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				snap := w.Header().Clone()
				for k, vs := range snap { // a deep copy of the strings
					for j := range vs {
						vs[j] = string(append([]byte(nil), vs[j]...))
					}
					snap[k] = vs
				}
				all = append(all, saved{w, snap})
			}
			for i, s := range all {
				for k, vs := range s.snap {
					got := s.w.Header()[k]
					for j := range vs {
						if got[j] != vs[j] {
							t.Errorf("response %d: %s %q became %q", i+1, k, vs[j], got[j])
						}
					}
				}
			}
		})
	}
}

// TestReviewWithoutContextPanicAndNesting: a panic in the next handler
// returns the Result once (later requests decide and report as usual),
// and two nested middlewares without context each give their own IETF
// members, which stay intact after later requests.
func TestReviewWithoutContextPanicAndNesting(t *testing.T) {
	store, _ := newStore(t)
	boom := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Panic") != "" {
			panic(http.ErrAbortHandler)
		}
	})
	inner := middleware.MustNew(store, []*policy.Policy{fixed("in", 100, time.Minute, remote)}, middleware.WithoutContext())
	outer := middleware.MustNew(store, []*policy.Policy{fixed("out", 50, time.Minute, remote)}, middleware.WithoutContext())
	h := outer.Handler(inner.Handler(boom))
	var ws []*httptest.ResponseRecorder
	for i := range 20 {
		r := httptest.NewRequest("GET", "/", nil)
		if i%3 == 0 {
			r.Header.Set("X-Panic", "1")
		}
		w := httptest.NewRecorder()
		func() {
			defer func() { _ = recover() }()
			h.ServeHTTP(w, r)
		}()
		ws = append(ws, w)
	}
	for i, w := range ws {
		want := `"out";r=` + strconv.Itoa(49-i) + `;t=60, "in";r=` + strconv.Itoa(99-i) + ";t=60"
		if got := w.Header().Values("RateLimit"); len(got) != 2 || got[0]+", "+got[1] != want {
			t.Errorf("request %d: RateLimit %q, want %q", i+1, got, want)
		}
	}
}
