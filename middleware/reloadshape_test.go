package middleware_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// A tightening is a reload of a policy to a Spec that admits no more in
// any respect (see Middleware.SetPolicies): a client that used what the
// replaced Spec gave it must not find a fresh quota under the new one.
type tightening struct {
	name     string
	from, to algorithms.Spec
	use      int // requests the client makes (all admitted) before the reload
	// after[i]: how many of 30 requests are admitted, steps[i] after the
	// reload (cumulative; the first is at the reload).
	steps []time.Duration
	after []int
}

// tightenings are the cases of TestReloadTightenedShapeKeepsUsage, each
// at the start of a minute (the reload 10 s into it).
var tightenings = []tightening{
	{
		// The probe that found the defect: the new bucket, fresh, would
		// admit ten more at once. Guarded by the replaced bucket, the
		// client gets what both give it: none at once; half a minute on,
		// the replaced bucket has refilled 10 and the new one holds 10.
		name: "token_bucket burst lowered",
		from: algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 20, Window: time.Minute},
		to:   algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 20, Window: time.Minute, Burst: 10},
		use:  20, steps: []time.Duration{0, 30 * time.Second}, after: []int{0, 10},
	},
	{
		// 15 of 20 used: 5 left in the replaced bucket, below the new
		// one's 10.
		name: "token_bucket burst lowered, partly used",
		from: algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 20, Window: time.Minute},
		to:   algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 20, Window: time.Minute, Burst: 10},
		use:  15, steps: []time.Duration{0}, after: []int{5},
	},
	{
		name: "leaky_bucket burst lowered",
		from: algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: 20, Window: time.Minute, Burst: 30},
		to:   algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: 20, Window: time.Minute, Burst: 15},
		use:  30, steps: []time.Duration{0, 30 * time.Second}, after: []int{0, 10},
	},
	{
		// The same limit over an hour: a tenth of the rate. A minute on
		// the replaced bucket has refilled its 10 and the new one holds
		// the 10 it started with; a minute later the new one has
		// refilled none of them.
		name: "token_bucket window lengthened",
		from: algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Minute},
		to:   algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Hour},
		use:  10, steps: []time.Duration{0, time.Minute, time.Minute}, after: []int{0, 10, 0},
	},
	{
		// One machine, told from the other side (tokens = capacity -
		// level): the replaced one's state goes on deciding.
		name: "token_bucket to leaky_bucket",
		from: algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Minute},
		to:   algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: 10, Window: time.Minute},
		use:  10, steps: []time.Duration{0, 30 * time.Second}, after: []int{0, 5},
	},
	{
		// 10 per 10 s queued up to 5 s (6 places) to 10 per 20 s (3
		// places): the replaced queue is full.
		name: "leaky_queue window lengthened",
		from: algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: 10 * time.Second, MaxDelay: 5 * time.Second},
		to:   algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: 20 * time.Second, MaxDelay: 5 * time.Second},
		use:  6, steps: []time.Duration{0}, after: []int{0},
	},
	{
		name: "sliding_buckets finer",
		from: algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 10, Window: time.Minute, Buckets: 6},
		to:   algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 10, Window: time.Minute, Buckets: 12},
		use:  10, steps: []time.Duration{0, 30 * time.Second}, after: []int{0, 0},
	},
	{
		// A fixed window is sliding_buckets of one bucket.
		name: "fixed_window to sliding_buckets",
		from: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute},
		to:   algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 10, Window: time.Minute, Buckets: 6},
		use:  10, steps: []time.Duration{0}, after: []int{0},
	},
	{
		// 10 a minute to 10 an hour: none more in the minute of the
		// reload (the replaced counters hold the 10); in the next, the
		// replaced counters start afresh and the new ones hold none:
		// 10; none in the minute after (the new ones hold 10 of the
		// hour). What was used before the reload is not counted in the
		// new hour: the replaced counters do not know the hour.
		name: "fixed_window window lengthened",
		from: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute},
		to:   algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour},
		use:  10, steps: []time.Duration{0, time.Minute, time.Minute}, after: []int{0, 10, 0},
	},
	{
		name: "sliding_window window lengthened",
		from: algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 10, Window: time.Minute},
		to:   algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 10, Window: time.Hour},
		use:  10, steps: []time.Duration{0}, after: []int{0},
	},
	{
		name: "sliding_log window lengthened, limit lowered",
		from: algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 10, Window: time.Minute},
		to:   algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 8, Window: time.Hour},
		use:  10, steps: []time.Duration{0}, after: []int{0},
	},
}

// TestReloadTightenedShapeKeepsUsage: a reload that tightens a policy
// other than by its limit alone (a lower burst, a longer window at the
// same or a lower limit or rate, another number of buckets, a fixed
// window made sliding_buckets, or a bucket told as the other kind) does
// not hand clients a fresh quota: the Spec it replaced guards the new
// one, as it does a lowered limit, so that, while the guard stands, a
// client gets no more than the replaced Spec gives it, counting what it
// used before the reload, nor more than the new Spec gives it counting
// from the reload. The guard ends once the replaced Spec's counters can
// hold nothing of before the reload. Through chi and through a ServeMux,
// on the memory store and on Redis.
func TestReloadTightenedShapeKeepsUsage(t *testing.T) {
	for _, name := range storetest.Names {
		for i, tc := range tightenings {
			router := []string{"chi", "mux"}[i%2]
			t.Run(fmt.Sprintf("%s/%s/%s", name, tc.name, router), func(t *testing.T) {
				clock := algotest.NewClock(t0)
				store := storetest.New(t, name, clock)
				var held []time.Duration
				m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("p", tc.from, remote))}, middleware.WithClock(clock),
					middleware.WithWait(func(_ context.Context, d time.Duration) error { held = append(held, d); return nil }))
				h := routed(router, m)
				clock.Advance(10 * time.Second)
				if got := admittedOf(h, tc.use); got != tc.use {
					t.Fatalf("under %v: %d of %d admitted", tc.from, got, tc.use)
				}
				if err := m.SetPolicies([]*policy.Policy{policy.Must(policy.New("p", tc.to, remote))}); err != nil {
					t.Fatal(err)
				}
				if g, ok := guardOf(m); !ok || g != tc.from {
					t.Errorf("reloaded as %v: guard %v, %v; want the replaced %v", tc.to, g, ok, tc.from)
				}
				for j, d := range tc.steps {
					clock.Advance(d)
					if got := admittedOf(h, 30); got != tc.after[j] {
						t.Errorf("%s after the reload to %v: %d of 30 admitted, want %d", sinceReload(tc.steps[:j+1]), tc.to, got, tc.after[j])
					}
				}
				if tc.to.Algorithm == algorithms.LeakyQueue {
					for _, d := range held {
						if d > tc.to.MaxDelay {
							t.Errorf("held for %s, beyond the MaxDelay %s", d, tc.to.MaxDelay)
						}
					}
				}
				// Long after, the replaced Spec's counters hold nothing of
				// before the reload: the guard has ended.
				clock.Advance(3 * time.Hour)
				serve(h, "GET", "/")
				if g, ok := guardOf(m); ok {
					t.Errorf("three hours after the reload: still guarded by %v", g)
				}
			})
		}
	}
}

// sinceReload formats the sum of steps.
func sinceReload(steps []time.Duration) string {
	var d time.Duration
	for _, s := range steps {
		d += s
	}
	return d.String()
}

// TestReloadLoosenedShapeStartsAfresh: a reload that loosens a policy in
// some respect (a larger burst, a shorter window, more buckets at a
// higher limit, a longer MaxDelay; coarser buckets, a fixed window in
// place of sliding buckets or of a window it does not divide, which
// admit more across a boundary) is not held back by the Spec it
// replaced: the policy has no guard, and its new Spec's counters start
// afresh, as SetPolicies documents.
func TestReloadLoosenedShapeStartsAfresh(t *testing.T) {
	store, clock := newStore(t)
	for _, tc := range []struct{ from, to algorithms.Spec }{
		{algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Minute, Burst: 5}, algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Minute}},
		{algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Hour}, algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Minute}},
		{algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Minute, Burst: 20}, algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Minute, Burst: 30}},
		{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour}, algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute}},
		{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute}, algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 20, Window: time.Hour, Buckets: 6}},
		{algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: time.Second, MaxDelay: time.Second}, algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: time.Second, MaxDelay: 2 * time.Second}},
		{algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 10, Window: time.Minute}, algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Minute}},
		// 10 at 0:25 and 10 at 1:05: two buckets of 30 s admit both, six of 10 s not the second.
		{algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 10, Window: time.Minute, Buckets: 6}, algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 10, Window: time.Minute, Buckets: 2}},
		{algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 10, Window: time.Minute, Buckets: 2}, algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 10, Window: time.Minute, Buckets: 3}},
		// The boundary burst: 10 at 0:59 and 10 at 1:01.
		{algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 10, Window: time.Minute, Buckets: 6}, algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute}},
		// 10 at 1:29 and 10 at 1:31, in one minute.
		{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute}, algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: 90 * time.Second}},
		{algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 10, Window: time.Minute}, algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 10, Window: 90 * time.Second}},
	} {
		m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("p", tc.from, remote))}, middleware.WithClock(clock))
		if err := m.SetPolicies([]*policy.Policy{policy.Must(policy.New("p", tc.to, remote))}); err != nil {
			t.Fatal(err)
		}
		if g, ok := guardOf(m); ok {
			t.Errorf("%v reloaded as %v: guarded by %v, want no guard", tc.from, tc.to, g)
		}
	}
}

// TestReloadQueueMaxDelayLoweredHoldsWithinIt: a reload that lowers a
// leaky_queue's MaxDelay alone is not guarded by the queue it replaced,
// whose requests may wait up to the longer MaxDelay: merged with its
// Delay, a request would be held beyond the new MaxDelay (which the
// middleware takes for a broken store's answer). The new queue starts
// afresh, and holds none beyond its MaxDelay. (Guarding it exactly would
// take judging the replaced queue's state at the new MaxDelay, which no
// store check can ask for: see SetPolicies.)
func TestReloadQueueMaxDelayLoweredHoldsWithinIt(t *testing.T) {
	store, clock := newStore(t)
	from := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: 9 * time.Second}
	to := from
	to.MaxDelay = 4 * time.Second
	var held []time.Duration
	var failed []error
	m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("p", from, remote))}, middleware.WithClock(clock),
		middleware.WithWait(func(_ context.Context, d time.Duration) error { held = append(held, d); return nil }),
		middleware.WithErrorHandler(func(_ *http.Request, err error) { failed = append(failed, err) }))
	h := routed("chi", m)
	if got := admittedOf(h, 10); got != 10 {
		t.Fatalf("queue of 10 places: %d of 10 admitted", got)
	}
	if err := m.SetPolicies([]*policy.Policy{policy.Must(policy.New("p", to, remote))}); err != nil {
		t.Fatal(err)
	}
	if g, ok := guardOf(m); ok {
		t.Errorf("MaxDelay lowered: guarded by %v, want no guard", g)
	}
	held = nil
	if got := admittedOf(h, 10); got != 5 {
		t.Errorf("the new queue of 5 places: %d of 10 admitted, want 5", got)
	}
	for _, d := range held {
		if d > to.MaxDelay {
			t.Errorf("held for %s, beyond the MaxDelay %s", d, to.MaxDelay)
		}
	}
	if len(failed) != 0 {
		t.Errorf("errors %v, want none", failed)
	}
}

// TestReloadTightenedShapeKeepsShareUsage: a limit set by
// SetLimitUnguarded (a Fleet's share) of a bucket kind is counted under
// its own Spec alone; a reload that lowers the burst alone carries the
// share over at the same limit with a lower burst, and guards it with
// the Spec of the share it replaced, whose counters hold what the client
// used: one that emptied its share's bucket of 20 gets none of the new
// share's 10 at once, and 5 half a minute on (what the replaced bucket
// refilled). Through chi, on the memory store and on Redis.
func TestReloadTightenedShapeKeepsShareUsage(t *testing.T) {
	for _, name := range storetest.Names {
		t.Run(name, func(t *testing.T) {
			clock := algotest.NewClock(t0)
			store := storetest.New(t, name, clock)
			from := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 20, Window: time.Minute, Burst: 40}
			to := from
			to.Burst = 20
			m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("p", from, remote))}, middleware.WithClock(clock))
			if err := m.SetLimitUnguarded("p", 10); err != nil {
				t.Fatal(err)
			}
			h := routed("chi", m)
			if got := admittedOf(h, 30); got != 20 {
				t.Fatalf("a share of 10 a minute, burst 20: %d of 30 admitted, want 20", got)
			}
			if err := m.SetPolicies([]*policy.Policy{policy.Must(policy.New("p", to, remote))}); err != nil {
				t.Fatal(err)
			}
			share := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Minute, Burst: 20}
			p := m.Set().Policy(0)
			if want := (algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Minute}); p.Spec() != want {
				t.Fatalf("reloaded at burst 20: the share's Spec %v, want %v", p.Spec(), want)
			}
			if gs := p.Guards(); len(gs) != 1 || gs[0] != share {
				t.Errorf("reloaded at burst 20: guards %v, want [%v] (the replaced share)", gs, share)
			}
			if got := admittedOf(h, 30); got != 0 {
				t.Errorf("reloaded at burst 20, the share's bucket empty: %d of 30 admitted, want 0", got)
			}
			clock.Advance(30 * time.Second)
			if got := admittedOf(h, 30); got != 5 {
				t.Errorf("half a minute on: %d of 30 admitted, want 5", got)
			}
		})
	}
}

// TestReloadTightenedShapeUnderSetLimit: a policy of a window kind held
// below its configured limit by SetLimit, whose window a reload
// lengthens, enters at its limit carried over (8 of 10), judged on the
// new configured Spec's counters, which count from the reload, and is
// guarded by the replaced configured Spec at its own limit, not at the
// level in force: its counters are of another window, which only the
// replaced limit is known to bound. A client that used its 8 of the
// minute gets 2 more in it (the replaced 10 less what it used), not a
// fresh 8, and 6 in the next (8 of the hour less those 2). Through a
// ServeMux, on the memory store and on Redis.
func TestReloadTightenedShapeUnderSetLimit(t *testing.T) {
	for _, name := range storetest.Names {
		t.Run(name, func(t *testing.T) {
			clock := algotest.NewClock(t0)
			store := storetest.New(t, name, clock)
			m := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, remote)}, middleware.WithClock(clock))
			if err := m.SetLimit("p", 8); err != nil {
				t.Fatal(err)
			}
			h := routed("mux", m)
			clock.Advance(10 * time.Second)
			if got := admittedOf(h, 10); got != 8 {
				t.Fatalf("10 a minute at 8: %d of 10 admitted, want 8", got)
			}
			if err := m.SetPolicies([]*policy.Policy{fixed("p", 10, time.Hour, remote)}); err != nil {
				t.Fatal(err)
			}
			p := m.Set().Policy(0)
			if p.Spec().Limit != 8 {
				t.Errorf("reloaded at 10 an hour: limit %d, want 8 (carried over)", p.Spec().Limit)
			}
			replaced := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute}
			if gs := p.Guards(); len(gs) != 2 || gs[1] != replaced || p.GuardLimit(gs[1]) != 10 {
				t.Errorf("reloaded at 10 an hour: guards %v; want the new configured Spec and %v at 10", gs, replaced)
			}
			if got := admittedOf(h, 10); got != 2 {
				t.Errorf("8 used in the minute of the reload: %d of 10 admitted, want 2", got)
			}
			clock.Advance(time.Minute)
			if got := admittedOf(h, 10); got != 6 {
				t.Errorf("the next minute, 2 used of the hour: %d of 10 admitted, want 6", got)
			}
		})
	}
}
