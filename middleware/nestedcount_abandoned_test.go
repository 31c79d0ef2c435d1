package middleware_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// goneBetween passes the request on with its context ended: its client
// went away between two middlewares.
func goneBetween(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// TestNestedLoweredCopyAbandonedCountedOnce: one policy (login) given to
// two nested middlewares that report to one observer, the inner one's
// copy lowered by SetLimit or a reload, or not lowered. The outer
// middleware admits the request and counts it allowed under login; the
// request is then abandoned in the inner one (its context ended before
// the inner one's store call). It is one request of login, allowed by
// the middleware that counted its units, whether or not the copy is
// lowered: not lowered, the inner middleware leaves login out and
// reports nothing of it; lowered, it reported the request abandoned
// under login too (login/abandoned 1 beside login/allowed 1), one
// request counted twice under the policy, as lowering the limit further
// in does not make a request allowed twice either. The inner
// middleware's own policy (own, when it has one) counts it abandoned
// whatever happens to login. The response is the inner middleware's: a
// 503 when it had a policy to decide (its copy lowered, or own), which
// the ended context kept it from; else the handler's 200. Every kind but
// leaky_queue, through chi and a ServeMux, on an injected clock.
func TestNestedLoweredCopyAbandonedCountedOnce(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	for _, spec := range nestedCountKinds {
		for _, withOwn := range []bool{false, true} {
			for _, how := range []string{"not lowered", "SetLimit", "reload"} {
				for _, mux := range []string{"chi", "ServeMux"} {
					name := string(spec.Algorithm) + "/alone/" + how + "/" + mux
					if withOwn {
						name = string(spec.Algorithm) + "/with own/" + how + "/" + mux
					}
					t.Run(name, func(t *testing.T) {
						store, clock := newStore(t)
						obs := newCountingObserver()
						login := policy.Must(policy.New("login", spec, remote))
						keep := []*policy.Policy{fixed("route", 10, time.Minute, remote, policy.WithRoutes("POST /elsewhere"))}
						if withOwn {
							keep = append(keep, fixed("own", 10, time.Minute, remote))
						}
						outer := middleware.MustNew(store, []*policy.Policy{login}, middleware.WithObserver(obs), middleware.WithClock(clock), quiet)
						inner := middleware.MustNew(store, append(keep[:len(keep):len(keep)], login), middleware.WithObserver(obs), middleware.WithClock(clock), quiet)
						lowerInner(t, inner, how, "login", spec, keep)
						wantCode, want := http.StatusOK, "login/allowed 1"
						if withOwn {
							want += ", own/abandoned 1"
						}
						if withOwn || how != "not lowered" {
							wantCode = http.StatusServiceUnavailable
						}
						w := serve(nestedVia(mux, outer, inner, goneBetween, ok), "GET", "/")
						if w.Code != wantCode {
							t.Errorf("status %d, want %d", w.Code, wantCode)
						}
						if got := obs.String(); got != want {
							t.Errorf("observed %q, want %q", got, want)
						}
					})
				}
			}
		}
	}
}

// TestNestedLoweredCopyHoldCutCountedOnce: as
// TestNestedLoweredCopyAbandonedCountedOnce, the request abandoned in the
// inner middleware while it held the request for a leaky_queue of its
// own (queue: one place every 10 s; the second request waits 10 s, and
// its wait is cut short). Two requests of login, each counted allowed
// once, by the outer middleware, whether or not the inner copy is
// lowered (to 2, which both pass); the queue counts one allowed and one
// abandoned. Lowered, the inner middleware reported the second abandoned
// under login too. Through chi and a ServeMux, on an injected clock.
func TestNestedLoweredCopyHoldCutCountedOnce(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 4, Window: time.Minute}
	queueSpec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: 10 * time.Second, MaxDelay: time.Minute}
	for _, how := range []string{"not lowered", "SetLimit", "reload"} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(how+"/"+mux, func(t *testing.T) {
				store, clock := newStore(t)
				obs := newCountingObserver()
				login := policy.Must(policy.New("login", spec, remote))
				keep := []*policy.Policy{
					fixed("route", 10, time.Minute, remote, policy.WithRoutes("POST /elsewhere")),
					policy.Must(policy.New("queue", queueSpec, remote)),
				}
				var waits []time.Duration
				cut := middleware.WithWait(func(_ context.Context, d time.Duration) error {
					waits = append(waits, d)
					return context.Canceled
				})
				outer := middleware.MustNew(store, []*policy.Policy{login}, middleware.WithObserver(obs), middleware.WithClock(clock), quiet)
				inner := middleware.MustNew(store, append(keep[:len(keep):len(keep)], login), middleware.WithObserver(obs), middleware.WithClock(clock), quiet, cut)
				lowerInner(t, inner, how, "login", spec, keep)
				h := nestedVia(mux, outer, inner, nil, ok)
				if w := serve(h, "GET", "/"); w.Code != http.StatusOK {
					t.Fatalf("first request: status %d, want 200", w.Code)
				}
				if w := serve(h, "GET", "/"); w.Code != http.StatusServiceUnavailable {
					t.Errorf("second request: status %d, want 503", w.Code)
				}
				if len(waits) != 1 || waits[0] != 10*time.Second {
					t.Errorf("holds %v, want [10s]", waits)
				}
				if got, want := obs.String(), "login/allowed 2, queue/abandoned 1, queue/allowed 1"; got != want {
					t.Errorf("observed %q, want %q", got, want)
				}
			})
		}
	}
}
