package adaptive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/nilness"
)

// FleetConfig configures a Fleet.
type FleetConfig struct {
	// Policies are the names of the policies whose configured limit is a
	// cluster-wide limit; empty means all the policies of the target. A
	// name that a reload removes is skipped, without an error, while the
	// target has no policy of that name, and shared again once a reload
	// brings it back; a policy a reload renames is not shared under its
	// new name.
	Policies []string
	// Instances returns the number of instances sharing the limits
	// (required). A result below 1 is ignored: the last good count stays;
	// before any good count (from NewFleet's reading on), this instance
	// counts itself alone and enforces the whole configured limit: until
	// a count of 1 or more is read, each instance may admit that limit.
	// Check calls it on the goroutine of the request that finds Every
	// passed, holding the Fleet's lock: that request waits for it (the
	// other Checks meanwhile return at once, with the limits as they
	// were, and the Instances method the count they are set for; Update
	// waits), and a panic in it reaches that request. Have it return a
	// count kept up to date elsewhere (a watch of the registry), not call
	// the registry. The count is trusted as it is: one above the true
	// count (instances that left the registry late, entries anyone may
	// add) divides every limit by it, down to 1 per instance for an
	// absurd one, and one that flaps moves every client's share with it
	// (for a bucket kind, a client may get from an instance every share
	// it held there, added up: see the package documentation).
	Instances func() int
	// Every is the shortest time between two readings of Instances by
	// [Fleet.Check]: a Check reads again only once Every has passed since
	// the last reading (default 10 seconds), or when the clock reads a
	// time before it (set back). [Fleet.Update] reads at once.
	Every time.Duration
	// Clock measures Every; the default is algorithms.SystemClock.
	Clock algorithms.Clock
	// Logger receives a record (Info) per change of the instance count,
	// once the limits of the count are set; nil logs nothing.
	Logger *slog.Logger
}

// A Fleet divides cluster-wide limits among the instances of a service
// that keep their counters in memory: each instance enforces
// floor(configured limit / instances), at least 1, so the fleet as a whole
// admits at most the configured limit while the count holds (more only
// when there are more instances than the limit allows units; in the
// window of a change of the count, each instance's new share starts on
// fresh counters, see the package doc). Load balancing must spread each
// client's requests evenly for the division to be fair; a client pinned to
// one instance gets only that instance's share.
//
// [Fleet.Update] reads the count and sets the limits at once (call it when
// your registry reports a change); [Fleet.Check] does so at most once per
// Every and is cheap enough for every request ([Fleet.Handler]). Build one
// with [NewFleet]; it is safe for concurrent use.
//
// An update calls Instances, the Target's methods (and through a
// middleware's SetLimitUnguarded its observers' ObserveLimit), the Clock
// and the Logger's handler under the Fleet's lock: they must not call
// Update, which would wait for that lock for ever; they may call Check
// (which returns at once while an update is under way) and Instances. A
// panic of any of them reaches the caller of the update (the request of
// Check, or Update's or NewFleet's caller) with the lock released. A panic
// of the Logger's handler leaves the limits of the new count set; one of
// Instances leaves the count and the limits of before; one of a Target's
// method leaves the policies not set yet at their limits of before. Check
// reads the count and sets the limits again once Every has passed since the
// reading that panicked (Update at once).
//
// An observer's ObserveLimit is also called by the other writers of the
// middleware's rules (a reload, a Controller's evaluation, a SetLimit of
// your own), under the middleware's lock (see middleware.Observer): there
// a Check that finds Every passed or the rules replaced would set the
// limits, and wait for the middleware's lock for ever. From ObserveLimit,
// call only Instances.
type Fleet struct {
	t   Target
	cfg FleetConfig

	origin time.Time    // the clock at NewFleet
	lastAt atomic.Int64 // when the count was last read, as a Duration since origin
	nextAt atomic.Int64 // when Check reads the count again, as a Duration since origin
	seen   seen         // the target's rules at the last update

	mu sync.Mutex
	n  int // instances the limits were set for; 0 before the first Update

	// n as last set, for the Instances method, which takes no lock: it
	// may be called from what an update calls while it holds mu (the
	// middleware's observers, as it sets the limits; the Logger's
	// handler).
	count atomic.Int64
}

// NewFleet returns a Fleet driving t's limits and sets them for the
// current count.
func NewFleet(t Target, cfg FleetConfig) (*Fleet, error) {
	if nilness.Is(t) {
		return nil, errors.New("adaptive: target is nil")
	}
	if cfg.Instances == nil {
		return nil, errors.New("adaptive: FleetConfig.Instances is nil")
	}
	if cfg.Every < 0 {
		return nil, errors.New("adaptive: FleetConfig.Every is negative")
	}
	if cfg.Every == 0 {
		cfg.Every = 10 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = algorithms.SystemClock
	} else if nilness.Is(cfg.Clock) {
		// A pointer clock never assigned: NewFleet would panic reading it.
		return nil, errors.New("adaptive: FleetConfig.Clock is nil")
	}
	cfg.Policies = slices.Clone(cfg.Policies) // the caller's slice is the caller's
	for _, name := range cfg.Policies {
		if t.Configured(name) == nil {
			return nil, fmt.Errorf("adaptive: FleetConfig.Policies: no policy %q", name)
		}
	}
	f := &Fleet{t: t, cfg: cfg, origin: cfg.Clock.Now()}
	if err := f.Update(); err != nil {
		return nil, err
	}
	return f, nil
}

// Instances returns the instance count the limits are set for. It takes
// no lock: an observer of the middleware may call it from its
// ObserveLimit, which runs as the Fleet sets the limits of a new count
// (and returns that count there).
func (f *Fleet) Instances() int {
	return int(f.count.Load())
}

// Update reads the instance count now and sets every driven policy's limit
// to its configured limit divided by the count (also when the count is
// unchanged: a reload may have changed the configured limits).
func (f *Fleet) Update() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.update(f.cfg.Clock.Now())
}

// Check calls Update if Every has passed since the count was last read;
// if the target's configured policies were replaced since (a reload), it
// sets their limits for the count known at once.
func (f *Fleet) Check() error {
	now := f.cfg.Clock.Now()
	// On the monotonic clock when the times have one: a wall clock set
	// back does not delay the next reading. An injected clock without
	// monotonic readings that is set back before the last reading reads
	// again at once: it would otherwise hold the count for as long as the
	// clock went back.
	if !f.due(now) && !f.seen.moved(f.t) || !f.mu.TryLock() {
		return nil // nothing to do, or an update is under way
	}
	defer f.mu.Unlock()
	// Read again under the lock: a reading made before another Check
	// read the count (a request descheduled between the two) is before
	// that Check's and would pass for a clock set back, reading the
	// count again at once.
	now = f.cfg.Clock.Now()
	if !f.due(now) {
		if f.seen.reloaded(f.t) {
			return f.apply()
		}
		return nil
	}
	return f.update(now)
}

// due reports whether Check is to read the count at now: Every has passed
// since the last reading, or the clock reads a time before it.
func (f *Fleet) due(now time.Time) bool {
	since := now.Sub(f.origin)
	return since >= time.Duration(f.nextAt.Load()) || since < time.Duration(f.lastAt.Load())
}

// update requires f.mu.
func (f *Fleet) update(now time.Time) error {
	next := now.Sub(f.origin)
	f.lastAt.Store(int64(next))
	if next > math.MaxInt64-f.cfg.Every {
		next = math.MaxInt64 // Every of centuries: never again by Check
	} else {
		next += f.cfg.Every
	}
	f.nextAt.Store(int64(next))
	n := f.cfg.Instances()
	if n < 1 {
		if f.n == 0 {
			n = 1 // nothing known yet: this instance alone
		} else {
			n = f.n
		}
	}
	prev := f.n
	f.n = n
	f.count.Store(int64(n)) // before the record: a handler reading Instances sees n
	err := f.apply()
	// Logged once the limits of the count are in force: a Logger's
	// handler that panics leaves them set, as Instances reports them.
	if n != prev && f.cfg.Logger != nil {
		f.cfg.Logger.LogAttrs(context.Background(), slog.LevelInfo, "ratekeeper: fleet size",
			slog.Int("instances", n), slog.Int("previous", prev))
	}
	return err
}

// apply sets every driven policy's limit for f.n instances, again if a
// reload replaced the configured policies meanwhile. It requires f.mu.
func (f *Fleet) apply() error { return f.seen.settle(f.t, f.setLimits) }

// setLimits sets the limits of apply once. It requires f.mu.
func (f *Fleet) setLimits() error {
	n := f.n
	names, conf := f.seen.start(f.t, f.cfg.Policies)
	var first error
	for _, name := range names {
		p := conf[name]
		if p == nil {
			continue // removed by a reload
		}
		limit := max(1, p.Spec().Limit/int64(n))
		if n == 1 {
			limit = 0 // the configured limit
		}
		if err := f.setLimit(name, limit); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// unguardedTarget is a Target that sets a limit without the guard of the
// configured Spec (a *middleware.Middleware: SetLimitUnguarded).
type unguardedTarget interface {
	SetLimitUnguarded(name string, limit int64) error
}

// setLimit sets a share of the cluster-wide limit, without the guard when
// the target can: a share stays in force for long and moves seldom, and
// the guard, the cluster-wide limit itself, would bind only in the
// window of a change of the count, at the cost of a second check per
// request for a bucket kind (a window kind's share is judged on the
// configured counters all the same: see the package doc, and what a
// client may get from an instance then).
func (f *Fleet) setLimit(name string, limit int64) error {
	if u, ok := f.t.(unguardedTarget); ok {
		return u.SetLimitUnguarded(name, limit)
	}
	return f.t.SetLimit(name, limit)
}

// Handler returns next wrapped so that each request first calls
// [Fleet.Check] (its error, a limit SetLimit refused, is dropped: Update
// returns it). Put it around the rate limiter, so that every request
// checks, the denied ones too, before it is decided:
//
//	handler := f.Handler(m.Handler(app)) // chi: r.Use(f.Handler, m.Handler)
//
// Inside the limiter only the requests it admits check: once a share is
// used up for every request (a client's, under a policy keyed by client;
// everyone's, under one keyed by route), nothing checks, and that share,
// with the count of before, holds until the policy's window ends, though
// the count has fallen since. It panics if next is nil, as [http.Handle]
// does.
func (f *Fleet) Handler(next http.Handler) http.Handler {
	if nilness.Is(next) {
		panic("adaptive: Fleet.Handler: next is nil")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.Check()
		next.ServeHTTP(w, r)
	})
}
