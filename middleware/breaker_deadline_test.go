package middleware_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// hanging is a memory store whose backend hangs for the clients named
// "hang..." (X-User): their calls end only when their context does, with
// its error, as a store's call to a backend that answers nothing ends at
// its caller's deadline. The other clients are decided. It counts its
// calls.
type hanging struct {
	mem   *algorithms.MemoryStore
	mu    sync.Mutex
	calls int
}

func (s *hanging) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	s.mu.Lock()
	s.calls++
	s.mu.Unlock()
	for _, c := range checks {
		if _, k, _ := strings.Cut(c.Key, ":"); strings.HasPrefix(k, "hang") {
			<-ctx.Done()
			return nil, ctx.Err()
		}
	}
	return s.mem.Take(ctx, checks...)
}

func (s *hanging) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// TestBreakerOpensOnHangingStoreBehindTimeoutHandler: a store whose
// backend answers nothing, behind http.TimeoutHandler (a server-side
// deadline of 1 s on every request), opens the breaker: each call began a
// whole second before its deadline and no call got an answer meanwhile,
// so the backend had a fair chance and failed. After 3 such requests
// (breaker of 3) the next one is kept from the store, failing open at
// once. The breaker ignored every failure met once the request's context
// had ended, so it never opened: every request waited its whole second.
// (In a synctest bubble: the deadlines pass on the fake clock.)
func TestBreakerOpensOnHangingStoreBehindTimeoutHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem, _ := newStore(t)
		s := &hanging{mem: mem}
		m := middleware.MustNew(s, []*policy.Policy{fixed("u", 100, time.Minute, user)},
			middleware.WithBreaker(3, 10*time.Second))
		mux := http.NewServeMux()
		mux.Handle("/", http.TimeoutHandler(m.Handler(ok), time.Second, "timed out"))
		for i := range 3 {
			start := time.Now()
			w := serve(mux, "GET", "/", "X-User", "hang")
			synctest.Wait() // the timed-out handler's goroutine ends
			if w.Code != 503 || time.Since(start) != time.Second {
				t.Fatalf("request %d: %d after %s; want the TimeoutHandler's 503 after 1s", i, w.Code, time.Since(start))
			}
		}
		if m.State() != middleware.StateFailingOpen {
			t.Errorf("state %v after 3 deadlines the store failed to meet, want %v", m.State(), middleware.StateFailingOpen)
		}
		start := time.Now()
		w := serve(mux, "GET", "/", "X-User", "hang2")
		synctest.Wait()
		if st := m.Stats(); w.Code != 200 || time.Since(start) != 0 || s.count() != 3 || st.BreakerOpen != 1 || st.StoreErrors != 4 {
			t.Errorf("the next request: %d after %s, %d store calls (want 3), stats %+v; want it kept from the store by the open breaker and let through at once",
				w.Code, time.Since(start), s.count(), st)
		}
	})
}

// TestBreakerDeadlineRule: a request's deadline that the store's call
// reached counts towards the breaker only when the call began at least
// 50 ms before it and no call of the store got an answer meanwhile; a
// request cancelled (its client gone) never counts. Each case sends 5
// requests at once whose store calls hang until their contexts end, to a
// breaker of 3 (a good request, answered, while they hang where the case
// says so), and then a good request, which reaches the store only if the breaker is
// still closed. The breaker ignored every failure met once the request's
// context had ended, so that the fair deadlines did not open it. (In a synctest bubble: deadlines pass on the fake clock.)
func TestBreakerDeadlineRule(t *testing.T) {
	for _, tt := range []struct {
		name      string
		budget    time.Duration // the request's deadline, from the call
		cancel    bool          // the client goes away while the call hangs
		meanwhile bool          // a good request is answered while it hangs
		opens     bool
	}{
		{name: "fair deadline", budget: time.Second, opens: true},
		{name: "budget of exactly 50ms", budget: 50 * time.Millisecond, opens: true},
		{name: "budget under 50ms", budget: 49 * time.Millisecond},
		{name: "answer meanwhile", budget: time.Second, meanwhile: true},
		{name: "cancelled", budget: time.Hour, cancel: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mem, _ := newStore(t)
				s := &hanging{mem: mem}
				m := middleware.MustNew(s, []*policy.Policy{fixed("u", 100, time.Minute, user)},
					middleware.WithBreaker(3, 10*time.Second))
				mux := http.NewServeMux()
				mux.Handle("/", m.Handler(ok))
				good := 0
				var ctxs []context.CancelFunc
				done := make(chan int)
				for range 5 {
					ctx, cancel := context.WithTimeout(context.Background(), tt.budget)
					ctxs = append(ctxs, cancel)
					go func() {
						w := serveCtx(ctx, mux, "GET", "/", "X-User", "hang")
						done <- w.Code
					}()
				}
				synctest.Wait() // the 5 calls hang in the store
				if tt.meanwhile {
					if w := serve(mux, "GET", "/", "X-User", "v"); w.Code != 200 || w.Header().Get("RateLimit") == "" {
						t.Fatalf("the good request meanwhile: %d RateLimit %q; want it decided", w.Code, w.Header().Get("RateLimit"))
					}
					good++
				}
				if tt.cancel {
					for _, cancel := range ctxs {
						cancel()
					}
				}
				for i := range 5 {
					if code := <-done; code != 503 {
						t.Errorf("request %d: %d, want 503 (its context ended)", i, code)
					}
				}
				for _, cancel := range ctxs {
					cancel()
				}
				calls := s.count()
				w := serve(mux, "GET", "/", "X-User", "v")
				st := m.Stats()
				if tt.opens {
					if s.count() != calls || st.BreakerOpen != 1 || m.State() != middleware.StateFailingOpen {
						t.Errorf("the good request after them: %d store calls (want 0), stats %+v, state %v; want the breaker open",
							s.count()-calls, st, m.State())
					}
					return
				}
				if w.Code != 200 || w.Header().Get("RateLimit") != `"u";r=`+strconv.Itoa(99-good)+`;t=60` || s.count() != calls+1 ||
					st.BreakerOpen != 0 || m.State() != middleware.StateHealthy {
					t.Errorf("the good request after them: %d RateLimit %q, %d store calls (want 1), stats %+v, state %v; want it decided by the store, the breaker closed",
						w.Code, w.Header().Get("RateLimit"), s.count()-calls, st, m.State())
				}
			})
		})
	}
}

// TestBreakerIgnoresClosedStore: a store closed by its owner (ErrClosed,
// as during a shutdown that closes it before the server has drained) has
// no backend failing: its calls neither count towards the breaker nor end
// a run of failures, and leave the State as it was. The requests still
// get the failure mode (here fail open), the error handler and StoreErrors.
func TestBreakerIgnoresClosedStore(t *testing.T) {
	t.Run("never counts", func(t *testing.T) {
		mem, clock := newStore(t)
		s := &scripted{mem: mem}
		var errs []error
		m := middleware.MustNew(s, []*policy.Policy{fixed("u", 100, time.Minute, user)},
			middleware.WithBreaker(2, 10*time.Second), middleware.WithClock(clock),
			middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }))
		h := m.Handler(ok)
		for i := range 5 {
			s.fail = append(s.fail, algorithms.ErrClosed)
			if w := serve(h, "GET", "/", "X-User", "u"); w.Code != 200 || w.Header().Get("RateLimit") != "" {
				t.Errorf("request %d: %d RateLimit %q; want it let through unlimited (fail open)", i, w.Code, w.Header().Get("RateLimit"))
			}
			if m.State() != middleware.StateHealthy {
				t.Errorf("request %d: state %v, want healthy (a closed store is no failing backend)", i, m.State())
			}
		}
		if st := m.Stats(); st.BreakerOpen != 0 || st.StoreErrors != 5 || st.FailedOpen != 5 || s.calls != 5 || len(errs) != 5 || !errors.Is(errs[0], algorithms.ErrClosed) {
			t.Errorf("after 5 ErrClosed: %d store calls (want 5), stats %+v, errors %v; want the breaker closed, each counted and reported", s.calls, st, errs)
		}
	})
	t.Run("does not end a run", func(t *testing.T) {
		mem, clock := newStore(t)
		s := &scripted{mem: mem, fail: []error{errDown, algorithms.ErrClosed, errDown}}
		m := middleware.MustNew(s, []*policy.Policy{fixed("u", 100, time.Minute, user)},
			middleware.WithBreaker(2, 10*time.Second), middleware.WithClock(clock))
		h := m.Handler(ok)
		serve(h, "GET", "/", "X-User", "u") // a failure
		serve(h, "GET", "/", "X-User", "u") // closed
		if m.State() != middleware.StateFailingOpen {
			t.Errorf("state %v after a failure and ErrClosed, want %v (as the failure left it)", m.State(), middleware.StateFailingOpen)
		}
		serve(h, "GET", "/", "X-User", "u") // the second failure in the run
		serve(h, "GET", "/", "X-User", "u")
		if st := m.Stats(); st.BreakerOpen != 1 || s.calls != 3 {
			t.Errorf("after failure, ErrClosed, failure: %d store calls (want 3), stats %+v; want the breaker open", s.calls, st)
		}
	})
}

// serveCtx is serve with a request whose context is ctx.
func serveCtx(ctx context.Context, h http.Handler, method, target string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequestWithContext(ctx, method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}
