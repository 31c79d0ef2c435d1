package middleware_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// named returns minute policies of a million requests, of the one-byte
// key "k" (so that their namespaced keys fit the Result's room), named by
// repeating a letter each length times: their IETF RateLimit member is
// `"<name>";r=999999;t=60` (16 bytes besides the name) from the first
// request on, for 900 000 requests at t0.
func named(lengths ...int) []*policy.Policy {
	k := func(*http.Request) (string, error) { return "k", nil }
	var ps []*policy.Policy
	for i, n := range lengths {
		ps = append(ps, fixed(strings.Repeat(string(rune('a'+i)), n), 1_000_000, time.Minute, k))
	}
	return ps
}

// TestHeaderValuesFillTheirRoom: header values that fill the room a
// request's context (or, without context, its header values) keeps for
// them exactly, 48 bytes for one policy, 128 for more, and one policy's
// long values (a pk parameter, a draft-7 dictionary of long numbers),
// cost no allocation beyond the one of the context (or of the header
// values).
func TestHeaderValuesFillTheirRoom(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)
	bare := allocsPerRequest(ok)
	secret := []byte("0123456789abcdef")
	for _, tt := range []struct {
		name     string
		policies []*policy.Policy
		opts     []middleware.Option
		length   int // of the RateLimit value
	}{
		{"one policy, 48 bytes", named(32), nil, 48},
		{"two policies, 128 bytes", named(64, 30), nil, 128},
		{"three policies, 128 bytes", named(64, 11, 1), nil, 128},
		{"four policies, 128 bytes", named(55, 1, 1, 1), nil, 128},
		{"without context, one policy, 48 bytes", named(32), []middleware.Option{middleware.WithoutContext()}, 48},
		{"without context, two policies, 128 bytes", named(64, 30), []middleware.Option{middleware.WithoutContext()}, 128},
		{"one policy with a pk", named(20), []middleware.Option{middleware.WithPartitionKey(secret)}, 54},
		{"one policy in draft-7", []*policy.Policy{fixed("p", 1_000_000_000, 24*time.Hour, remote)}, []middleware.Option{middleware.WithHeaders(middleware.Draft7)}, 49},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store, clock := newStore(t)
			h := middleware.MustNew(store, tt.policies, append(tt.opts, middleware.WithClock(clock))...).Handler(ok)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r) // the store's first sight of the key allocates
			if got := w.Header().Get("RateLimit"); len(got) != tt.length {
				t.Fatalf("RateLimit %q is %d bytes, want %d", got, len(got), tt.length)
			}
			if got := allocsPerRequest(h); got > bare+1 {
				t.Errorf("%v allocations per request, want at most %v (bare handler + 1)", got, bare+1)
			}
		})
	}
}

// TestOnePolicyContextSize: the context of a request to which one policy
// applies is the 704-byte one (WithoutContext's documentation), not the
// 896 bytes of one with room for longer header values. It counts the
// bytes the whole process allocates, in a process of its own (runAlone).
func TestOnePolicyContextSize(t *testing.T) {
	if !runAlone(t) {
		return
	}
	r := httptest.NewRequest("GET", "/", nil)
	bytes := func(h http.Handler) uint64 {
		const n = 1000
		h.ServeHTTP(httptest.NewRecorder(), r)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range n {
			h.ServeHTTP(httptest.NewRecorder(), r)
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / n
	}
	store, clock := newStore(t)
	bare := bytes(ok)
	h := middleware.MustNew(store, []*policy.Policy{fixed("p", 1_000_000, time.Minute, remote)}, middleware.WithClock(clock)).Handler(ok)
	if got := bytes(h); got >= bare+896 {
		t.Errorf("%d bytes per request, want less than %d (the bare handler's + 896)", got, bare+896)
	}
}

// TestFallbackFailureReported: when the fallback store fails too, the
// error handler is told of both failures, the second saying it is the
// fallback's and matching its store's error.
func TestFallbackFailureReported(t *testing.T) {
	errFallback := errors.New("second store down")
	mem, _ := newStore(t)
	var errs []error
	m := middleware.MustNew(&failing{}, []*policy.Policy{fixed("p", 1, time.Minute, remote)},
		middleware.OnStoreError(middleware.FallBack(&scripted{mem: mem, fail: []error{errFallback}})),
		middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }))
	if w := serve(m.Handler(ok), "GET", "/"); w.Code != http.StatusOK {
		t.Fatalf("both stores failing: %d, want 200 (open)", w.Code)
	}
	if len(errs) != 2 || !errors.Is(errs[0], errDown) || !errors.Is(errs[1], errFallback) || !strings.Contains(errs[1].Error(), "middleware: fallback:") {
		t.Errorf("errors %v, want the store's, then the fallback's, saying so", errs)
	}
}
