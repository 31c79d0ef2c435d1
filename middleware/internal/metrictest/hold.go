package metrictest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// QueueEvery is a leaky_queue named name of one request per every that
// holds up to a minute, keyed by the client's address.
func QueueEvery(name string, every time.Duration) *policy.Policy {
	spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: every, MaxDelay: time.Minute}
	return policy.Must(policy.New(name, spec, Remote))
}

// A HoldRun serves a chi router behind a middleware (M) of policies on a
// memory store and Clock, whose held requests wait through Wait (by
// default advancing Clock by the Delay). Wait may be set between
// requests.
type HoldRun struct {
	Clock *algotest.Clock
	Wait  func(ctx context.Context, d time.Duration) error
	M     *middleware.Middleware
	h     http.Handler
}

// NewHoldRun returns a HoldRun observed by obs, whose middleware drops its
// errors, with opts after its own options.
func NewHoldRun(t *testing.T, obs middleware.Observer, policies []*policy.Policy, opts ...middleware.Option) *HoldRun {
	t.Helper()
	run := &HoldRun{Clock: algotest.NewClock(T0)}
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(run.Clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	run.Wait = func(ctx context.Context, d time.Duration) error { return run.Clock.Sleep(ctx, d) }
	opts = append([]middleware.Option{middleware.WithObserver(obs), middleware.WithClock(run.Clock),
		middleware.WithWait(func(ctx context.Context, d time.Duration) error { return run.Wait(ctx, d) }),
		middleware.WithErrorHandler(func(*http.Request, error) {})}, opts...)
	run.M = middleware.MustNew(mem, policies, opts...)
	KeepAlive(t, run.M)
	r := chi.NewRouter()
	r.Use(run.M.Handler)
	r.Get("/", func(http.ResponseWriter, *http.Request) {})
	run.h = r
	return run
}

// Do serves GET / with ctx and returns the status.
func (run *HoldRun) Do(ctx context.Context) int {
	w := httptest.NewRecorder()
	run.h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil).WithContext(ctx))
	return w.Code
}

// HoldOnce holds one request (the second of two, both served) under a
// queue "queue" of one a second of a middleware observed by obs.
func HoldOnce(t *testing.T, obs middleware.Observer) {
	t.Helper()
	run := NewHoldRun(t, obs, []*policy.Policy{QueueEvery("queue", time.Second)})
	for i := range 2 {
		if code := run.Do(context.Background()); code != http.StatusOK {
			t.Fatalf("queued request %d: status %d", i+1, code)
		}
	}
}

// Holds is the hold scenario: Queue, a leaky_queue of one request a
// second, beside Beside, a fixed window of 100 a minute that delays
// nothing, in one middleware; and Shadowed, a queue of one a second of a
// middleware in shadow mode, which holds nothing. Run serves:
//   - two requests: the first goes at once (no hold), the second is held
//     1 s and served (a hold of 1 s, allowed);
//   - a third, whose client leaves 250 ms into its hold of 1 s (503: a
//     hold of 0.25 s, abandoned; the time held, not the Delay);
//   - a fourth, whose deadline comes before its turn: 503, refused at
//     once, not held;
//   - two requests through the shadow middleware.
//
// The middleware counts 2 delayed and 2 abandoned in Stats.
type Holds struct {
	Queue, Beside, Shadowed string
}

// Run serves the scenario through middlewares observed by obs, with opts
// (for both), and returns the HoldRun of Queue and Beside.
func (s Holds) Run(t *testing.T, obs middleware.Observer, opts ...middleware.Option) *HoldRun {
	t.Helper()
	run := NewHoldRun(t, obs, []*policy.Policy{QueueEvery(s.Queue, time.Second), Fixed(s.Beside, 100, Remote)}, opts...)
	bg := context.Background()
	for i := range 2 {
		if code := run.Do(bg); code != http.StatusOK {
			t.Fatalf("request %d: %d", i+1, code)
		}
	}
	left, leave := context.WithCancel(bg)
	run.Wait = func(ctx context.Context, d time.Duration) error {
		run.Clock.Advance(250 * time.Millisecond)
		leave()
		<-ctx.Done()
		return ctx.Err()
	}
	if code := run.Do(left); code != http.StatusServiceUnavailable {
		t.Fatalf("client gone while held: %d, want 503", code)
	}
	soon, cancel := context.WithTimeout(bg, 100*time.Millisecond)
	defer cancel()
	run.Wait = func(context.Context, time.Duration) error {
		t.Error("a request whose deadline comes before its turn was held")
		return nil
	}
	if code := run.Do(soon); code != http.StatusServiceUnavailable {
		t.Fatalf("deadline before its turn: %d, want 503", code)
	}
	shadow := NewHoldRun(t, obs, []*policy.Policy{QueueEvery(s.Shadowed, time.Second)}, slices.Concat(opts, []middleware.Option{middleware.WithShadow(nil)})...)
	shadow.Wait = run.Wait
	for range 2 {
		shadow.Do(bg)
	}
	if got := run.M.Stats(); got.Delayed != 2 || got.Abandoned != 2 {
		t.Fatalf("Stats: %d delayed, %d abandoned; want 2 and 2", got.Delayed, got.Abandoned)
	}
	return run
}
