package middleware_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestNestedQueueShadowLayer: one of two nested middlewares in shadow
// mode, which never holds a request. With one leaky_queue policy (one per
// 10 s, 7 places) given to both: a shadow one further out takes the
// places, and the one further in, which leaves the policy out (counted
// once, see ErrCountedTwice), does not hold for them either: a burst of
// eight at one instant passes seven at once, and the eighth, which the
// full queue denies further out (consuming nothing), is decided and
// refused further in, Retry-After 10. A shadow one further in leaves
// the policy to the one further out, which holds each request once.
// With a queue of each (one per 10 s further out, one per 20 s further
// in), the shadow one counts its places and holds nothing, the other
// holds for its own.
func TestNestedQueueShadowLayer(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		shared                   bool
		outerShadow, innerShadow bool
		burst                    bool   // eight requests at one instant, else three in a row
		holds                    string // of each request, "|" between
		statuses                 string
		rateLimit                string // the last response's IETF RateLimit lines
	}{
		{name: "one policy, shadow further out", shared: true, outerShadow: true, burst: true,
			holds: "|||||||", statuses: "200 200 200 200 200 200 200 429", rateLimit: `"q";r=0;t=10`},
		{name: "one policy, shadow further in", shared: true, innerShadow: true,
			holds: "|outer 10s|outer 10s", statuses: "200 200 200", rateLimit: `"q";r=5;t=0`},
		{name: "two queues, shadow further out", outerShadow: true,
			holds: "|inner 20s|inner 20s", statuses: "200 200 200", rateLimit: `"q";r=6;t=0 | "q20";r=2;t=0`},
		{name: "two queues, shadow further in", innerShadow: true,
			holds: "|outer 10s|outer 10s", statuses: "200 200 200", rateLimit: `"q";r=5;t=0 | "q20";r=2;t=20`},
	} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(tc.name+"/"+mux, func(t *testing.T) {
				store, clock := newStore(t)
				q := queueEvery("q", 10*time.Second)
				innerPolicy := queueEvery("q20", 20*time.Second)
				if tc.shared {
					innerPolicy = q
				}
				var log []string
				outerOpts := []middleware.Option{middleware.WithClock(clock), logHolds("outer", clock, &log)}
				innerOpts := []middleware.Option{middleware.WithClock(clock), logHolds("inner", clock, &log)}
				if tc.outerShadow {
					outerOpts = append(outerOpts, middleware.WithShadow(nil))
				}
				if tc.innerShadow {
					innerOpts = append(innerOpts, middleware.WithShadow(nil))
				}
				outer := middleware.MustNew(store, []*policy.Policy{q}, outerOpts...)
				inner := middleware.MustNew(store, []*policy.Policy{innerPolicy}, innerOpts...)
				h := queueRouter(mux, outer, inner, ok)
				n := 3
				if tc.burst {
					n = 8
				}
				var holds, statuses []string
				var last http.Header
				for range n {
					log = nil
					w := serve(h, "GET", "/")
					holds, statuses, last = append(holds, strings.Join(log, ", ")), append(statuses, fmt.Sprint(w.Code)), w.Header()
				}
				if got := strings.Join(holds, "|"); got != tc.holds {
					t.Errorf("holds %q, want %q", got, tc.holds)
				}
				if got := strings.Join(statuses, " "); got != tc.statuses {
					t.Errorf("statuses %s, want %s", got, tc.statuses)
				}
				if got := headerLines(last, "RateLimit"); got != tc.rateLimit {
					t.Errorf("RateLimit %q, want %q", got, tc.rateLimit)
				}
				if tc.burst {
					if got := last.Get("Retry-After"); got != "10" {
						t.Errorf("Retry-After %q, want 10", got)
					}
					if so, si := outer.Stats(), inner.Stats(); so.ShadowDenied != 1 || si.Denied != 1 {
						t.Errorf("Stats outer %+v, inner %+v; want ShadowDenied 1 further out, Denied 1 further in", so, si)
					}
				}
				shadow := outer
				if tc.innerShadow {
					shadow = inner
				}
				if s := shadow.Stats(); s.Delayed != 0 {
					t.Errorf("the shadow one's Stats %+v, want Delayed 0", s)
				}
			})
		}
	}
}

// TestNestedQueueLimitChangedOnOneLayer: one leaky_queue policy (six a
// minute: one per 10 s, 7 places) given to two nested middlewares, its
// limit changed on one of them, by SetLimit or by a reload
// (SetPolicies). A copy lowered further in (three a minute) is guarded by
// the configured Spec, which the one further out counts: it is decided
// there under its lowered Spec alone, and holds the request again for
// its turn in the lowered queue, which then spaces the requests (20 s
// apart); each writes its member (q=7 further out, q=4 further in), and
// the response keeps the more constraining one, q=4: a name has one
// member in each field.
// One lowered further out holds the request once, for the later of its
// two turns (its lowered queue's and the configured one's), and the one
// further in leaves the policy out: one member, q=4. A bucket kind's
// copy raised (twelve a minute) has no guard and counts in its own queue
// alone: further in, it never holds a request the configured queue
// further out spaced already; further out, the configured queue further
// in holds the request again, for the rest of its turn. Each middleware
// then writes its own member, and the response keeps the more
// constraining one, the configured queue's q=7.
func TestNestedQueueLimitChangedOnOneLayer(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 6, Window: time.Minute, MaxDelay: time.Minute}
	for _, tc := range []struct {
		name     string
		outer    bool  // changed on the middleware further out
		reload   bool  // by SetPolicies, else SetLimit
		limit    int64 // the new limit
		holds    string
		left     time.Duration // when the last request left
		policies string        // the last response's IETF RateLimit-Policy lines
	}{
		{"lowered further in", false, false, 3, "|outer 10s, inner 10s|inner 20s|inner 20s", time.Minute, `"q";q=4;w=60`},
		{"lowered further in by a reload", false, true, 3, "|outer 10s, inner 10s|inner 20s|inner 20s", time.Minute, `"q";q=4;w=60`},
		{"lowered further out", true, false, 3, "|outer 20s|outer 20s|outer 20s", time.Minute, `"q";q=4;w=60`},
		{"lowered further out by a reload", true, true, 3, "|outer 20s|outer 20s|outer 20s", time.Minute, `"q";q=4;w=60`},
		{"raised further in", false, false, 12, "|outer 10s|outer 10s|outer 10s", 30 * time.Second, `"q";q=7;w=60`},
		{"raised further out", true, false, 12, "|outer 5s, inner 5s|inner 10s|inner 10s", 30 * time.Second, `"q";q=7;w=60`},
		{"raised further out by a reload", true, true, 12, "|outer 5s, inner 5s|inner 10s|inner 10s", 30 * time.Second, `"q";q=7;w=60`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, clock := newStore(t)
			q := policy.Must(policy.New("q", spec, remote))
			var log []string
			outer := middleware.MustNew(store, []*policy.Policy{q}, middleware.WithClock(clock), logHolds("outer", clock, &log))
			inner := middleware.MustNew(store, []*policy.Policy{q}, middleware.WithClock(clock), logHolds("inner", clock, &log))
			changed := inner
			if tc.outer {
				changed = outer
			}
			if tc.reload {
				s := spec
				s.Limit = tc.limit
				if err := changed.SetPolicies([]*policy.Policy{policy.Must(policy.New("q", s, remote))}); err != nil {
					t.Fatal(err)
				}
			} else if err := changed.SetLimit("q", tc.limit); err != nil {
				t.Fatal(err)
			}
			h := queueRouter("chi", outer, inner, ok)
			var holds []string
			var last http.Header
			for i := range 4 {
				log = nil
				w := serve(h, "GET", "/")
				if w.Code != http.StatusOK {
					t.Fatalf("request %d: %d, want 200", i, w.Code)
				}
				holds, last = append(holds, strings.Join(log, ", ")), w.Header()
			}
			if got := strings.Join(holds, "|"); got != tc.holds {
				t.Errorf("holds %q, want %q", got, tc.holds)
			}
			if at := clock.Now().Sub(t0); at != tc.left {
				t.Errorf("the last request left at %s, want %s", at, tc.left)
			}
			if got := headerLines(last, "RateLimit-Policy"); got != tc.policies {
				t.Errorf("RateLimit-Policy %q, want %q", got, tc.policies)
			}
		})
	}
}

// TestNestedInItselfQueueLimitChangedDuringHold: a middleware nested in
// itself whose queue's limit SetLimit lowers while the layer further out
// holds a request: the layer further in decides that request under the
// rules it started with (see ErrCountedTwice), so it is held once; the
// next one is held for its turn at the lowered limit, once.
func TestNestedInItselfQueueLimitChangedDuringHold(t *testing.T) {
	for _, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			store, clock := newStore(t)
			spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 6, Window: time.Minute, MaxDelay: time.Minute}
			var log []string
			var m *middleware.Middleware
			m = middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("q", spec, remote))}, middleware.WithClock(clock),
				middleware.WithWait(func(_ context.Context, d time.Duration) error {
					log = append(log, d.String())
					clock.Advance(d)
					if err := m.SetLimit("q", 2); err != nil {
						t.Error(err)
					}
					return nil
				}))
			h := queueRouter(mux, m, m, ok)
			var holds []string
			for range 3 {
				log = nil
				if w := serve(h, "GET", "/"); w.Code != http.StatusOK {
					t.Fatalf("status %d, want 200", w.Code)
				}
				holds = append(holds, strings.Join(log, ", "))
			}
			// The third, at 10 s: the configured queue's turn at 20 s, the
			// lowered one's (one per 30 s, first met then) at once.
			if got, want := strings.Join(holds, "|"), "|10s|10s"; got != want {
				t.Errorf("holds %q, want %q", got, want)
			}
			if s := m.Stats(); s.Delayed != 2 {
				t.Errorf("Stats %+v, want Delayed 2", s)
			}
		})
	}
}

// TestNestedInItselfWithoutContextHoldsTwice: a middleware built
// WithoutContext is not seen by the layers further in (see
// ErrCountedTwice): nested in itself, it decides its leaky_queue policy
// at each layer, each taking a place and holding the request for its
// turn: the first request is held 10 s (the inner layer's place is the
// second), each later one 20 s.
func TestNestedInItselfWithoutContextHoldsTwice(t *testing.T) {
	store, clock := newStore(t)
	var log []string
	m := middleware.MustNew(store, []*policy.Policy{queueEvery("q", 10*time.Second)}, middleware.WithClock(clock),
		middleware.WithoutContext(), logHolds("m", clock, &log))
	h := queueRouter("chi", m, m, ok)
	var holds []string
	for range 2 {
		log = nil
		serve(h, "GET", "/")
		holds = append(holds, strings.Join(log, ", "))
	}
	if got, want := strings.Join(holds, "|"), "m 10s|m 10s, m 10s"; got != want {
		t.Errorf("holds %q, want %q", got, want)
	}
}
