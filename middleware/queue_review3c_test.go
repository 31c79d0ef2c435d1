package middleware_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestQueueReview3ShadowNeverHolds: shadow mode with a queue holds no
// request; what would be held counts, what would be refused is reported.
func TestQueueReview3ShadowNeverHolds(t *testing.T) {
	store, clock := newStore(t)
	reported := 0
	m := middleware.MustNew(store, []*policy.Policy{qr3Queue("q", 1, 10*time.Second, 10*time.Second)}, middleware.WithClock(clock),
		middleware.WithShadow(func(r *http.Request, res *middleware.Result) { reported++ }),
		middleware.WithWait(func(ctx context.Context, d time.Duration) error { t.Errorf("held %s in shadow mode", d); return nil }))
	mux := http.NewServeMux()
	mux.Handle("/", m.Handler(ok))
	var codes []int
	for range 3 {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		codes = append(codes, w.Code)
	}
	if !slices.Equal(codes, []int{200, 200, 200}) || reported != 1 {
		t.Errorf("codes %v reported %d", codes, reported)
	}
}

// TestQueueReview3WithoutContextHold: WithoutContext holds and refunds
// as with a context, on every store.
func TestQueueReview3WithoutContextHold(t *testing.T) {
	for name, newStore := range qr3Stores(t) {
		t.Run(name, func(t *testing.T) {
			clock := algotest.NewClock(t0)
			store := newStore(t, clock)
			var waits []time.Duration
			cut := true
			m := middleware.MustNew(store, []*policy.Policy{qr3Queue("q", 1, 10*time.Second, time.Minute)}, middleware.WithClock(clock),
				middleware.WithoutContext(),
				middleware.WithWait(func(ctx context.Context, d time.Duration) error {
					waits = append(waits, d)
					if cut {
						return context.Canceled
					}
					clock.Advance(d)
					return nil
				}))
			mux := http.NewServeMux()
			mux.Handle("/", m.Handler(ok))
			mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
			cut = false
			w2 := httptest.NewRecorder()
			mux.ServeHTTP(w2, httptest.NewRequest("GET", "/", nil))
			if w.Code != 503 || w2.Code != 200 || !slices.Equal(waits, []time.Duration{10 * time.Second, 10 * time.Second}) {
				t.Errorf("codes %d %d waits %v", w.Code, w2.Code, waits)
			}
		})
	}
}

// TestQueueReview3DeadlineRefundEveryStore: a request whose deadline comes
// before its turn is refused at once and its place goes back, on every
// store.
func TestQueueReview3DeadlineRefundEveryStore(t *testing.T) {
	for name, newStore := range qr3Stores(t) {
		t.Run(name, func(t *testing.T) {
			clock := algotest.NewClock(t0)
			store := newStore(t, clock)
			var waits []time.Duration
			m := middleware.MustNew(store, []*policy.Policy{qr3Queue("q", 1, 10*time.Second, time.Minute)}, middleware.WithClock(clock),
				middleware.WithWait(func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }))
			mux := http.NewServeMux()
			mux.Handle("/", m.Handler(ok))
			mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, httptest.NewRequest("GET", "/", nil).WithContext(ctx))
			w2 := httptest.NewRecorder()
			mux.ServeHTTP(w2, httptest.NewRequest("GET", "/", nil))
			if w.Code != 503 || w.Header().Get("Retry-After") != "10" || w2.Code != 200 || !slices.Equal(waits, []time.Duration{10 * time.Second}) {
				t.Errorf("codes %d (Retry-After %q) %d waits %v", w.Code, w.Header().Get("Retry-After"), w2.Code, waits)
			}
		})
	}
}

// TestQueueReview3QueueFullStackedRetryAfter: a queue full and a fixed
// window denying: Retry-After is the larger wait.
func TestQueueReview3QueueFullStackedRetryAfter(t *testing.T) {
	store, clock := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{qr3Queue("q", 1, 10*time.Second, 10*time.Second), fixed("fw", 2, time.Minute, remote)},
		middleware.WithClock(clock),
		middleware.WithWait(func(ctx context.Context, d time.Duration) error { return nil }))
	mux := http.NewServeMux()
	mux.Handle("/", m.Handler(ok))
	var w *httptest.ResponseRecorder
	for range 3 {
		w = httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	}
	// t0 begins a minute: the window ends in 60 s, the queue's next
	// place in 10 s.
	if w.Code != 429 || w.Header().Get("Retry-After") != "60" {
		t.Errorf("%d Retry-After %q %v", w.Code, w.Header().Get("Retry-After"), w.Header())
	}
}

// TestQueueReview3ClientGoneCostOddSpacing: a request of cost 2 on a
// queue whose spacing is no whole number of ns (3 per 10 s), cut short
// at odd instants: its places come back on every store, the next
// request waiting what is left of the first's turn.
func TestQueueReview3ClientGoneCostOddSpacing(t *testing.T) {
	for name, newStore := range qr3Stores(t) {
		for _, cutAt := range []time.Duration{0, 1, 3333333333, 3333333334, 6666666666} {
			t.Run(name+"/"+cutAt.String(), func(t *testing.T) {
				clock := algotest.NewClock(t0)
				store := newStore(t, clock)
				var waits []time.Duration
				cut := true
				two := func(*http.Request) int64 { return 2 }
				m := middleware.MustNew(store, []*policy.Policy{qr3Queue("q", 3, 10*time.Second, time.Minute, policy.WithCost(two))}, middleware.WithClock(clock),
					middleware.WithWait(func(ctx context.Context, d time.Duration) error {
						waits = append(waits, d)
						if cut {
							clock.Advance(cutAt)
							return context.Canceled
						}
						clock.Advance(d)
						return nil
					}))
				mux := http.NewServeMux()
				mux.Handle("/", m.Handler(ok))
				mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
				mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
				cut = false
				mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
				if len(waits) != 2 || waits[1] != waits[0]-cutAt {
					t.Errorf("waits %v; want the second %s", waits, waits[0]-cutAt)
				}
			})
		}
	}
}

// TestQueueReview3RedisDownDuringHold: the redis-server stops while a
// request is held and its client goes away: the refund fails, the error
// hook is told of the cut and of the refund, once each, and the 503's
// headers report the decision as it was.
func TestQueueReview3RedisDownDuringHold(t *testing.T) {
	srv := redistest.New(t)
	clock := algotest.NewClock(t0)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	store, err := redisstore.New(client, redisstore.WithClock(clock), redisstore.WithPrefix(t.Name()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { store.Close(); client.Close() }()
	var errs []error
	m := middleware.MustNew(store, []*policy.Policy{qr3Queue("q", 1, 10*time.Second, time.Minute)}, middleware.WithClock(clock),
		middleware.WithErrorHandler(func(r *http.Request, err error) { errs = append(errs, err) }),
		middleware.WithWait(func(ctx context.Context, d time.Duration) error {
			srv.Stop()
			clock.Advance(d / 2)
			return context.Canceled
		}))
	mux := http.NewServeMux()
	mux.Handle("/", m.Handler(ok))
	mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if w.Code != 503 || len(errs) != 2 || !errors.Is(errs[0], context.Canceled) {
		t.Errorf("%d errs %v", w.Code, errs)
	}
	if s := m.Stats(); s.StoreErrors != 1 || s.Abandoned != 1 {
		t.Errorf("stats %+v", s)
	}
	t.Logf("headers %v errs %v", w.Header(), errs)
}

// TestQueueReview3DeadlineErrorHook: the error hook is told, once, of a
// request refused at once because its deadline comes before its turn,
// with an error matching context.DeadlineExceeded (see WithErrorHandler).
func TestQueueReview3DeadlineErrorHook(t *testing.T) {
	store, clock := newStore(t)
	var errs []error
	m := middleware.MustNew(store, []*policy.Policy{qr3Queue("q", 1, 10*time.Second, time.Minute)}, middleware.WithClock(clock),
		middleware.WithErrorHandler(func(r *http.Request, err error) { errs = append(errs, err) }))
	mux := http.NewServeMux()
	mux.Handle("/", m.Handler(ok))
	mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil).WithContext(ctx))
	if len(errs) != 1 || !errors.Is(errs[0], context.DeadlineExceeded) {
		t.Errorf("errors %v, want one matching context.DeadlineExceeded", errs)
	}
}
