package middleware_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// Nested middlewares with leaky_queue policies: which layer holds a
// request, which places stay taken, what the headers, the Result in the
// context and each layer's Stats say. Every queue keys by RemoteAddr
// (httptest's 192.0.2.1:1234), on one memory store and an injected clock;
// a hold advances the clock (no sleeps).

// logHolds is a wait that holds a request by advancing clock, noting each
// hold in *log as who and its length ("outer 10s").
func logHolds(who string, clock *algotest.Clock, log *[]string) middleware.Option {
	return middleware.WithWait(func(_ context.Context, d time.Duration) error {
		*log = append(*log, who+" "+d.String())
		clock.Advance(d)
		return nil
	})
}

// cutHolds is logHolds whose holds, once *cut is set, end after after
// with err (the client gone, a deadline run out) instead.
func cutHolds(who string, clock *algotest.Clock, log *[]string, cut *bool, after time.Duration, err error) middleware.Option {
	return middleware.WithWait(func(_ context.Context, d time.Duration) error {
		if *cut {
			*log = append(*log, who+" "+d.String()+" cut after "+after.String())
			clock.Advance(after)
			return err
		}
		*log = append(*log, who+" "+d.String())
		clock.Advance(d)
		return nil
	})
}

// queueRouter serves h at GET / behind outer and inner: chi's r.Use and
// r.With, or a ServeMux whose handler inner wraps, wrapped by outer.
func queueRouter(mux string, outer, inner *middleware.Middleware, h http.Handler) http.Handler {
	if mux == "chi" {
		r := chi.NewRouter()
		r.Use(outer.Handler)
		r.With(inner.Handler).Get("/", h.ServeHTTP)
		return r
	}
	sm := http.NewServeMux()
	sm.Handle("GET /", inner.Handler(h))
	return outer.Handler(sm)
}

// peekState returns what a request of the policy named name with spec,
// keyed by RemoteAddr, would be told now, without counting it.
func peekState(t *testing.T, store *algorithms.MemoryStore, name string, spec algorithms.Spec) algorithms.Decision {
	t.Helper()
	ds := make([]algorithms.Decision, 1)
	if err := store.Peek(context.Background(), ds, []algorithms.Check{{Spec: spec, Key: name + ":192.0.2.1:1234"}}); err != nil {
		t.Fatal(err)
	}
	return ds[0]
}

// headerLines returns the field lines of key in h joined with " | ".
func headerLines(h http.Header, key string) string { return strings.Join(h.Values(key), " | ") }

// TestNestedSameQueueHeldOnce: one leaky_queue policy met twice on the
// way in, by a middleware nested in itself (chi's r.Use and r.With of
// one middleware; a ServeMux handler wrapped by the middleware that wraps
// the mux) or by one *policy.Policy given to two nested middlewares, is
// decided once, further out (see ErrCountedTwice): the request is held
// once, for its turn in the queue, and takes one place. Three requests in
// a row on a queue of one per 10 s: the first goes at once, the second and
// third are held 10 s each, by the outer layer alone; the queue then holds
// one place (the third's), not two. Every header profile reports the
// queue once, as the outer layer decided it; the handler finds that
// decision in its context; only the outer layer counts the holds in its
// Stats (one middleware nested in itself counts each hold once); the
// error handler hears of the repeat once.
func TestNestedSameQueueHeldOnce(t *testing.T) {
	wantHeaders := map[middleware.Profile]map[string]string{
		middleware.IETF:   {"RateLimit": `"q";r=5;t=0`, "RateLimit-Policy": `"q";q=7;w=10`},
		middleware.Draft7: {"RateLimit": "limit=7, remaining=5, reset=10", "RateLimit-Policy": "7;w=10"},
		middleware.Draft6: {"RateLimit-Limit": "7", "RateLimit-Remaining": "5", "RateLimit-Reset": "10", "RateLimit-Policy": "7;w=10"},
		middleware.Legacy: {"X-RateLimit-Limit": "7", "X-RateLimit-Remaining": "5", "X-RateLimit-Reset": "10"},
	}
	for profile, want := range wantHeaders {
		for _, mux := range []string{"chi", "ServeMux"} {
			for _, shared := range []bool{false, true} {
				name := profile.String() + "/" + mux + "/nested in itself"
				if shared {
					name = profile.String() + "/" + mux + "/one policy in two"
				}
				t.Run(name, func(t *testing.T) {
					store, clock := newStore(t)
					q := queueEvery("q", 10*time.Second) // capacity 7
					var log []string
					var got reports
					outer := middleware.MustNew(store, []*policy.Policy{q}, middleware.WithHeaders(profile),
						middleware.WithClock(clock), logHolds("outer", clock, &log), got.handler())
					inner := outer
					if shared {
						inner = middleware.MustNew(store, []*policy.Policy{q}, middleware.WithHeaders(profile),
							middleware.WithClock(clock), logHolds("inner", clock, &log), got.handler())
					}
					var res *middleware.Result
					h := queueRouter(mux, outer, inner, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
						res, _ = middleware.FromContext(r.Context())
					}))
					var w *httptest.ResponseRecorder
					for i, wantHolds := range []string{"", "outer 10s", "outer 10s"} {
						log = nil
						w = serve(h, "GET", "/")
						if got := strings.Join(log, ", "); w.Code != http.StatusOK || got != wantHolds {
							t.Fatalf("request %d: %d, holds %q; want 200, holds %q", i, w.Code, got, wantHolds)
						}
					}
					if at := clock.Now().Sub(t0); at != 20*time.Second {
						t.Errorf("the third request left at %s, want 20s", at)
					}
					for k, v := range want {
						if got := headerLines(w.Header(), k); got != v {
							t.Errorf("%s %q, want %q", k, got, v)
						}
					}
					// One place taken a request: the third's, 20 s to 30 s.
					if d := peekState(t, store, "q", q.Spec()); d.Remaining != 6 || d.Delay != 10*time.Second {
						t.Errorf("queue after three requests: %d left, next held %s; want 6 left, 10s (one place a request)", d.Remaining, d.Delay)
					}
					if res == nil || res.Len() != 1 || res.Policy(0) != q || res.Decision(0).Delay != 10*time.Second || res.Decision(0).Remaining != 5 {
						t.Errorf("FromContext in the handler: %+v, want the outer decision of q (Delay 10s, 5 left)", res)
					}
					if s := outer.Stats(); s.Delayed != 2 {
						t.Errorf("outer Stats %+v, want Delayed 2", s)
					}
					if s := inner.Stats(); shared && s != (middleware.Stats{}) {
						t.Errorf("inner Stats %+v, want none (it decided nothing)", s)
					}
					if errs := got.twice(); len(errs) != 1 {
						t.Errorf("ErrCountedTwice reports %v, want one", errs)
					}
				})
			}
		}
	}
}

// TestNestedQueuesInnerHoldCutShort: two leaky_queue policies, one of each
// of two nested middlewares: the outer one (one per 10 s) holds the second
// request 10 s, then the inner one (one per 20 s) holds it for its turn,
// 10 s later, and its client goes away (or a server-side deadline runs
// out) 5 s into that hold. The inner layer answers 503 (Retry-After only
// for the deadline: the 5 s left to its turn), counts it Abandoned, and
// gives its place back: its queue is as the first request left it. The
// outer layer's hold was complete, the request left its queue: its place
// stays taken, as a window kind's unit counted further out stays counted
// when a middleware further in refuses the request, unless its count
// gives it back (policy.CountIf, here counting the responses below 400):
// then its queue is empty again and its member of the 503 says so. The
// inner member reports its queue after the refund.
func TestNestedQueuesInnerHoldCutShort(t *testing.T) {
	for _, tc := range []struct {
		name       string
		err        error
		countIf    bool
		retryAfter string
		outerLeft  int64  // the outer queue's places left at the end
		rateLimit  string // the IETF RateLimit lines
	}{
		{"client gone", context.Canceled, false, "", 6, `"q10";r=5;t=0 | "q20";r=3;t=5`},
		{"deadline", context.DeadlineExceeded, false, "5", 6, `"q10";r=5;t=0 | "q20";r=3;t=5`},
		{"client gone, outer CountIf", context.Canceled, true, "", 7, `"q10";r=7;t=0 | "q20";r=3;t=5`},
		{"deadline, outer CountIf", context.DeadlineExceeded, true, "5", 7, `"q10";r=7;t=0 | "q20";r=3;t=5`},
	} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(tc.name+"/"+mux, func(t *testing.T) {
				store, clock := newStore(t)
				var opts []policy.Option
				if tc.countIf {
					opts = append(opts, policy.CountIf(policy.CountSucceeded))
				}
				q10 := policy.Must(policy.New("q10", queueEvery("q10", 10*time.Second).Spec(), remote, opts...))
				q20 := queueEvery("q20", 20*time.Second) // capacity 4
				var log []string
				cut := false
				outer := middleware.MustNew(store, []*policy.Policy{q10}, middleware.WithClock(clock), logHolds("outer", clock, &log))
				inner := middleware.MustNew(store, []*policy.Policy{q20}, middleware.WithClock(clock),
					cutHolds("inner", clock, &log, &cut, 5*time.Second, tc.err))
				h := queueRouter(mux, outer, inner, ok)
				serve(h, "GET", "/") // departs at once from both
				cut, log = true, nil
				w := serve(h, "GET", "/")
				if got, want := strings.Join(log, ", "), "outer 10s, inner 10s cut after 5s"; w.Code != http.StatusServiceUnavailable || got != want {
					t.Fatalf("second request: %d, holds %q; want 503, holds %q", w.Code, got, want)
				}
				if got := w.Header().Get("Retry-After"); got != tc.retryAfter {
					t.Errorf("Retry-After %q, want %q", got, tc.retryAfter)
				}
				if got := headerLines(w.Header(), "RateLimit"); got != tc.rateLimit {
					t.Errorf("RateLimit %q, want %q", got, tc.rateLimit)
				}
				// At 15 s: the inner queue holds the first request's place
				// alone (to 20 s), the outer one the second's (to 20 s)
				// unless given back.
				if d := peekState(t, store, "q20", q20.Spec()); d.Remaining != 3 || d.NextAfter != 5*time.Second {
					t.Errorf("inner queue: %d left, next place in %s; want 3, 5s (the cut request's place given back)", d.Remaining, d.NextAfter)
				}
				if d := peekState(t, store, "q10", q10.Spec()); d.Remaining != tc.outerLeft {
					t.Errorf("outer queue: %d left, want %d", d.Remaining, tc.outerLeft)
				}
				wantGiven := int64(0)
				if tc.countIf {
					wantGiven = 1
				}
				if s := outer.Stats(); s.Delayed != 1 || s.Abandoned != 0 || s.GivenBack != wantGiven {
					t.Errorf("outer Stats %+v, want Delayed 1, Abandoned 0, GivenBack %d", s, wantGiven)
				}
				if s := inner.Stats(); s.Delayed != 1 || s.Abandoned != 1 {
					t.Errorf("inner Stats %+v, want Delayed 1, Abandoned 1", s)
				}
			})
		}
	}
}

// TestNestedQueueInnerDeadlineAfterOuterHold: each layer checks its own
// Delay against the request's deadline as its hold would begin. The
// outer queue (one per 10 s) holds the second request 10 s, within its
// 15 s deadline; the inner one (one per 30 s) would then hold it 20 s
// more, past it: it refuses it at once, 503 with Retry-After 20 (its
// turn), without holding it, and gives its place back; the outer place
// stays taken.
func TestNestedQueueInnerDeadlineAfterOuterHold(t *testing.T) {
	for _, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			store, clock := newStore(t)
			q10, q30 := queueEvery("q10", 10*time.Second), queueEvery("q30", 30*time.Second) // capacities 7 and 3
			var log []string
			outer := middleware.MustNew(store, []*policy.Policy{q10}, middleware.WithClock(clock), logHolds("outer", clock, &log))
			inner := middleware.MustNew(store, []*policy.Policy{q30}, middleware.WithClock(clock), logHolds("inner", clock, &log))
			h := queueRouter(mux, outer, inner, ok)
			serve(h, "GET", "/")
			log = nil
			// A deadline on the wall clock: the holds, on the injected
			// one, take none of it.
			w := serveCtx(beforeTurn(15*time.Second), h, "GET", "/")
			if got := strings.Join(log, ", "); w.Code != http.StatusServiceUnavailable || got != "outer 10s" {
				t.Fatalf("second request: %d, holds %q; want 503 after the outer hold alone", w.Code, got)
			}
			if got := w.Header().Get("Retry-After"); got != "20" {
				t.Errorf("Retry-After %q, want 20", got)
			}
			// At 10 s: the inner queue holds the first request's place
			// alone (to 30 s), the outer one the second's (to 20 s).
			if d := peekState(t, store, "q30", q30.Spec()); d.Remaining != 2 {
				t.Errorf("inner queue: %d left, want 2 (the refused request's place given back)", d.Remaining)
			}
			if d := peekState(t, store, "q10", q10.Spec()); d.Remaining != 6 || d.Delay != 10*time.Second {
				t.Errorf("outer queue: %d left, next held %s; want 6, 10s (its place kept)", d.Remaining, d.Delay)
			}
			if s := inner.Stats(); s.Delayed != 0 || s.Abandoned != 1 {
				t.Errorf("inner Stats %+v, want Delayed 0, Abandoned 1", s)
			}
			if s := outer.Stats(); s.Delayed != 1 || s.Abandoned != 0 {
				t.Errorf("outer Stats %+v, want Delayed 1, Abandoned 0", s)
			}
		})
	}
}

// TestNestedQueueHeldThenRefusedFurtherIn: a middleware further out
// admits the second request, a middleware further in (one a minute)
// refuses it, 429. A leaky_queue further out (one per 10 s) has held it
// 10 s first; its place then stays taken, as a fixed window further out
// (three a minute) keeps the unit it counted: two decisions, the outer
// one's made (see the package doc's Stacking and routes). A count
// (policy.CountIf) that does not count the 429 gives either back, as the
// status is written: the queue is then empty again, the window holds one
// request. The 429 waits for the inner policy, which the outer ones do
// not lengthen (they have room for the retry).
func TestNestedQueueHeldThenRefusedFurtherIn(t *testing.T) {
	for _, tc := range []struct {
		name       string
		queue      bool
		countIf    bool
		holds      string
		retryAfter string
		left       int64 // the outer policy's allowance left at the end
	}{
		{"queue", true, false, "outer 10s", "50", 6},
		{"queue, CountIf", true, true, "outer 10s", "50", 7},
		{"fixed window", false, false, "", "60", 1},
		{"fixed window, CountIf", false, true, "", "60", 2},
	} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(tc.name+"/"+mux, func(t *testing.T) {
				store, clock := newStore(t)
				var opts []policy.Option
				if tc.countIf {
					opts = append(opts, policy.CountIf(policy.CountSucceeded))
				}
				spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 3, Window: time.Minute}
				if tc.queue {
					spec = queueEvery("outer", 10*time.Second).Spec()
				}
				op := policy.Must(policy.New("outer", spec, remote, opts...))
				var log []string
				outer := middleware.MustNew(store, []*policy.Policy{op}, middleware.WithClock(clock), logHolds("outer", clock, &log))
				inner := middleware.MustNew(store, []*policy.Policy{fixed("minute", 1, time.Minute, remote)}, middleware.WithClock(clock))
				h := queueRouter(mux, outer, inner, ok)
				serve(h, "GET", "/")
				log = nil
				w := serve(h, "GET", "/")
				if got := strings.Join(log, ", "); w.Code != http.StatusTooManyRequests || got != tc.holds {
					t.Fatalf("second request: %d, holds %q; want 429, holds %q", w.Code, got, tc.holds)
				}
				if got := w.Header().Get("Retry-After"); got != tc.retryAfter {
					t.Errorf("Retry-After %q, want %s", got, tc.retryAfter)
				}
				if d := peekState(t, store, "outer", spec); d.Remaining != tc.left {
					t.Errorf("outer policy: %d left, want %d", d.Remaining, tc.left)
				}
				wantGiven := int64(0)
				if tc.countIf {
					wantGiven = 1
				}
				if s := outer.Stats(); s.GivenBack != wantGiven {
					t.Errorf("outer Stats %+v, want GivenBack %d", s, wantGiven)
				}
				if s := inner.Stats(); s.Denied != 1 {
					t.Errorf("inner Stats %+v, want Denied 1", s)
				}
			})
		}
	}
}

// TestNestedQueueResultPerLayer: the handler finds the Result of the
// innermost middleware that decided a policy (FromContext), which holds
// only its own: a leaky_queue policy shared with the middleware further
// out (one per 10 s) is left out of it, decided and held for there; its
// own queue (one per 20 s) is in it, with the Delay it was held for.
// Each layer's Stats count its own holds.
func TestNestedQueueResultPerLayer(t *testing.T) {
	for _, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			store, clock := newStore(t)
			q, q20 := queueEvery("q", 10*time.Second), queueEvery("q20", 20*time.Second)
			var log []string
			outer := middleware.MustNew(store, []*policy.Policy{q}, middleware.WithClock(clock), logHolds("outer", clock, &log))
			inner := middleware.MustNew(store, []*policy.Policy{q, q20}, middleware.WithClock(clock), logHolds("inner", clock, &log))
			var res *middleware.Result
			h := queueRouter(mux, outer, inner, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				res, _ = middleware.FromContext(r.Context())
			}))
			serve(h, "GET", "/")
			log = nil
			w := serve(h, "GET", "/")
			if got, want := strings.Join(log, ", "), "outer 10s, inner 10s"; w.Code != http.StatusOK || got != want {
				t.Fatalf("second request: %d, holds %q; want 200, holds %q", w.Code, got, want)
			}
			if res == nil || res.Len() != 1 || res.Policy(0) != q20 || res.Decision(0).Delay != 10*time.Second {
				t.Errorf("FromContext in the handler: %+v, want the inner decision of q20 alone (Delay 10s)", res)
			}
			if got, want := headerLines(w.Header(), "RateLimit"), `"q";r=5;t=0 | "q20";r=2;t=0`; got != want {
				t.Errorf("RateLimit %q, want %q", got, want)
			}
			if so, si := outer.Stats(), inner.Stats(); so.Delayed != 1 || si.Delayed != 1 {
				t.Errorf("Stats outer %+v, inner %+v; want Delayed 1 each", so, si)
			}
		})
	}
}
