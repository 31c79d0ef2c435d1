package middleware_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// qr3Queue is a leaky_queue policy keyed by RemoteAddr.
func qr3Queue(name string, limit int64, window, maxDelay time.Duration, opts ...policy.Option) *policy.Policy {
	return policy.Must(policy.New(name, algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: limit, Window: window, MaxDelay: maxDelay}, remote, opts...))
}

// qr3Stores returns the in-memory store and, when a redis-server is
// found, a Redis store on one, both reading clock.
func qr3Stores(t *testing.T) map[string]func(t *testing.T, clock algorithms.Clock) algorithms.Store {
	return map[string]func(t *testing.T, clock algorithms.Clock) algorithms.Store{
		"memory": func(t *testing.T, clock algorithms.Clock) algorithms.Store {
			s, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		"redis": func(t *testing.T, clock algorithms.Clock) algorithms.Store {
			srv := redistest.New(t)
			client := redis.NewClient(&redis.Options{Addr: srv.Addr})
			rs, err := redisstore.New(client, redisstore.WithClock(clock), redisstore.WithPrefix(t.Name()))
			if err != nil {
				client.Close()
				t.Fatal(err)
			}
			t.Cleanup(func() { rs.Close(); client.Close() })
			return rs
		},
	}
}

// TestQueueReview3ClientGoneGivesPlaceBackOnce: a client that goes away
// while held has its place given back, once, on every store: the next
// request waits as if it had never come; the observer sees it once as
// Abandoned, the error hook once.
func TestQueueReview3ClientGoneGivesPlaceBackOnce(t *testing.T) {
	for name, newStore := range qr3Stores(t) {
		t.Run(name, func(t *testing.T) {
			clock := algotest.NewClock(t0)
			store := newStore(t, clock)
			var (
				mu    sync.Mutex
				waits []time.Duration
				errs  []error
				gone  = true
			)
			rec := &recorder{}
			m := middleware.MustNew(store, []*policy.Policy{qr3Queue("q", 1, 10*time.Second, time.Minute)},
				middleware.WithClock(clock), middleware.WithObserver(rec),
				middleware.WithErrorHandler(func(r *http.Request, err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }),
				middleware.WithWait(func(ctx context.Context, d time.Duration) error {
					waits = append(waits, d)
					clock.Advance(d / 2)
					if gone {
						return context.Canceled
					}
					clock.Advance(d - d/2)
					return nil
				}))
			served := 0
			mux := http.NewServeMux()
			mux.Handle("GET /", m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served++ })))
			get := func() int {
				w := httptest.NewRecorder()
				mux.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
				return w.Code
			}
			get()      // departs at once, the queue free 10 s on
			c := get() // held 10 s; goes away after 5 s
			gone = false
			get() // at 5 s: the place given back, so it waits 5 s, not 15 s
			if c != http.StatusServiceUnavailable || served != 2 {
				t.Errorf("gone: %d, served %d; want 503, 2", c, served)
			}
			if want := []time.Duration{10 * time.Second, 5 * time.Second}; !slices.Equal(waits, want) {
				t.Errorf("waits %v, want %v", waits, want)
			}
			if want := []string{"allowed", "abandoned", "allowed"}; !slices.Equal(rec.outcomes, want) {
				t.Errorf("outcomes %v, want %v", rec.outcomes, want)
			}
			if len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
				t.Errorf("errors %v, want one context.Canceled", errs)
			}
			if s := m.Stats(); s.Abandoned != 1 || s.Delayed != 2 || s.StoreErrors != 0 {
				t.Errorf("stats %+v", s)
			}
		})
	}
}

// TestQueueReview3StackedDenialKeepsPlace: a leaky_queue that would admit
// with a Delay, stacked with a policy that denies: the Take is all or
// nothing, the queue place is not taken.
func TestQueueReview3StackedDenialKeepsPlace(t *testing.T) {
	for _, other := range []*policy.Policy{
		fixed("fw", 2, time.Hour, remote),
		policy.Must(policy.New("tb", algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 2, Window: time.Hour}, remote)),
	} {
		t.Run(other.Name(), func(t *testing.T) {
			store, clock := newStore(t)
			var waits []time.Duration
			m := middleware.MustNew(store, []*policy.Policy{qr3Queue("q", 1, 10*time.Second, time.Minute), other},
				middleware.WithClock(clock),
				middleware.WithWait(func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }))
			r := chi.NewRouter()
			r.Use(m.Handler)
			r.Get("/", ok)
			codes := []int{}
			for range 4 {
				w := httptest.NewRecorder()
				r.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
				codes = append(codes, w.Code)
			}
			clock.Advance(time.Hour)
			w := httptest.NewRecorder()
			r.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
			if want := []int{200, 200, 429, 429}; !slices.Equal(codes, want) || w.Code != 200 {
				t.Errorf("codes %v then %d", codes, w.Code)
			}
			if want := []time.Duration{10 * time.Second}; !slices.Equal(waits, want) {
				t.Errorf("waits %v, want %v (the denied ones took no place; an hour on the queue is free)", waits, want)
			}
		})
	}
}

// TestQueueReview3TwoQueuesHoldMax: two leaky_queues stacked: the hold is
// the longer Delay, not their sum.
func TestQueueReview3TwoQueuesHoldMax(t *testing.T) {
	store, clock := newStore(t)
	var waits []time.Duration
	m := middleware.MustNew(store, []*policy.Policy{qr3Queue("a", 1, 10*time.Second, time.Minute), qr3Queue("b", 1, 4*time.Second, time.Minute)},
		middleware.WithClock(clock),
		middleware.WithWait(func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }))
	mux := http.NewServeMux()
	mux.Handle("/", m.Handler(ok))
	for range 3 {
		mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	}
	if want := []time.Duration{10 * time.Second, 20 * time.Second}; !slices.Equal(waits, want) {
		t.Errorf("waits %v, want %v", waits, want)
	}
}

// TestQueueReview3MaxDelayBound: the Delay at MaxDelay is held; one ns
// past it is refused (429) with Retry-After the wait rounded up; cost 2.
func TestQueueReview3MaxDelayBound(t *testing.T) {
	for _, tt := range []struct {
		name     string
		maxDelay time.Duration
		cost     int64
		codes    []int
		waits    []time.Duration
		retry    string
	}{
		{"at", 10 * time.Second, 1, []int{200, 200, 429}, []time.Duration{10 * time.Second}, "10"},
		{"below", 10*time.Second - 1, 1, []int{200, 429, 429}, nil, "1"},
		{"above", 10*time.Second + 1, 1, []int{200, 200, 429}, []time.Duration{10 * time.Second}, "10"},
		{"cost2", 20 * time.Second, 2, []int{200, 200, 429}, []time.Duration{20 * time.Second}, "20"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store, clock := newStore(t)
			var waits []time.Duration
			var opts []policy.Option
			if tt.cost != 1 {
				cost := tt.cost
				opts = append(opts, policy.WithCost(func(*http.Request) int64 { return cost }))
			}
			m := middleware.MustNew(store, []*policy.Policy{qr3Queue("q", 1, 10*time.Second, tt.maxDelay, opts...)},
				middleware.WithClock(clock),
				middleware.WithWait(func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }))
			mux := http.NewServeMux()
			mux.Handle("/", m.Handler(ok))
			var codes []int
			var last *httptest.ResponseRecorder
			for range 3 {
				last = httptest.NewRecorder()
				mux.ServeHTTP(last, httptest.NewRequest("GET", "/", nil))
				codes = append(codes, last.Code)
			}
			if !slices.Equal(codes, tt.codes) || !slices.Equal(waits, tt.waits) {
				t.Errorf("codes %v waits %v, want %v %v", codes, waits, tt.codes, tt.waits)
			}
			if got := last.Header().Get("Retry-After"); got != tt.retry {
				t.Errorf("Retry-After %q, want %q", got, tt.retry)
			}
		})
	}
}
