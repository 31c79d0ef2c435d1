package middleware_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestBreakerDefaults: without WithBreaker, the breaker opens after 5
// failures in a row and keeps the store from the requests for 5 s; then
// one request probes it.
func TestBreakerDefaults(t *testing.T) {
	f := &failing{}
	clock := algotest.NewClock(t0)
	m := middleware.MustNew(f, []*policy.Policy{fixed("p", 1, time.Minute, remote)}, middleware.WithClock(clock))
	h := m.Handler(ok)
	for i := range 6 {
		serve(h, "GET", "/")
		if want := min(i+1, 5); f.calls != want {
			t.Fatalf("after %d requests: %d store calls, want %d", i+1, f.calls, want)
		}
	}
	clock.Advance(5*time.Second - 1)
	serve(h, "GET", "/")
	if f.calls != 5 {
		t.Errorf("1 ns before the cooldown's end: %d store calls, want 5 (open)", f.calls)
	}
	clock.Advance(1)
	serve(h, "GET", "/")
	if f.calls != 6 {
		t.Errorf("at the cooldown's end: %d store calls, want 6 (a probe)", f.calls)
	}
}

// TestSetupWarningGoesToWithLogger: a middleware with WithLogger and
// another LogObserver among its observers logs its setup warnings to
// WithLogger's logger.
func TestSetupWarningGoesToWithLogger(t *testing.T) {
	var own, other lockedBuffer
	o, err := middleware.NewLogObserver(slog.New(slog.NewJSONHandler(&other, nil)))
	if err != nil {
		t.Fatal(err)
	}
	store, _ := newStore(t)
	login := fixed("login", 100, time.Minute, remote, policy.WithRoutes("POST /login"))
	m := middleware.MustNew(store, []*policy.Policy{login}, middleware.WithObserver(o),
		middleware.WithLogger(slog.New(slog.NewJSONHandler(&own, nil))))
	serve(m.Handler(ok), "POST", "/login") // not routed: login's route is unknown
	if !strings.Contains(own.String(), "whose route is unknown") {
		t.Errorf("WithLogger's log:\n%s\nwant the setup warning (the other log:\n%s)", own.String(), other.String())
	}
}

// TestWithoutContextHeldRequestAsItCame: without context, a request held
// for a leaky_queue Delay is passed on as it came too.
func TestWithoutContextHeldRequestAsItCame(t *testing.T) {
	store, clock := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{queue10s()}, middleware.WithoutContext(), middleware.WithClock(clock), advancing(clock))
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "v")
	var seen []bool
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, found := middleware.FromContext(r.Context())
		seen = append(seen, r.Context() == ctx && !found)
	}))
	serveCtx(ctx, h, "GET", "/") // departs at once
	serveCtx(ctx, h, "GET", "/") // held 10 s
	if len(seen) != 2 || !seen[0] || !seen[1] || m.Stats().Delayed != 1 {
		t.Errorf("as it came: %v, Delayed %d; want [true true], 1", seen, m.Stats().Delayed)
	}
}
