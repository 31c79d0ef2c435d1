package middleware_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// burst serves requests at once through nested middlewares whose
// leaky_queue holds block until an injected clock reaches their end: the
// clock moves from one hold's end to the next only once every request is
// held or answered, so that each middleware decides a request at the
// instant it reaches it, as on a server whose requests are held side by
// side (no sleeps: a condition variable tells when all are blocked).
type burst struct {
	mu      sync.Mutex
	cond    *sync.Cond
	clock   *algotest.Clock
	running int          // requests neither held nor answered
	holds   []*burstHold // holds not yet ended
	log     map[string][]time.Duration
}

type burstHold struct {
	end time.Time
	ch  chan struct{}
}

func newBurst(clock *algotest.Clock) *burst {
	b := &burst{clock: clock, log: map[string][]time.Duration{}}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// wait is the WithWait of the middleware named who.
func (b *burst) wait(who string) middleware.Option {
	return middleware.WithWait(func(_ context.Context, d time.Duration) error {
		h := &burstHold{end: b.clock.Now().Add(d), ch: make(chan struct{})}
		b.mu.Lock()
		b.log[who] = append(b.log[who], d)
		b.holds = append(b.holds, h)
		b.running--
		b.cond.Broadcast()
		b.mu.Unlock()
		<-h.ch
		return nil
	})
}

// serve serves n requests through h at once and returns their responses
// and how long each was held in all (the clock from its start to its
// answer).
func (b *burst) serve(h http.Handler, n int) ([]*httptest.ResponseRecorder, []time.Duration) {
	out := make([]*httptest.ResponseRecorder, n)
	held := make([]time.Duration, n)
	start := b.clock.Now()
	b.mu.Lock()
	b.running = n
	b.mu.Unlock()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
			out[i], held[i] = w, b.clock.Now().Sub(start)
			b.mu.Lock()
			b.running--
			b.cond.Broadcast()
			b.mu.Unlock()
		}()
	}
	b.mu.Lock()
	for {
		for b.running > 0 {
			b.cond.Wait()
		}
		if len(b.holds) == 0 {
			break
		}
		// End the holds that end first.
		slices.SortFunc(b.holds, func(x, y *burstHold) int { return x.end.Compare(y.end) })
		end := b.holds[0].end
		if end.After(b.clock.Now()) {
			b.clock.Set(end)
		}
		k := 0
		for ; k < len(b.holds) && !b.holds[k].end.After(end); k++ {
			b.running++
			close(b.holds[k].ch)
		}
		b.holds = b.holds[k:]
	}
	b.mu.Unlock()
	wg.Wait()
	return out, held
}

// TestNestedQueuesBurstHoldsAddUp: nine requests at once through two
// nested middlewares with leaky_queue policies (a queue of one per 10 s
// further out, holding up to a minute: 7 places). Each middleware holds
// a request for its own queue's Delay, decided as the request reaches it
// (after the hold further out), so that the holds add up to the
// request's turn in the stricter queue, never to the sum of both queues'
// waits from the burst (a double delay), nor to less than either (a
// delay lost): further in one per 15 s, the requests leave at 0, 15, ...
// 90 s; further in the same queue lowered there to one per 20 s
// (SetLimit: its own queue, beside the outer one), at 0, 20, ... 120 s;
// further in one per 30 s, whose 3 places refuse the requests reaching it
// at 40 and 50 s (429, Retry-After 20 and 10, its turn: the outer place
// stays taken), at 0, 30, ... 120 s; one queue given to both holds once,
// further out, at 0, 10, ... 60 s. The two requests past the outer
// queue's 7 places are refused there, Retry-After 10 (a place frees at
// 10 s). Every response's members count their t from the response, and
// a 429's Retry-After is never before the t of a member it left at 0.
// (These held at the test's writing; dropping the guards counted further
// out, so that the lowered copy further in counts the request in the
// outer queue again, fails it with holds of a minute.) Through chi and a
// ServeMux, on an injected clock.
func TestNestedQueuesBurstHoldsAddUp(t *testing.T) {
	queue := func(name string, limit int64) *policy.Policy {
		spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: limit, Window: time.Minute, MaxDelay: time.Minute}
		return policy.Must(policy.New(name, spec, constKey))
	}
	secs := func(ss ...int) []time.Duration {
		var ds []time.Duration
		for _, s := range ss {
			ds = append(ds, time.Duration(s)*time.Second)
		}
		return ds
	}
	shared := queue("q", 6)
	for _, tc := range []struct {
		name         string
		outer, inner *policy.Policy
		change       func(t *testing.T, inner *middleware.Middleware)
		admitted     []time.Duration // the holds of the requests admitted, in all
		outerHolds   []time.Duration
		innerHolds   []time.Duration
		retryAfter   []string // of the 429s, sorted
	}{
		{
			name: "two queues", outer: queue("outer", 6), inner: queue("inner", 4),
			admitted:   secs(0, 15, 30, 45, 60, 75, 90),
			outerHolds: secs(10, 20, 30, 40, 50, 60),
			innerHolds: secs(5, 10, 15, 20, 25, 30),
			retryAfter: []string{"10", "10"},
		},
		{
			name: "one queue lowered further in", outer: queue("q", 6), inner: queue("q", 6),
			change:     func(t *testing.T, inner *middleware.Middleware) { setLimit(t, inner, "q", 3) },
			admitted:   secs(0, 20, 40, 60, 80, 100, 120),
			outerHolds: secs(10, 20, 30, 40, 50, 60),
			innerHolds: secs(10, 20, 30, 40, 50, 60),
			retryAfter: []string{"10", "10"},
		},
		{
			name: "slower queue further in", outer: queue("outer", 6), inner: queue("inner", 2),
			admitted:   secs(0, 30, 60, 90, 120),
			outerHolds: secs(10, 20, 30, 40, 50, 60),
			innerHolds: secs(20, 40, 60, 60),
			retryAfter: []string{"10", "10", "10", "20"},
		},
		{
			name: "one queue given to both", outer: shared, inner: shared,
			admitted:   secs(0, 10, 20, 30, 40, 50, 60),
			outerHolds: secs(10, 20, 30, 40, 50, 60),
			retryAfter: []string{"10", "10"},
		},
	} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(tc.name+"/"+mux, func(t *testing.T) {
				store, clock := newStore(t)
				b := newBurst(clock)
				quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
				outer := middleware.MustNew(store, []*policy.Policy{tc.outer}, middleware.WithClock(clock), b.wait("outer"), quiet)
				inner := middleware.MustNew(store, []*policy.Policy{tc.inner}, middleware.WithClock(clock), b.wait("inner"), quiet)
				if tc.change != nil {
					tc.change(t, inner)
				}
				out, held := b.serve(nestedRouter(mux, outer, inner), 9)
				var admitted []time.Duration
				var retryAfter []string
				for i, w := range out {
					switch w.Code {
					case http.StatusOK:
						admitted = append(admitted, held[i])
					case http.StatusTooManyRequests:
						retryAfter = append(retryAfter, w.Header().Get("Retry-After"))
					default:
						t.Errorf("request %d: %d", i+1, w.Code)
					}
					// Counted from the response, after the holds: no
					// member's t past the slowest queue's spacing (30 s),
					// and a 429 waits at least for every member at 0.
					ra, _ := strconv.Atoi(w.Header().Get("Retry-After"))
					for _, m := range strings.Split(strings.Join(w.Header().Values("RateLimit"), ", "), ", ") {
						var name string
						var r, tt int
						if _, err := fmt.Sscanf(strings.ReplaceAll(m, ";", " "), "%s r=%d t=%d", &name, &r, &tt); err != nil {
							t.Fatalf("request %d: RateLimit member %q: %v", i+1, m, err)
						}
						if tt > 30 || w.Code == http.StatusTooManyRequests && r == 0 && ra < tt {
							t.Errorf("request %d: %d, RateLimit %q, Retry-After %q", i+1, w.Code, w.Header().Values("RateLimit"), w.Header().Get("Retry-After"))
						}
					}
				}
				slices.Sort(admitted)
				slices.Sort(retryAfter)
				for _, c := range []struct {
					what      string
					got, want any
				}{
					{"admitted requests held", admitted, tc.admitted},
					{"outer holds", sortedHolds(b.log["outer"]), tc.outerHolds},
					{"inner holds", sortedHolds(b.log["inner"]), tc.innerHolds},
					{"Retry-After of the 429s", retryAfter, tc.retryAfter},
				} {
					if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
						t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
					}
				}
			})
		}
	}
}

func sortedHolds(ds []time.Duration) []time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds
}
