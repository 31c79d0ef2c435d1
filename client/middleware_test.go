package client_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/client"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// limitedServer serves "ok" behind our own middleware enforcing spec for
// everyone (one global key), on the fake clock, and counts its statuses.
type limitedServer struct {
	*httptest.Server
	mu       sync.Mutex
	statuses map[int]int
}

func newLimitedServer(t *testing.T, clock *fakeClock, spec algorithms.Spec, opts ...middleware.Option) *limitedServer {
	t.Helper()
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.New("api", spec, keyfunc.Global())
	if err != nil {
		t.Fatal(err)
	}
	m, err := middleware.New(store, []*policy.Policy{p}, append([]middleware.Option{middleware.WithClock(clock)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	s := &limitedServer{statuses: map[int]int{}}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	h := m.Handler(ok)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		// The server's clock is the fake one, its Date too.
		w.Header().Set("Date", clock.Now().UTC().Format(http.TimeFormat))
		h.ServeHTTP(rec, r)
		s.mu.Lock()
		s.statuses[rec.status]++
		s.mu.Unlock()
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *limitedServer) count(status int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statuses[status]
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// Our client never triggers a 429 from our server when both are configured
// alike (5 per second): 50 concurrent callers, all served, none refused,
// none retried. The kinds here admit a request every Window/Limit; see
// TestAgainstMiddlewareStrictKinds for the two that need a margin.
func TestAgainstMiddleware(t *testing.T) {
	for _, spec := range []algorithms.Spec{
		{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Second},
		{Algorithm: algorithms.LeakyBucket, Limit: 5, Window: time.Second},
		{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Second},
		{Algorithm: algorithms.SlidingBuckets, Limit: 5, Window: time.Second, Buckets: 5},
		{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Second, Burst: 1},
	} {
		for _, proactive := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/proactive=%v", spec, proactive), func(t *testing.T) {
				clock := newFakeClock()
				srv := newLimitedServer(t, clock, spec)
				var retries atomic.Int64
				hc, _ := newClient(t, clock, client.WithRate(5, time.Second), client.WithMaxWait(time.Minute),
					client.WithProactive(proactive),
					client.WithOnRetry(func(client.Retry) { retries.Add(1) }))
				clock.drive(t, 50, func(i int) {
					if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
						t.Errorf("caller %d: %d %v", i, status, err)
					}
				})
				// Pacing alone runs at full speed: one every 200ms, the last
				// at 9.8s. With proactive pacing too, a response that reports
				// r=0 (every one, for burst 1) holds the key for its t, which
				// is whole seconds: the client may then go slower, depending
				// on which caller reads which response first, but never faster.
				took := clock.Now().Sub(t0)
				if !proactive && took != 9800*time.Millisecond {
					t.Errorf("50 requests took %s of virtual time, want 9.8s", took)
				}
				if proactive && took < 9800*time.Millisecond {
					t.Errorf("50 requests took %s of virtual time, want at least 9.8s", took)
				}
				if ok, refused := srv.count(200), srv.count(429); ok != 50 || refused != 0 || retries.Load() != 0 {
					t.Errorf("server answered %d × 200 and %d × 429, client retried %d times; want 50, 0, 0", ok, refused, retries.Load())
				}
			})
		}
	}
}

// sliding_log counts a request exactly one window old, and the sliding
// window counter estimates the previous window as spread evenly: at exactly
// Limit per Window both refuse now and then (the 429s are then retried and
// every caller is still served). A client that paces with a margin — here
// 4 per second against 5 — never meets a 429 from them.
func TestAgainstMiddlewareStrictKinds(t *testing.T) {
	for _, spec := range []algorithms.Spec{
		{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Second},
		{Algorithm: algorithms.SlidingWindow, Limit: 5, Window: time.Second},
	} {
		t.Run(spec.String(), func(t *testing.T) {
			for _, rate := range []int64{5, 4} {
				clock := newFakeClock()
				srv := newLimitedServer(t, clock, spec)
				hc, _ := newClient(t, clock, client.WithRate(rate, time.Second), client.WithMaxWait(time.Minute))
				clock.drive(t, 30, func(i int) {
					if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
						t.Errorf("rate %d, caller %d: %d %v", rate, i, status, err)
					}
				})
				refused := srv.count(429)
				t.Logf("client at %d/s: %d × 429", rate, refused)
				if rate == 4 && refused != 0 {
					t.Errorf("client at 4/s met %d × 429", refused)
				}
				if rate == 5 && refused == 0 {
					t.Errorf("client at 5/s met no 429: the margin is no longer needed, update the WithRate doc")
				}
			}
		})
	}
}

// Without its own pacing, the client still avoids 429s by reading the
// server's RateLimit headers, in each profile the middleware can send; with
// proactive pacing off, the same traffic meets 429s.
func TestProactiveAgainstMiddleware(t *testing.T) {
	for _, profile := range []middleware.Profile{middleware.IETF, middleware.Draft7, middleware.Draft6, middleware.Legacy, middleware.LegacyUnix} {
		t.Run(profile.String(), func(t *testing.T) {
			for _, proactive := range []bool{true, false} {
				clock := newAutoClock()
				spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Second}
				srv := newLimitedServer(t, clock, spec, middleware.WithHeaders(profile))
				hc, _ := newClient(t, clock, client.WithProactive(proactive), client.WithRandom(maxSource{}))
				for i := range 20 {
					if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
						t.Fatalf("proactive %v, request %d: %d %v", proactive, i, status, err)
					}
				}
				refused := srv.count(429)
				if proactive && refused != 0 {
					t.Errorf("proactive: the server refused %d requests, want 0", refused)
				}
				if !proactive && refused == 0 {
					t.Errorf("control without proactive pacing met no 429: the test proves nothing")
				}
			}
		})
	}
}
