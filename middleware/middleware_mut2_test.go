package middleware_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestSkippedAndUnmatchedServedOnce: a request the skip function exempts,
// and one no policy applies to (a GET under a POST-only policy), goes to
// the handler once, unobserved.
func TestSkippedAndUnmatchedServedOnce(t *testing.T) {
	store, _ := newStore(t)
	rec := &recorder{}
	m := middleware.MustNew(store, []*policy.Policy{fixed("posts", 1, time.Minute, remote, policy.WithMethods(http.MethodPost))},
		middleware.WithObserver(rec), middleware.WithSkip(middleware.SkipPaths("/healthz")))
	h := m.Handler(ok)
	for _, target := range []string{"/healthz", "/"} {
		for range 2 {
			if w := serve(h, "GET", target); w.Code != http.StatusOK || w.Body.String() != "ok" {
				t.Errorf("GET %s: %d %q, want 200 %q (the handler once)", target, w.Code, w.Body, "ok")
			}
		}
	}
	if len(rec.outcomes) != 0 {
		t.Errorf("outcomes %v, want none", rec.outcomes)
	}
}

// downWhen is a store that fails while *down, and else asks Store.
type downWhen struct {
	algorithms.Store
	down *bool
}

func (s downWhen) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	if *s.down {
		return nil, errDown
	}
	return s.Store.Take(ctx, checks...)
}

// resultSeen is an observer that notes, as it is called, what the Result
// of each request says: a Result of a middleware WithoutContext is
// recycled after the call.
type resultSeen struct {
	nopObserver
	seen []string
}

func (o *resultSeen) ObserveRequest(e middleware.Event) {
	err := fmt.Sprint(e.Result.Err())
	if errors.Is(e.Result.Err(), errDown) {
		err = "errDown"
	}
	o.seen = append(o.seen, fmt.Sprintf("%s err=%s fallback=%v retry=%s", e.Outcome, err, e.Result.Fallback(), e.Result.RetryAfter()))
}

// TestWithoutContextResultRecycledClean: the recycled Result of a
// middleware WithoutContext starts each request clean: an admitted
// request after a failed one carries no error, and its RetryAfter is 0.
func TestWithoutContextResultRecycledClean(t *testing.T) {
	mem, _ := newStore(t)
	down := false
	obs := &resultSeen{}
	m := middleware.MustNew(downWhen{mem, &down}, []*policy.Policy{fixed("p", 100, time.Minute, remote)},
		middleware.WithoutContext(), middleware.WithObserver(obs), middleware.WithBreaker(0, 0))
	h := m.Handler(ok)
	var want []string
	for range 5 {
		down = true
		serve(h, "GET", "/")
		down = false
		serve(h, "GET", "/")
		want = append(want, "failed_open err=errDown fallback=false retry=0s", "allowed err=<nil> fallback=false retry=0s")
	}
	if !slices.Equal(obs.seen, want) {
		t.Errorf("observed\n%q\nwant\n%q", obs.seen, want)
	}
}

// TestWithoutContextAllocations: without context, the middleware recycles
// the Result: a request under NoHeaders allocates nothing beyond the
// handler's own.
func TestWithoutContextAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector (sync.Pool drops items)")
	}
	store, _ := newStore(t)
	r := httptest.NewRequest("GET", "/", nil)
	bare := allocsPerRequest(ok)
	h := middleware.MustNew(store, []*policy.Policy{fixed("p", 1_000_000, time.Minute, remote)},
		middleware.WithoutContext(), middleware.WithHeaders(middleware.NoHeaders)).Handler(ok)
	h.ServeHTTP(httptest.NewRecorder(), r) // the store's first sight of the key allocates
	if got := allocsPerRequest(h); got > bare {
		t.Errorf("%v allocations per request, want at most %v (the bare handler's)", got, bare)
	}
}

// TestNestedInnerDecidesItsOwnPolicies: a middleware nested in another
// leaves out the policy they share (counted further out), and decides its
// own: its limit of 1 refuses the second request.
func TestNestedInnerDecidesItsOwnPolicies(t *testing.T) {
	store, _ := newStore(t)
	shared := fixed("shared", 100, time.Minute, remote)
	outer := middleware.MustNew(store, []*policy.Policy{shared})
	inner := middleware.MustNew(store, []*policy.Policy{fixed("own", 1, time.Minute, remote), shared})
	h := nestedRouter("ServeMux", outer, inner)
	for i, want := range []int{http.StatusOK, http.StatusTooManyRequests} {
		if w := serve(h, "GET", "/"); w.Code != want {
			t.Errorf("request %d: %d, want %d", i, w.Code, want)
		}
	}
}

// TestCostOutOfRangeCountedAndObserved: a request whose cost is beyond the
// capacity is denied: Stats counts it and the observer is told so.
func TestCostOutOfRangeCountedAndObserved(t *testing.T) {
	store, _ := newStore(t)
	rec := &recorder{}
	m := middleware.MustNew(store, []*policy.Policy{fixed("heavy", 1, time.Minute, remote, policy.WithCost(func(*http.Request) int64 { return 5 }))},
		middleware.WithObserver(rec))
	if w := serve(m.Handler(ok), "GET", "/"); w.Code != http.StatusTooManyRequests {
		t.Fatalf("cost 5 of 1: %d, want 429", w.Code)
	}
	if st := m.Stats(); st.Denied != 1 {
		t.Errorf("Stats().Denied %d, want 1", st.Denied)
	}
	if want := []string{"denied"}; !slices.Equal(rec.outcomes, want) {
		t.Errorf("outcomes %v, want %v", rec.outcomes, want)
	}
}

// cancelsTake is a store whose call ends the request's context (cancel),
// as when the client goes away during it, and fails with the context's
// error.
type cancelsTake struct{ cancel context.CancelFunc }

func (s cancelsTake) Take(ctx context.Context, _ ...algorithms.Check) ([]algorithms.Decision, error) {
	s.cancel()
	return nil, fmt.Errorf("store: %w", ctx.Err())
}

// TestNestedRefusalsGiveOuterUnitBackAtWrite: every refusal of a
// middleware further in (no key, a cost out of range, a client gone while
// the store decided, a leaky_queue turn past the deadline, a hold cut
// short) makes the policy further out that counts successes only give its
// unit back as the refusal's status is written, before the headers go
// out: its line reports the allowance whole (r=2, t=0), not r=1.
func TestNestedRefusalsGiveOuterUnitBackAtWrite(t *testing.T) {
	for _, tt := range []struct {
		name   string
		status int
		inner  func(store algorithms.Store, cancel context.CancelFunc) *middleware.Middleware
		ctx    func(context.Context) (context.Context, context.CancelFunc)
	}{
		{
			name:   "cost out of range",
			status: http.StatusTooManyRequests,
			inner: func(store algorithms.Store, _ context.CancelFunc) *middleware.Middleware {
				return middleware.MustNew(store, []*policy.Policy{fixed("heavy", 1, time.Minute, remote, policy.WithCost(func(*http.Request) int64 { return 5 }))})
			},
		},
		{
			name:   "no key",
			status: http.StatusBadRequest,
			inner: func(store algorithms.Store, _ context.CancelFunc) *middleware.Middleware {
				return middleware.MustNew(store, []*policy.Policy{fixed("per-user", 1, time.Minute, user)})
			},
		},
		{
			name:   "client gone while decided",
			status: http.StatusServiceUnavailable,
			inner: func(_ algorithms.Store, cancel context.CancelFunc) *middleware.Middleware {
				return middleware.MustNew(cancelsTake{cancel}, []*policy.Policy{fixed("minute", 1, time.Minute, remote)})
			},
		},
		{
			name:   "queue turn past the deadline",
			status: http.StatusServiceUnavailable,
			inner: func(store algorithms.Store, _ context.CancelFunc) *middleware.Middleware {
				m := middleware.MustNew(store, []*policy.Policy{queue10s()}, middleware.WithWait(func(context.Context, time.Duration) error { return nil }))
				serve(m.Handler(ok), "GET", "/") // departs at once: the next turn is 10 s away
				return m
			},
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				return deadlineOnly{Context: ctx, at: time.Now().Add(time.Second)}, func() {} // see beforeTurn
			},
		},
		{
			name:   "hold cut short",
			status: http.StatusServiceUnavailable,
			inner: func(store algorithms.Store, _ context.CancelFunc) *middleware.Middleware {
				m := middleware.MustNew(store, []*policy.Policy{queue10s()}, middleware.WithWait(func(context.Context, time.Duration) error { return context.Canceled }))
				serve(m.Handler(ok), "GET", "/") // departs at once: the next is held
				return m
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store, clock := newStore(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.ctx != nil {
				var cancelTimeout context.CancelFunc
				ctx, cancelTimeout = tt.ctx(ctx)
				defer cancelTimeout()
			}
			outer := middleware.MustNew(store, []*policy.Policy{fixed("two-min", 2, 2*time.Minute, remote, policy.CountIf(policy.CountSucceeded))}, middleware.WithClock(clock))
			h := nestedRouter("ServeMux", outer, tt.inner(store, cancel))
			w := serveCtx(ctx, h, "GET", "/")
			if want := `"two-min";r=2;t=0`; w.Code != tt.status || w.Header().Values("RateLimit")[0] != want {
				t.Errorf("%d RateLimit %q, want %d with the outer line %q first", w.Code, w.Header().Values("RateLimit"), tt.status, want)
			}
		})
	}
}

// TestShadowClientGoneObserved: in shadow mode, a request whose client
// went away while the store decided it goes on to the handler, and the
// observer is told it was shadow-denied.
func TestShadowClientGoneObserved(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{}
	m := middleware.MustNew(cancelsTake{cancel}, []*policy.Policy{fixed("p", 1, time.Minute, remote)},
		middleware.WithShadow(nil), middleware.WithObserver(rec))
	if w := serveCtx(ctx, m.Handler(ok), "GET", "/"); w.Body.String() != "ok" {
		t.Errorf("%d %q, want the handler's answer", w.Code, w.Body)
	}
	if want := []string{"shadow_denied"}; !slices.Equal(rec.outcomes, want) {
		t.Errorf("outcomes %v, want %v", rec.outcomes, want)
	}
}

// TestFailClosedRetryAfterAtLeastOneSecond: FailClosed(0) still answers
// Retry-After: 1, as documented (at least 1).
func TestFailClosedRetryAfterAtLeastOneSecond(t *testing.T) {
	m := middleware.MustNew(&failing{}, []*policy.Policy{fixed("p", 1, time.Minute, remote)}, middleware.OnStoreError(middleware.FailClosed(0)))
	if w := serve(m.Handler(ok), "GET", "/"); w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" {
		t.Errorf("%d Retry-After %q, want 503 1", w.Code, w.Header().Get("Retry-After"))
	}
}

// TestNestedAdmittedRetryAfterZero: an admitted request's RetryAfter is
// 0, even when a middleware further out admitted it with its last unit.
func TestNestedAdmittedRetryAfterZero(t *testing.T) {
	store, _ := newStore(t)
	outer := middleware.MustNew(store, []*policy.Policy{fixed("outer", 1, time.Minute, remote)})
	inner := middleware.MustNew(store, []*policy.Policy{fixed("inner", 10, time.Minute, remote)})
	retry := time.Duration(-1)
	h := outer.Handler(inner.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if res, ok := middleware.FromContext(r.Context()); ok {
			retry = res.RetryAfter()
		}
	})))
	if w := serve(h, "GET", "/"); w.Code != http.StatusOK || retry != 0 {
		t.Errorf("%d, RetryAfter %s; want 200, 0", w.Code, retry)
	}
}

// TestQueueHoldOfOneNanosecond: a leaky_queue Delay of 1 ns is a hold
// like any other: waited for, counted in Stats.Delayed, and the headers
// are written after it.
func TestQueueHoldOfOneNanosecond(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: time.Minute}
	store := fixedAnswer{Allowed: true, Limit: 2, Remaining: 1, Delay: 1, NextAfter: time.Second, ResetAfter: time.Second}
	var waits []time.Duration
	m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("queue", spec, remote))},
		middleware.WithWait(func(_ context.Context, d time.Duration) error {
			waits = append(waits, d)
			return nil
		}))
	w := serve(m.Handler(ok), "GET", "/")
	if w.Code != http.StatusOK || !slices.Equal(waits, []time.Duration{1}) || m.Stats().Delayed != 1 || w.Header().Get("RateLimit") == "" {
		t.Errorf("%d, waits %v, Delayed %d, RateLimit %q; want 200 after a 1 ns hold, counted, with headers",
			w.Code, waits, m.Stats().Delayed, w.Header().Get("RateLimit"))
	}
}

// TestQueueDeadlineRefusalRetryAfterShortTurn: a leaky_queue request
// refused at once because its deadline comes before its turn, 1 s away,
// is told to retry in 1 s.
func TestQueueDeadlineRefusalRetryAfterShortTurn(t *testing.T) {
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{queueEvery("queue", time.Second)},
		middleware.WithWait(func(context.Context, time.Duration) error { return nil }))
	h := m.Handler(ok)
	serve(h, "GET", "/") // departs at once
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if w := serveCtx(ctx, h, "GET", "/"); w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" {
		t.Errorf("%d Retry-After %q, want 503 1", w.Code, w.Header().Get("Retry-After"))
	}
}

// TestQueueHoldRanLateRetryAfter: a hold whose server-side deadline ran
// out as its turn came (the wait ran late) is told to retry in 1 s, the
// least; nested in a middleware that admitted it with its last unit, in
// the time left of that one's wait after the hold (60 s less the 5 s held).
func TestQueueHoldRanLateRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		name   string
		nested bool
		part   int64 // the part of the Delay the wait advances the clock by, in tenths
		want   string
	}{
		{"held its whole turn", false, 10, "1"},
		{"nested, held half its turn", true, 5, "55"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store, clock := newStore(t)
			inner := middleware.MustNew(store, []*policy.Policy{queue10s()}, middleware.WithClock(clock),
				middleware.WithWait(func(_ context.Context, d time.Duration) error {
					clock.Advance(d * time.Duration(tt.part) / 10)
					return context.DeadlineExceeded
				}))
			serve(inner.Handler(ok), "GET", "/") // departs at once
			h := inner.Handler(ok)
			if tt.nested {
				outer := middleware.MustNew(store, []*policy.Policy{fixed("minute", 1, time.Minute, remote)}, middleware.WithClock(clock))
				h = outer.Handler(h)
			}
			if w := serve(h, "GET", "/"); w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != tt.want {
				t.Errorf("%d Retry-After %q, want 503 %s", w.Code, w.Header().Get("Retry-After"), tt.want)
			}
		})
	}
}

// TestHeldLineRevisedOnlyByGiveBack: a held request (a queue of one per
// 10 s, its second request held 10 s) whose handler writes nothing, so
// that its headers go out once the handler returns, after the give-back.
// A unit given back (login counts failures only) is reported in the
// login's member (r=5 of 5). A response that counts, or a give-back the
// store fails, revises nothing: the queue's member keeps t counted from
// the end of the hold (t=0), not from the decision (t=10).
func TestHeldLineRevisedOnlyByGiveBack(t *testing.T) {
	quiet := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, tt := range []struct {
		name   string
		count  func(*http.Request, int) bool
		broken bool // the store's give-back fails
		want   string
	}{
		{"given back", policy.CountFailed, false, `"queue";r=5;t=0, "login";r=5;t=0`},
		{"counted", policy.CountSucceeded, false, `"queue";r=5;t=0, "login";r=3;t=2750`},
		{"give-back failed", policy.CountFailed, true, `"queue";r=5;t=0, "login";r=3;t=2750`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mem, clock := newStore(t)
			var store algorithms.Store = mem
			if tt.broken {
				store = brokenGiveBack{mem}
			}
			m := middleware.MustNew(store, []*policy.Policy{queue10s(), fixed("login", 5, time.Hour, remote, policy.CountIf(tt.count))},
				middleware.WithClock(clock), advancing(clock))
			h := m.Handler(quiet)
			serve(h, "GET", "/") // departs at once
			w := serve(h, "GET", "/")
			if got := w.Header().Get("RateLimit"); w.Code != http.StatusOK || got != tt.want {
				t.Errorf("held request: %d RateLimit %q, want 200 %q", w.Code, got, tt.want)
			}
		})
	}
}

// TestHeldRedecidedListedOnce: a request that a shadow middleware further
// out denied (for a policy of its own) counted nothing there, so the one
// further in decides the policy they share again, and holds the request
// for its queue: the response reports the shared policy once, as decided
// further in, after the hold too.
func TestHeldRedecidedListedOnce(t *testing.T) {
	store, clock := newStore(t)
	shared := fixed("shared", 10, time.Minute, remote)
	outer := middleware.MustNew(store, []*policy.Policy{fixed("outer", 1, time.Minute, remote), shared},
		middleware.WithClock(clock), middleware.WithShadow(nil))
	inner := middleware.MustNew(store, []*policy.Policy{shared, queue10s()}, middleware.WithClock(clock), advancing(clock))
	h := nestedRouter("ServeMux", outer, inner)
	serve(h, "GET", "/") // counted by both, departs at once
	w := serve(h, "GET", "/")
	for _, field := range []string{"RateLimit", "RateLimit-Policy"} {
		if got := strings.Join(w.Header().Values(field), " | "); w.Code != http.StatusOK || strings.Count(got, `"shared"`) != 1 {
			t.Errorf("held request: %d %s %q, want 200 with one member of shared", w.Code, field, got)
		}
	}
}

// TestBreakerProbeOfAClosedStore: a probe whose store call is refused
// before the backend saw it (a store its owner closed) says nothing about
// the backend: the next request probes at once.
func TestBreakerProbeOfAClosedStore(t *testing.T) {
	mem, clock := newStore(t)
	s := &scripted{mem: mem, fail: []error{errDown, fmt.Errorf("store: %w", algorithms.ErrClosed)}}
	m := middleware.MustNew(s, []*policy.Policy{fixed("p", 100, time.Minute, remote)},
		middleware.WithBreaker(1, 10*time.Second), middleware.WithClock(clock))
	h := m.Handler(ok)
	serve(h, "GET", "/") // fails: open
	clock.Advance(10 * time.Second)
	serve(h, "GET", "/") // the probe: the store is closed
	if s.calls != 2 {
		t.Fatalf("the probe: %d store calls, want 2", s.calls)
	}
	if w := serve(h, "GET", "/"); w.Code != http.StatusOK || w.Header().Get("RateLimit") != `"p";r=99;t=50` || s.calls != 3 {
		t.Errorf("the next request: %d RateLimit %q, %d store calls; want it to probe the store", w.Code, w.Header().Get("RateLimit"), s.calls)
	}
}

// TestBadDelayEndsFailures: a store that answers with a Delay its policy
// cannot give has answered: it ends the run of failures, and the State is
// healthy again.
func TestBadDelayEndsFailures(t *testing.T) {
	down := true
	store := downWhen{fixedAnswer{Allowed: true, Limit: 5, Remaining: 4, Delay: time.Second, NextAfter: time.Second, ResetAfter: time.Minute}, &down}
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 5, time.Minute, remote)})
	h := m.Handler(ok)
	serve(h, "GET", "/")
	if m.State() != middleware.StateFailingOpen {
		t.Fatalf("after a failure: state %v, want failing open", m.State())
	}
	down = false
	if w := serve(h, "GET", "/"); w.Code != http.StatusOK || m.State() != middleware.StateHealthy {
		t.Errorf("after a bad Delay: %d, state %v; want 200, healthy", w.Code, m.State())
	}
}

// TestQueueDeadlineRefusalHeadersNotHeld: a leaky_queue request refused
// at once for its deadline was not held: its headers count from the
// refusal: a turn 9 s and 1 ns away, and a minute's end 59 s and 1 ns
// away, rounded up to 10 s and 60 s.
func TestQueueDeadlineRefusalHeadersNotHeld(t *testing.T) {
	store, clock := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{queue10s(), fixed("minute", 5, time.Minute, remote)}, middleware.WithClock(clock),
		middleware.WithWait(func(context.Context, time.Duration) error { return nil }))
	h := m.Handler(ok)
	serve(h, "GET", "/") // departs at once; the next turn is at 10 s
	clock.Advance(time.Second - 1)
	ctx := beforeTurn(time.Second)
	w := serveCtx(ctx, h, "GET", "/")
	if got, want := w.Header().Get("RateLimit"), `"queue";r=6;t=10, "minute";r=3;t=60`; w.Code != http.StatusServiceUnavailable || got != want || w.Header().Get("Retry-After") != "10" {
		t.Errorf("%d RateLimit %q Retry-After %q, want 503 %q 10", w.Code, got, w.Header().Get("Retry-After"), want)
	}
}
