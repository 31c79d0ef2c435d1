package middleware_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// queue10s is a leaky_queue of one request per 10 s that holds up to a
// minute: its capacity (q) is 7.
func queue10s(opts ...policy.Option) *policy.Policy {
	spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: 10 * time.Second, MaxDelay: time.Minute}
	return policy.Must(policy.New("queue", spec, remote, opts...))
}

// failingRefunds is a memory store whose refunds fail.
type failingRefunds struct{ *algorithms.MemoryStore }

func (failingRefunds) Refund(context.Context, []algorithms.Refunded, []algorithms.Check, []algorithms.Decision, time.Duration) error {
	return errors.New("refund refused")
}

// TestQueueDeadlineRefundHeaders: a leaky_queue request refused at once
// because its context's deadline comes before its turn gives its place
// back; the rate-limit headers of its 503 then report the queue as it
// stands with the place given back (as it stood before the request came),
// not as the decision left it, one place (its cost) fuller. When the store
// keeps the place (no Refunder, or the refund fails) they report the
// decision's values.
func TestQueueDeadlineRefundHeaders(t *testing.T) {
	// One request departs at once: the queue frees in 10 s and holds 6
	// more; the next one's turn is 10 s away, after its 1 s deadline.
	// With its place taken the queue would hold 5, be empty in 20 s.
	given := map[middleware.Profile]map[string]string{
		middleware.IETF:       {"RateLimit": `"queue";r=6;t=10`},
		middleware.Draft7:     {"RateLimit": "limit=7, remaining=6, reset=10"},
		middleware.Draft6:     {"RateLimit-Limit": "7", "RateLimit-Remaining": "6", "RateLimit-Reset": "10"},
		middleware.Legacy:     {"X-RateLimit-Limit": "7", "X-RateLimit-Remaining": "6", "X-RateLimit-Reset": "10"},
		middleware.LegacyUnix: {"X-RateLimit-Remaining": "6", "X-RateLimit-Reset": strconv.FormatInt(t0.Unix()+10, 10)},
	}
	kept := map[middleware.Profile]map[string]string{
		middleware.IETF:       {"RateLimit": `"queue";r=5;t=10`},
		middleware.Draft7:     {"RateLimit": "limit=7, remaining=5, reset=20"},
		middleware.Draft6:     {"RateLimit-Limit": "7", "RateLimit-Remaining": "5", "RateLimit-Reset": "20"},
		middleware.Legacy:     {"X-RateLimit-Limit": "7", "X-RateLimit-Remaining": "5", "X-RateLimit-Reset": "20"},
		middleware.LegacyUnix: {"X-RateLimit-Remaining": "5", "X-RateLimit-Reset": strconv.FormatInt(t0.Unix()+20, 10)},
	}
	for _, store := range []struct {
		name string
		wrap func(*algorithms.MemoryStore) algorithms.Store
		want map[middleware.Profile]map[string]string
	}{
		{"refunder", func(s *algorithms.MemoryStore) algorithms.Store { return s }, given},
		{"no-refunder", func(s *algorithms.MemoryStore) algorithms.Store { return struct{ algorithms.Store }{s} }, kept},
		{"refund-fails", func(s *algorithms.MemoryStore) algorithms.Store { return failingRefunds{s} }, kept},
	} {
		for p, want := range store.want {
			t.Run(store.name+"/"+p.String(), func(t *testing.T) {
				mem, clock := newStore(t)
				m := middleware.MustNew(store.wrap(mem), []*policy.Policy{queue10s()},
					middleware.WithHeaders(p), middleware.WithClock(clock),
					middleware.WithWait(func(ctx context.Context, d time.Duration) error {
						t.Errorf("held for %s; want no hold", d)
						return nil
					}))
				h := m.Handler(ok)
				serve(h, "GET", "/") // departs at once
				ctx := beforeTurn(time.Second)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil).WithContext(ctx))
				if w.Code != http.StatusServiceUnavailable {
					t.Fatalf("deadline before the turn: %d, want 503", w.Code)
				}
				for k, v := range want {
					if got := w.Header().Get(k); got != v {
						t.Errorf("%s %q, want %q", k, got, v)
					}
				}
			})
		}
	}
}

// TestQueueDeadlineRefundHeadersEdges: the values reported after a refund
// are those of the queue without the request's place, also where that is
// not the decision's Remaining plus the cost: a place given back that
// fills the queue again has no t (0: nothing more to grow), and a request
// of cost 2 that took the last place and one beyond (Remaining 0) had only
// one place left to give back.
func TestQueueDeadlineRefundHeadersEdges(t *testing.T) {
	cost := func(r *http.Request) int64 {
		if r.Header.Get("X-Cost") == "2" {
			return 2
		}
		return 1
	}
	for _, tt := range []struct {
		name    string
		maxWait time.Duration // the queue's MaxDelay
		before  int           // requests queued (none held) before the refused one
		advance time.Duration // then the clock moves on
		cost    string
		want    string // RateLimit (IETF) of the refused request
		r       int64  // its r
	}{
		// 65 s: capacity 7. One departs at once (at t0 + 10 s); 7 s later
		// the queue holds 7 again: the refused request's place was the
		// only one it lacked.
		{"full-again", 65 * time.Second, 1, 7 * time.Second, "1", `"queue";r=7;t=0`, 7},
		// 60 s: capacity 7. Six queued free the queue at t0 + 60 s; 5 s
		// later one place is left (its wait 55 s), the next in 5 s. The
		// request of cost 2 took it and one more: Remaining 0, its t 15 s.
		{"cost-beyond", time.Minute, 6, 5 * time.Second, "2", `"queue";r=1;t=5`, 1},
		// The same request of cost 1 (Remaining 0, t 5 s) gives back the
		// one place it took.
		{"cost-last", time.Minute, 6, 5 * time.Second, "1", `"queue";r=1;t=5`, 1},
		// Cost 2 where two places are left (wait 45 s, then 10 s more).
		{"cost-two", time.Minute, 5, 5 * time.Second, "2", `"queue";r=2;t=5`, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store, clock := newStore(t)
			spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: 10 * time.Second, MaxDelay: tt.maxWait}
			queue := policy.Must(policy.New("queue", spec, remote, policy.WithCost(cost)))
			m := middleware.MustNew(store, []*policy.Policy{queue}, middleware.WithClock(clock),
				middleware.WithWait(func(ctx context.Context, d time.Duration) error { return nil })) // held, on no clock
			h := m.Handler(ok)
			for range tt.before {
				if w := serve(h, "GET", "/"); w.Code != 200 {
					t.Fatalf("queued request: %d", w.Code)
				}
			}
			clock.Advance(tt.advance)
			ctx := beforeTurn(time.Second)
			r := httptest.NewRequest("GET", "/", nil).WithContext(ctx)
			r.Header.Set("X-Cost", tt.cost)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusServiceUnavailable {
				t.Fatalf("deadline before the turn: %d, want 503", w.Code)
			}
			if got := w.Header().Get("RateLimit"); got != tt.want {
				t.Errorf("RateLimit %q, want %q", got, tt.want)
			}
			// What the headers say is what the queue holds: one more
			// request leaves one less.
			ds, err := store.Take(context.Background(), algorithms.Check{Spec: spec, Key: "queue:192.0.2.1:1234", Cost: 1})
			if err != nil {
				t.Fatal(err)
			}
			if ds[0].Remaining != tt.r-1 {
				t.Errorf("the queue then admitted one, leaving %d; want %d (r %d less one)", ds[0].Remaining, tt.r-1, tt.r)
			}
		})
	}
}

// TestQueueCutShortRefundHeaders: a request whose client went away while
// it was held gives its place back; the headers of its 503 (read by no
// client, but by what wraps the middleware) report the queue with the
// place given back, their times counted from the end of the hold as for
// any held request.
func TestQueueCutShortRefundHeaders(t *testing.T) {
	for _, tt := range []struct {
		profile middleware.Profile
		want    map[string]string
	}{
		// Held 5 s of its 10 s: given back, the queue holds 6 (not 5),
		// is empty 5 s after the hold (not 15), its t 5 s as before.
		{middleware.IETF, map[string]string{"RateLimit": `"queue";r=6;t=5`}},
		{middleware.Draft7, map[string]string{"RateLimit": "limit=7, remaining=6, reset=5"}},
		{middleware.Legacy, map[string]string{"X-RateLimit-Remaining": "6", "X-RateLimit-Reset": "5"}},
	} {
		t.Run(tt.profile.String(), func(t *testing.T) {
			store, clock := newStore(t)
			m := middleware.MustNew(store, []*policy.Policy{queue10s()}, middleware.WithHeaders(tt.profile), middleware.WithClock(clock),
				middleware.WithWait(func(ctx context.Context, d time.Duration) error {
					clock.Advance(d / 2)
					return context.Canceled
				}))
			h := m.Handler(ok)
			serve(h, "GET", "/") // departs at once
			w := serve(h, "GET", "/")
			if w.Code != http.StatusServiceUnavailable {
				t.Fatalf("client gone while held: %d, want 503", w.Code)
			}
			for k, v := range tt.want {
				if got := w.Header().Get(k); got != v {
					t.Errorf("%s %q, want %q", k, got, v)
				}
			}
		})
	}
}

// TestQueueDeadlineRefundLowest: a single-valued profile reports the
// policy with the lowest remaining among the values the headers report:
// once the queue's place is given back, another policy may be the lowest
// (here a tie, which the longer reset wins, as Result.Lowest has it).
func TestQueueDeadlineRefundLowest(t *testing.T) {
	store, clock := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{queue10s(), fixed("minute", 8, time.Minute, remote)},
		middleware.WithHeaders(middleware.Draft6), middleware.WithClock(clock))
	h := m.Handler(ok)
	serve(h, "GET", "/") // departs at once
	ctx := beforeTurn(time.Second)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil).WithContext(ctx))
	if w.Code != http.StatusServiceUnavailable {
		t.Fatalf("deadline before the turn: %d, want 503", w.Code)
	}
	// The queue holds 6 again (reset 10 s); the minute has 6 left, both
	// requests counted (reset 60 s).
	for k, v := range map[string]string{"RateLimit-Limit": "8", "RateLimit-Remaining": "6", "RateLimit-Reset": "60"} {
		if got := w.Header().Get(k); got != v {
			t.Errorf("%s %q, want %q", k, got, v)
		}
	}
}
