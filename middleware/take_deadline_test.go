package middleware_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestTakeDeadlineRetryAfter: a store call still unanswered when a
// server-side deadline on the request runs out (a deadline middleware
// further out, as chi's Timeout sets) is answered 503, as before, but now
// with Retry-After, as a leaky_queue hold cut by a deadline is: the failure
// mode's wait (FailClosed's), at least 1 s. Before, the 503 carried no
// Retry-After, and a well-behaved client could only guess. A client that
// went away (its context cancelled) reads nothing, and still gets none.
// The request is abandoned, not failed closed, in every case. (Shadow
// mode refuses none of them: see TestShadowContextEndedServed.) Through a
// real chi router, in a synctest bubble (deadlines pass on the fake
// clock).
func TestTakeDeadlineRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		name       string
		failClosed time.Duration // FailClosed's wait; 0: fail open
		hook       bool          // a reject hook replaces the 503
		cancel     bool          // the client goes away instead
		want       time.Duration
	}{
		{name: "fail open", want: time.Second},
		{name: "fail closed 5s", failClosed: 5 * time.Second, want: 5 * time.Second},
		{name: "client gone", cancel: true, want: 0},
		{name: "enforced", failClosed: 30 * time.Second, want: 30 * time.Second},
		{name: "enforced, reject hook", failClosed: 30 * time.Second, hook: true, want: 30 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mem, _ := newStore(t)
				var opts []middleware.Option
				if tt.failClosed > 0 {
					opts = append(opts, middleware.OnStoreError(middleware.FailClosed(tt.failClosed)))
				}
				var rej *middleware.Rejection
				if tt.hook {
					opts = append(opts, middleware.WithRejectHandler(func(w http.ResponseWriter, _ *http.Request, j middleware.Rejection) {
						rej = &j
						w.WriteHeader(j.Status)
					}))
				}
				m := middleware.MustNew(&hanging{mem: mem}, []*policy.Policy{fixed("u", 100, time.Minute, user)}, opts...)
				r := chi.NewRouter()
				r.Use(endsAfterASecond(tt.cancel))
				r.Use(m.Handler)
				r.Get("/", ok)
				w := serve(r, "GET", "/", "X-User", "hang")
				if w.Code != http.StatusServiceUnavailable {
					t.Fatalf("status %d, want 503", w.Code)
				}
				if tt.hook {
					if rej == nil {
						t.Fatal("reject hook not called")
					}
					if rej.RetryAfter != tt.want {
						t.Errorf("Rejection.RetryAfter %v, want %v", rej.RetryAfter, tt.want)
					}
				} else {
					want := ""
					if tt.want > 0 {
						want = strconv.FormatInt(int64(tt.want/time.Second), 10)
					}
					if got := w.Header().Get("Retry-After"); got != want {
						t.Errorf("Retry-After %q, want %q", got, want)
					}
				}
				if st := m.Stats(); st.Abandoned != 1 || st.FailedClosed != 0 {
					t.Errorf("stats %+v, want 1 abandoned, none failed closed", st)
				}
			})
		})
	}
}

// endsAfterASecond is a middleware that ends the context of each request
// a second after it comes: a server-side deadline (as chi's Timeout
// sets), or, with cancel, its client going away.
func endsAfterASecond(cancel bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			var ctx context.Context
			var stop context.CancelFunc
			if cancel {
				ctx, stop = context.WithCancel(req.Context())
				time.AfterFunc(time.Second, stop)
			} else {
				ctx, stop = context.WithTimeout(req.Context(), time.Second)
			}
			defer stop()
			next.ServeHTTP(w, req.WithContext(ctx))
		})
	}
}

// TestNestedTakeDeadlineWaitsForOuter: a store call cut short by a
// server-side deadline, in a middleware nested inside one that admitted
// the request with its last unit, is told to come back when that one
// admits again (its 120 s, on the store's clock), not in 1 s, which the
// middleware further out would refuse: the Retry-After of the deadline's
// 503 counts the middlewares further out, as FailClosed's does (see
// TestNestedFailClosedWaitsForOuter).
func TestNestedTakeDeadlineWaitsForOuter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem, clock := newStore(t) // t0 is a two-minute boundary
		outer := middleware.MustNew(mem, []*policy.Policy{fixed("two-min", 1, 2*time.Minute, constKey)}, middleware.WithClock(clock))
		inner := middleware.MustNew(&hanging{mem: mem}, []*policy.Policy{fixed("u", 100, time.Minute, user)}, middleware.WithClock(clock))
		deadline := func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				ctx, cancel := context.WithTimeout(req.Context(), time.Second)
				defer cancel()
				next.ServeHTTP(w, req.WithContext(ctx))
			})
		}
		sm := http.NewServeMux()
		sm.Handle("GET /", deadline(inner.Handler(ok)))
		w := serve(outer.Handler(sm), "GET", "/", "X-User", "hang")
		if w.Code != http.StatusServiceUnavailable {
			t.Fatalf("status %d, want 503", w.Code)
		}
		if got := w.Header().Get("Retry-After"); got != "120" {
			t.Errorf("Retry-After %q, want 120 (the outer policy's wait)", got)
		}
		if st := inner.Stats(); st.Abandoned != 1 {
			t.Errorf("inner stats %+v, want 1 abandoned", st)
		}
	})
}
