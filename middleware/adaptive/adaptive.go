package adaptive

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/big"
	"math/bits"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/nilness"
	"github.com/ratekeeper/ratekeeper/internal/timing"
	"github.com/ratekeeper/ratekeeper/policy"
)

// A Target is the rate limiter whose limits are driven: a
// *middleware.Middleware.
type Target interface {
	// Set returns the rule set in force.
	Set() *policy.Set
	// Configured returns the policy named name as configured, or nil.
	Configured(name string) *policy.Policy
	// SetLimit sets the limit enforced for the policy named name (0: the
	// configured one). A Fleet calls SetLimitUnguarded instead, when the
	// target has it (a *middleware.Middleware does): a wrapper of a
	// middleware that intercepts SetLimit intercepts that one too.
	SetLimit(name string, limit int64) error
}

// Config holds the thresholds of a Controller. The zero value of each field
// means its default. LatencyFactor, Decrease, Step and Floor are kept in
// thousandths: one that rounds to no change (a Step below 0.0005) is an
// error.
type Config struct {
	// Policies are the names of the policies controlled; empty means all
	// the policies of the target's rule set at each evaluation. A name
	// that a reload removes is skipped, without an error, while the
	// target has no policy of that name, and controlled again once a
	// reload brings it back (see "Driving a policy" in the package
	// documentation); a policy a reload renames is not controlled under
	// its new name.
	Policies []string
	// Period is the observation period (default 1 minute).
	Period time.Duration
	// LatencyFactor: a period is slow when its p99 latency exceeds
	// LatencyFactor times the baseline (default 2). A factor above 2^62
	// thousandths (about 4.6e15) acts as that one: over a 1 ns baseline,
	// a p99 above about 53 days is slow.
	LatencyFactor float64
	// ErrorRate: a period is failing when more than this fraction of its
	// requests failed (default 0.01, 1%).
	ErrorRate float64
	// Decrease is the fraction of the current limit kept when a period is
	// slow and failing (default 0.8).
	Decrease float64
	// Step is how much of the configured limit is given back per stable
	// period when recovering (default 0.1; at most 0.1).
	Step float64
	// StablePeriods is how many healthy periods in a row come before each
	// step up (default 1).
	StablePeriods int
	// Floor is the lowest effective limit, as a fraction of the configured
	// limit (default 0.5), rounded up to a whole limit (a configured 3
	// never goes below 2). The effective limit is also at least 1.
	Floor float64
	// MinSamples is the fewest requests a period needs to be judged
	// (default 20); a quieter period counts as healthy but does not move
	// the baseline.
	MinSamples int
	// Baseline is the normal p99 latency. Zero means learned, from the
	// requests that ended (not those in flight, whose latency is not
	// known yet) in the periods that are not failing and have
	// MinSamples requests that ended: the p99 of the first of them (an
	// outage's timeouts or fast failures are not the normal; no period
	// is slow before it), then an average (weight 1/8) over them, a
	// slow one's p99 taken as the threshold they exceeded. So a p99
	// that settles higher (a release, a heavier mix of requests)
	// becomes the normal within a few periods and a level held by it
	// climbs back (so does one a client keeps high with requests the
	// service is slow to answer: see "What clients can do to it" in the
	// package documentation); a configured Baseline holds the level for
	// as long as the service stays slower.
	// A learned p99 is read from a histogram (the top of its bucket),
	// so it may be up to 25% above the true one (less a nanosecond: a
	// p99 of 2^20 ns is read as 2^20 + 2^18 − 1). Whether a period's
	// p99 exceeds LatencyFactor times the baseline in force when the
	// period began is decided exactly.
	Baseline time.Duration
	// IsError reports whether a response status counts as an error; the
	// default counts 5xx. It is never asked about a request whose client
	// went away before its handler ended: Controller.Handler and the
	// middleware's SetFeedback do not observe it (see "Requests whose
	// client leaves" in the package documentation).
	IsError func(status int) bool
	// Clock delimits the periods; the default is algorithms.SystemClock.
	// A clock set back before the start of the period in course (one
	// without monotonic readings, corrected) restarts that period at the
	// time it reads, its requests kept, and the requests in flight count
	// as begun at that time at the latest.
	Clock algorithms.Clock
	// Logger receives one record per change of level (Warn when lowered,
	// Info when raised), once the evaluation has set the limits of the
	// level, "ratekeeper: adaptive limit level", with the new
	// and the previous level as fractions of the configured limits
	// (limit_level, previous_level; not "level", which is the record's
	// own), the p99 of the requests that ended in the period, the
	// baseline, and its requests and errors (those that ended in the
	// period) and hung (those in flight at its end known over the
	// threshold, see "Requests that do not return" in
	// the package documentation); nil logs nothing (the middleware's
	// LogObserver logs the limits too). A SetLimit of the target that
	// fails in an evaluation a request made is logged there too, at
	// Error, "ratekeeper: adaptive limit not set", with the level and the
	// error ([Controller.Evaluate] returns it instead).
	Logger *slog.Logger
}

// permille is the unit of levels: 1000 is the configured limit.
const permille = 1000

// A Controller adjusts the limits of a Target from the latency and error
// rate of the requests it observes; see the package documentation. Build
// one with [New]. It is safe for concurrent use; observing a request costs
// a few atomic operations, and the evaluation at the end of a period (on
// the first request after it, or [Controller.Evaluate]) is serialised.
//
// An evaluation calls the Target's methods (and through a middleware's
// SetLimit its observers' ObserveLimit), the Config's Clock and its
// Logger's handler, and Apply the Target's methods, under the lock that
// serialises evaluations: they must not call Evaluate or Apply, which would
// wait for that lock for ever. They may call Observe, Begin, End and
// Refused (which count their request, if any, without waiting for the
// lock), Level and Baseline (but see ObserveLimit below). A panic of any
// of them reaches the caller of the evaluation (the request that made it,
// or Evaluate's or Apply's caller) with the lock released,
// and the periods judged before it are not judged again. A panic of the
// Logger's handler leaves the limits of the level set; one of a Target's
// method leaves the policies not set yet at their limits of before, until
// the evaluation at the end of the period in course sets them.
//
// An observer's ObserveLimit is called by every writer of the
// middleware's rules (a reload, a Fleet's update, a SetLimit of your
// own), under the middleware's lock (see middleware.Observer): there an
// Observe, Begin, End or Refused that finds a period ended or the rules
// replaced would evaluate, or apply the level, and wait for the
// middleware's lock for ever. From ObserveLimit, call only Level and
// Baseline.
type Controller struct {
	t                             Target
	cfg                           Config
	decrease, step, floor, factor int64 // permille
	// errRate is ErrorRate as the shortest decimal that reads back as
	// it (0.29 is 29/100, not the binary fraction just below), so that
	// "more than ErrorRate" is judged exactly, as written.
	errRate *big.Rat

	win     atomic.Pointer[window]
	origin  time.Time    // the clock at New
	startAt atomic.Int64 // starts as a Duration since origin, read without the lock
	endsAt  atomic.Int64 // ends as a Duration since origin, read without the lock
	seen    seen         // the target's rules at the last apply
	mu      sync.Mutex   // serialises evaluations; guards the fields below
	starts  time.Time    // start of the current period
	ends    time.Time    // end of the current period
	level   int64        // permille of the configured limit
	stable  int          // healthy periods in a row
	base    time.Duration

	// level and base as last set, for Level and Baseline, which take no
	// lock: they may be called from what an evaluation calls while it
	// holds mu (the middleware's observers, as it sets the limits; the
	// Logger's handler).
	levelNow, baseNow atomic.Int64

	// restarts counts the periods restarted by a clock set back (see
	// restart): a request that read the clock before one is counted in
	// the restarted period (see add).
	restarts atomic.Uint64

	// The requests in flight (see Begin), counted per slot of a
	// sixteenth of Period by when they began: cur is the slot in course;
	// flights, guarded by fmu, every slot that may have requests in
	// flight, oldest first, cur last.
	cur     atomic.Pointer[flight]
	fmu     sync.Mutex
	flights []*flight
	firsts  [][2]int64 // heldFrom's, kept between calls

	// records holds the Logger's records of the changes of level an
	// evaluation made, logged once it has set their limits; guarded by
	// mu.
	records []levelRecord
}

// flight counts the requests in flight that began in one slot of time
// [from, until) (Durations since origin), and when the last of them began
// (Duration since origin): each has been in flight at least since then.
type flight struct {
	n           atomic.Int64
	last        atomic.Int64
	from, until int64
	c           *Controller
}

// End counts a request that began in f's slot as over. As Begin and
// Observe do, it first evaluates the period if it ended: the request was
// in flight at its end, and a request no longer in flight when the period
// is judged (its client gone, which is not observed; a wait on its client
// begun) would not be counted in it.
func (f *flight) End() {
	// Deferred: counted out also when the evaluation panics (a Target's
	// SetLimit, a Logger's handler, the clock), or it would be in flight
	// for ever.
	defer f.n.Add(-1)
	f.c.maybeEvaluate(nil)
}

// New returns a Controller of t's limits with the thresholds of cfg; every
// invalid threshold is an error naming the field.
func New(t Target, cfg Config) (*Controller, error) {
	if nilness.Is(t) {
		return nil, errors.New("adaptive: target is nil")
	}
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	if cfg.Period == 0 {
		cfg.Period = time.Minute
	}
	def(&cfg.LatencyFactor, 2)
	def(&cfg.ErrorRate, 0.01)
	def(&cfg.Decrease, 0.8)
	def(&cfg.Step, 0.1)
	def(&cfg.Floor, 0.5)
	if cfg.StablePeriods == 0 {
		cfg.StablePeriods = 1
	}
	if cfg.MinSamples == 0 {
		cfg.MinSamples = 20
	}
	if cfg.IsError == nil {
		cfg.IsError = func(status int) bool { return status >= 500 }
	}
	if cfg.Clock == nil {
		cfg.Clock = algorithms.SystemClock
	} else if nilness.Is(cfg.Clock) {
		// A pointer clock never assigned: New would panic reading it.
		return nil, errors.New("adaptive: Config.Clock is nil")
	}
	switch {
	case cfg.Period < 0:
		return nil, errors.New("adaptive: Config.Period is negative")
	case !(cfg.LatencyFactor > 1):
		return nil, errors.New("adaptive: Config.LatencyFactor must be above 1")
	case !(cfg.ErrorRate > 0 && cfg.ErrorRate < 1):
		return nil, errors.New("adaptive: Config.ErrorRate must be between 0 and 1")
	case !(cfg.Decrease > 0 && cfg.Decrease < 1):
		return nil, errors.New("adaptive: Config.Decrease must be between 0 and 1")
	case !(cfg.Step > 0 && cfg.Step <= 0.1):
		return nil, errors.New("adaptive: Config.Step must be above 0 and at most 0.1")
	case !(cfg.Floor > 0 && cfg.Floor <= 1):
		return nil, errors.New("adaptive: Config.Floor must be above 0 and at most 1")
	case cfg.StablePeriods < 0:
		return nil, errors.New("adaptive: Config.StablePeriods is negative")
	case cfg.MinSamples < 0:
		return nil, errors.New("adaptive: Config.MinSamples is negative")
	case cfg.Baseline < 0:
		return nil, errors.New("adaptive: Config.Baseline is negative")
	}
	cfg.Policies = slices.Clone(cfg.Policies) // the caller's slice is the caller's
	for _, name := range cfg.Policies {
		if t.Configured(name) == nil {
			return nil, fmt.Errorf("adaptive: Config.Policies: no policy %q", name)
		}
	}
	c := &Controller{t: t, cfg: cfg, level: permille, base: cfg.Baseline,
		decrease: int64(math.Round(cfg.Decrease * permille)), step: int64(math.Round(cfg.Step * permille)),
		floor: int64(math.Round(cfg.Floor * permille)), factor: 1 << 62}
	if f := math.Round(cfg.LatencyFactor * permille); f < 1<<62 {
		c.factor = int64(f) // else 2^62 thousandths (and int64(f) undefined)
	}
	// The levels are thousandths of the configured limit: a threshold
	// that rounds to no change would never lower or never restore.
	switch {
	case c.factor <= permille:
		return nil, errors.New("adaptive: Config.LatencyFactor must round to at least 1.001 (thresholds are in thousandths)")
	case c.decrease >= permille:
		return nil, errors.New("adaptive: Config.Decrease must round to at most 0.999 (thresholds are in thousandths)")
	case c.step == 0:
		return nil, errors.New("adaptive: Config.Step must round to at least 0.001 (thresholds are in thousandths)")
	case c.floor == 0:
		return nil, errors.New("adaptive: Config.Floor must round to at least 0.001 (thresholds are in thousandths)")
	}
	c.errRate, _ = new(big.Rat).SetString(strconv.FormatFloat(cfg.ErrorRate, 'g', -1, 64)) // a number in (0, 1)
	c.publish()
	c.origin = cfg.Clock.Now()
	w := c.newWindow(c.origin, nil)
	c.win.Store(w)
	c.setPeriod(w)
	c.slot(0)
	return c, nil
}

// Level returns the level, the fraction of its configured limit that each
// controlled policy enforces (1 when unrestricted): rounded down to a
// whole limit, but not below Floor of it rounded up, nor below 1 (a
// configured 3 at level 0.8 enforces 2). It takes no lock: an observer of the middleware
// may call it from its ObserveLimit, which runs as the Controller sets
// the limits of a new level (and returns that level there).
func (c *Controller) Level() float64 {
	return float64(c.levelNow.Load()) / permille
}

// Baseline returns the baseline p99 latency (0 before it is learned). Like
// Level, it takes no lock.
func (c *Controller) Baseline() time.Duration {
	return time.Duration(c.baseNow.Load())
}

// publish makes the level and the baseline what Level and Baseline
// return. It requires c.mu.
func (c *Controller) publish() {
	c.levelNow.Store(c.level)
	c.baseNow.Store(int64(c.base))
}

// Observe records one handled request: how long it took and its status.
// A caller of its own should leave out, as Controller.Handler does, the
// requests whose client went away before their handler ended (see
// "Requests whose client leaves" in the package documentation), and
// still end their Begin. The request counts in the period of the instant
// Observe reads the clock at, even while the evaluation of an earlier
// period is pending (its goroutine paused); meanwhile, with a learned
// baseline (Baseline 0), each request observed after the end of the
// period pending keeps its latency (8 bytes) until that evaluation ends,
// to be judged against the threshold of the baseline it leaves. When the
// period has ended, the first call after it evaluates the period; when
// the target's rule set was replaced (a reload, or a limit set by
// another: a Fleet's, a SetLimit of your own), the first call after it
// looks under the lock whether the configured policies are new (a
// reload), and applies the current level to them if so (see
// [Controller.Apply]). Otherwise Observe takes no lock.
func (c *Controller) Observe(latency time.Duration, status int) {
	c.maybeEvaluate(&sample{latency: latency, isErr: c.cfg.IsError(status)})
}

// A sample is a request observed: how long it took, whether it failed.
type sample struct {
	latency time.Duration
	isErr   bool
}

// Begin records the start of a request that Observe will be told the end
// of, and returns what to call End on when it is over (observed or not):
// a request in flight for longer than the threshold (LatencyFactor times
// the baseline) is a slow sample of each period at whose end it is still
// in flight (see the package documentation, "Requests that do not
// return"). As Observe does, the first call after the period ended
// evaluates it, and so does End, before it counts the request out.
// Controller.Handler and the middleware's SetFeedback call
// it as each request begins, and again, after an End, as each wait of its
// handler on its client ends (see "What is measured" in the package
// documentation); a caller of Observe of its own may too.
func (c *Controller) Begin() interface{ End() } {
	gen := c.restarts.Load()
	now := c.maybeEvaluate(nil)
	f := c.enter(c.cur.Load(), int64(now.Sub(c.origin)))
	if c.restarts.Load() != gen {
		// A clock set back restarted the period since: now may be a
		// reading before it (this goroutine paused, the evaluation's
		// lock busy), ahead of the corrected clock, and the request
		// would not be known over the threshold before the clock came
		// back there. As restart does for the requests in flight, it
		// counts as begun at a reading after it at the latest. A
		// restart after the check lowers it itself.
		f.lower(int64(c.cfg.Clock.Now().Sub(c.origin)))
	}
	return f
}

// Refused records a request that the rate limiter answered itself (a
// 429, a key rejected, a 503 under FailClosed) instead of passing it to
// the service: neither a sample nor in flight, for it says nothing of the
// service's health, but a sign that time passes. As Observe and Begin do,
// the first call after a period ended judges the periods that ended, as
// Evaluate would at that instant (but for one made while another
// evaluation is under way, which returns at once: that evaluation judges
// them); when the target's rule set was replaced (a reload, or a limit
// set by another: a Fleet's, a SetLimit of your own), the first call
// after it looks under the lock whether the configured policies are new
// (a reload), and applies the current level to them if so. Otherwise it
// takes no lock and allocates nothing. The middleware calls it for each
// request it answers itself once the Controller is its Feedback
// (m.SetFeedback(ctrl), see middleware.Feedback), so that a lowered level
// that denies every request climbs back period by period while the
// service stays healthy (see "Periods no request judges" in the package
// documentation); a caller of Observe of its own may too. A failure of
// the target's SetLimit is logged, as for a request that evaluates.
func (c *Controller) Refused() { c.maybeEvaluate(nil) }

// dead is the count of a slot dropped from flights (see inFlightOver),
// and far below any count a slot in flights can reach: a Begin that loaded
// the slot before it was dropped finds its count below 0 after adding to
// it, and counts its request in the slot in course instead.
const dead = math.MinInt64 / 2

// enter counts a request begun at at (a Duration since origin) in flight,
// in f, the slot in course when Begin loaded it, or the slot of at, and
// returns the slot it counted it in.
func (c *Controller) enter(f *flight, at int64) *flight {
	for {
		if at < f.from || at >= f.until {
			f = c.slot(at)
		}
		if f.n.Add(1) > 0 {
			break
		}
		f = c.cur.Load() // dropped meanwhile: never the one in course
	}
	for {
		// The latest start (a lower bound of how long each of its
		// requests has been in flight). A request that began
		// before origin on a clock set back counts from origin's slot.
		last := f.last.Load()
		if at <= last || f.last.CompareAndSwap(last, at) {
			break
		}
	}
	return f
}

// slot returns the slot in course at at (a Duration since origin), made
// the current one if it is not.
func (c *Controller) slot(at int64) *flight {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	if f := c.cur.Load(); f != nil && at >= f.from && at < f.until {
		return f // another goroutine made it
	}
	f := &flight{c: c}
	f.from, f.until = slotOf(at, max(int64(c.cfg.Period)/16, 1))
	f.last.Store(math.MinInt64)
	c.flights = append(c.flights, f)
	c.cur.Store(f)
	return f
}

// slotOf returns the slot of size that holds at (Durations since origin),
// [from, until), cut short at either end of the int64s rather than
// overflowing: a clock set back before origin reads negative Durations.
func slotOf(at, size int64) (from, until int64) {
	mod := at % size
	if mod < 0 {
		mod += size // at's slot begins before at, toward the past
	}
	if at < math.MinInt64+mod {
		from = math.MinInt64
	} else {
		from = at - mod
	}
	if from > math.MaxInt64-size {
		return from, math.MaxInt64
	}
	return from, from + size
}

// inFlightOver returns how many requests in flight began more than over
// before at (a Duration since origin), after dropping the slots with none
// in flight but the current one, marked dead (see dead). It requires
// c.mu.
func (c *Controller) inFlightOver(over time.Duration, at int64) (n int64) {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	cur := c.cur.Load()
	kept := c.flights[:0]
	for _, f := range c.flights {
		k := f.n.Load()
		if f != cur && k == 0 && f.n.CompareAndSwap(0, dead) {
			continue // a Begin adding to it now counts in cur (see dead)
		}
		kept = append(kept, f)
		if over > 0 && longer(at, f.last.Load(), over) {
			n += k
		}
	}
	clear(c.flights[len(kept):])
	c.flights = kept
	return n
}

// heldFrom returns the first k >= 1 such that at least min requests in
// flight began more than over before at + k·period (at a Duration since
// origin): the first of the periods after the one ending at at whose end
// finds min of them known over the threshold over. It returns
// math.MaxInt64 when none does (within the int64s), or over is 0. It
// requires c.mu.
func (c *Controller) heldFrom(over time.Duration, at int64, period time.Duration, min int64) int64 {
	if over <= 0 {
		return math.MaxInt64
	}
	c.fmu.Lock()
	defer c.fmu.Unlock()
	c.firsts = c.firsts[:0]
	for _, f := range c.flights {
		if n, last := f.n.Load(), f.last.Load(); n > 0 && last != math.MinInt64 {
			c.firsts = append(c.firsts, [2]int64{firstOver(at, last, over, period), n})
		}
	}
	slices.SortFunc(c.firsts, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	var n int64
	for _, kn := range c.firsts {
		if n += kn[1]; n >= min {
			return kn[0]
		}
	}
	return math.MaxInt64
}

// firstOver returns the smallest k >= 1 such that more than over passed
// from last to at + k·period (Durations since origin), math.MaxInt64 when
// it is beyond the int64s.
func firstOver(at, last int64, over, period time.Duration) int64 {
	if longer(at, last, over) {
		return 1
	}
	// k·period must exceed gap = over − (at − last), at most over when
	// at > last (it is not longer), else over + (last − at).
	var gap uint64
	if at > last {
		gap = uint64(over) - (uint64(at) - uint64(last))
	} else {
		var carry uint64
		gap, carry = bits.Add64(uint64(over), uint64(last)-uint64(at), 0)
		if carry != 0 {
			return math.MaxInt64
		}
	}
	return int64(min(gap/uint64(period)+1, math.MaxInt64))
}

// longer reports whether more than d passed from from to to (Durations
// since origin, from math.MinInt64 for never), without overflow.
func longer(to, from int64, d time.Duration) bool {
	return from != math.MinInt64 && to > from && uint64(to)-uint64(from) > uint64(d)
}

// maybeEvaluate evaluates the period if it ended, taking c.mu unless it
// is busy, counts o (if not nil) in the period of the clock's first
// reading, and returns the clock's time.
func (c *Controller) maybeEvaluate(o *sample) time.Time {
	gen := c.restarts.Load()
	now := c.cfg.Clock.Now()
	// Measured from origin as now.Before(c.ends) measures: on the
	// monotonic clock when the times have one, not on the wall clock
	// (which may be set back or forward).
	since := now.Sub(c.origin)
	if since < time.Duration(c.endsAt.Load()) && since >= time.Duration(c.startAt.Load()) && !c.seen.moved(c.t) ||
		!c.mu.TryLock() {
		// Nothing to do, or another goroutine is at it: o counts in
		// its period, whether that one is judged yet or not.
		if o != nil {
			c.add(now, gen, o.latency, o.isErr)
		}
		return now
	}
	defer c.mu.Unlock()
	// Read again under the lock: a reading made before another goroutine
	// ended the period (a request descheduled between the two) is before
	// the new period's start and would pass for a clock set back,
	// restarting the period as early as it read.
	at := now
	now = c.cfg.Clock.Now()
	if restarted := c.restart(now); restarted || now.Before(c.ends) {
		if o != nil {
			if restarted {
				at = now // not a reading of the clock before it was set back
			}
			c.add(at, gen, o.latency, o.isErr)
		}
		if c.seen.reloaded(c.t) {
			c.logFailed(c.apply())
		}
		return now
	}
	// A request read before the period of now (this goroutine paused
	// between the two readings) counts in its own, judged now; else in
	// the period of now, once the periods before are judged (so that its
	// window has the threshold of the baseline they leave).
	if o != nil && at.Before(c.periodStart(c.ends, now)) {
		c.add(at, gen, o.latency, o.isErr)
		o = nil
	}
	err := c.evaluate(now)
	if o != nil {
		c.add(at, gen, o.latency, o.isErr)
	}
	c.logFailed(err)
	return now
}

// logFailed logs err, the failure of a SetLimit in an evaluation that a
// request made (Evaluate returns it to its caller instead), at Error on
// the Logger, if any: the limits stay where they were.
func (c *Controller) logFailed(err error) {
	if err == nil || c.cfg.Logger == nil {
		return
	}
	c.cfg.Logger.LogAttrs(context.Background(), slog.LevelError, "ratekeeper: adaptive limit not set",
		slog.Float64("limit_level", float64(c.level)/permille), slog.String("error", err.Error()))
}

// Evaluate ends the current period now if it is over, judging it and
// setting the limits; it is what a request arriving after the period does
// (one refused included, see [Controller.Refused]), for callers that want
// evaluations without traffic (call it from a ticker: see "Periods no
// request judges" in the package documentation).
// It returns the error of the first SetLimit that failed.
func (c *Controller) Evaluate() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Clock.Now()
	if c.restart(now) || now.Before(c.ends) {
		return nil
	}
	return c.evaluate(now)
}

// restart restarts the current period at now, its requests kept and
// those in flight begun at now at the latest, if now is before its start:
// a clock without monotonic readings was set back (a host's clock
// corrected). The period would otherwise end only when
// the clock came back to its end, as long after as the clock went back,
// holding the level where it is all that time. It reports whether it
// did. It requires c.mu.
func (c *Controller) restart(now time.Time) bool {
	if !now.Before(c.starts) {
		return false
	}
	// The windows not judged are sealed and their counts moved to the
	// restarted period's, linked after them: a request counted meanwhile
	// goes on to it (see add).
	c.restarts.Add(1) // before sealing: see add
	head := c.win.Load()
	nw := &window{slowOver: head.slowOver, from: now, until: now.Add(c.cfg.Period)}
	for w := head; ; {
		w.seal()
		nw.merge(w)
		if w.next.CompareAndSwap(nil, nw) {
			break
		}
		w = w.next.Load()
	}
	c.win.Store(nw)
	c.setPeriod(nw)
	// The requests in flight began, on the clock as it reads now, at the
	// latest now: else none would be known over the threshold before
	// the clock came back to where it was.
	at := int64(now.Sub(c.origin))
	c.fmu.Lock()
	defer c.fmu.Unlock()
	for _, f := range c.flights {
		f.lower(at)
	}
	return true
}

// lower makes at the latest start of f's requests if it is before the
// one recorded.
func (f *flight) lower(at int64) {
	for {
		last := f.last.Load()
		if last <= at || f.last.CompareAndSwap(last, at) {
			return
		}
	}
}

// merge adds the counts of v, sealed, to w's.
func (w *window) merge(v *window) {
	w.n.Add(v.n.Load())
	w.errs.Add(v.errs.Load())
	w.over.Add(v.over.Load())
	if v.prov.Load() {
		w.over.Add(v.overKept(w.slowOver))
	}
	for i := range w.buckets {
		w.buckets[i].Add(v.buckets[i].Load())
	}
}

// setPeriod makes w's the current period. It requires c.mu.
func (c *Controller) setPeriod(w *window) {
	c.starts, c.ends = w.from, w.until
	c.startAt.Store(int64(w.from.Sub(c.origin)))
	c.endsAt.Store(int64(w.until.Sub(c.origin)))
}

// evaluate judges the periods that ended by now, in order: those with a
// window (whose requests were observed in them) one by one, and those
// between them, which passed without requests; then applies the level.
// It requires c.mu.
func (c *Controller) evaluate(now time.Time) error {
	c.records = c.records[:0]
	w := c.win.Load()
	for !now.Before(w.until) {
		w.seal()
		w = c.judge(w, now)
	}
	err := c.apply()
	// Logged once the limits of the level are in force: a Logger's
	// handler that panics leaves them set, as Level reports them (and
	// reads the limits of the level it is told of).
	for _, r := range c.records {
		c.cfg.Logger.LogAttrs(context.Background(), r.lvl, "ratekeeper: adaptive limit level",
			slog.Float64("limit_level", float64(r.level)/permille), slog.Float64("previous_level", float64(r.old)/permille),
			slog.String("p99", r.p99.String()), slog.String("baseline", r.base.String()),
			slog.Int64("requests", r.n), slog.Int64("errors", r.errs), slog.Int64("hung", r.hung))
	}
	return err
}

// A levelRecord is what the Logger is told of a change of level.
type levelRecord struct {
	lvl           slog.Level
	level, old    int64 // permille
	p99, base     time.Duration
	n, errs, hung int64
}

// judge judges the period of w, sealed, and the idle ones that follow it
// up to the next window, which it makes the period in course and returns:
// the one of now's period, made if none is, or an earlier one. It
// requires c.mu.
func (c *Controller) judge(w *window, now time.Time) *window {
	// The requests in flight known over the threshold at the judged
	// period's end.
	endAt := int64(w.until.Sub(c.origin))
	hung := c.inFlightOver(w.slowOver, endAt)

	errs, over := w.errs.Load(), w.over.Load()
	n := w.n.Load() // after errs and over: see window.count
	old := c.level
	var p99 time.Duration
	slow, failing := false, false
	// The hung requests are samples over the threshold, of no status
	// yet (they exist only once the baseline is known).
	if samples := n + hung; samples >= int64(max(1, c.cfg.MinSamples)) {
		p99 = w.quantile(0.99)
		// Exact, unlike p99 (the upper bound of a histogram bucket): the
		// p99 (the sample of rank ceil(0.99n)) exceeds the threshold when
		// more than n−ceil(0.99n) samples do. A period judged before
		// the baseline is learned (the first that is not failing sets
		// it) is not slow.
		slow = w.slowOver > 0 && over+hung > samples-(samples*99+99)/100
		// Failing is judged on the requests that ended.
		failing = n > 0 && new(big.Rat).SetFrac64(errs, n).Cmp(c.errRate) > 0
		// The baseline is learned from the requests that ended, when
		// they are enough to judge a period alone: the hung ones have
		// no latency yet (taken as the threshold, a hang would raise
		// it by an eighth of it every period it lasts, and only when a
		// ticker judges them one by one). Nor is it learned from a
		// failing period, the first one included: an outage's latency
		// (its timeouts, or failures at once) is not the normal.
		if !failing && c.cfg.Baseline == 0 && n >= int64(max(1, c.cfg.MinSamples)) {
			if c.base == 0 {
				c.base = p99
			}
			// A slow period moves it too, toward the threshold it
			// exceeded (no faster than a healthy period can): else
			// a p99 settled above the threshold would be slow for
			// ever, holding a lowered level there.
			to := p99
			if w.slowOver > 0 && over > n-(n*99+99)/100 {
				to = w.slowOver
			}
			c.base += (to - c.base) / 8
		}
	}
	// The baseline published now: a window made from here on (the next
	// one) begins with the threshold of the baseline this period leaves.
	c.publish()
	next := c.following(w, now)
	if next.prov.Load() {
		// Made by a request before this judgment: its threshold is the
		// one of the baseline it leaves, as for a window made now.
		next.settle(time.Duration(mulPermille(int64(c.base), c.factor)))
	}
	c.win.Store(next)
	c.setPeriod(next)
	// The whole periods that passed, idle, between the one judged and
	// the next window: their length is at most the time between them,
	// so it does not overflow (the count of all the periods, times
	// Period, may: a Period of over 146 years).
	idle := int64(next.from.Sub(w.until) / c.cfg.Period)
	// The periods after the judged one passed without a request to end
	// or begin: healthy, as they are when a ticker's Evaluate judges them
	// one by one; but slow (holding the level) from the first whose end
	// finds at least MinSamples requests in flight known over the
	// threshold of the baseline it would have begun with.
	healthy := int64(0)
	switch {
	case slow && failing:
		c.level = max(c.floor, mulPermille(c.level, c.decrease))
		c.stable = 0
	case slow || failing:
		c.stable = 0
	default:
		healthy = 1
	}
	slowOver := time.Duration(mulPermille(int64(c.base), c.factor))
	if held := c.heldFrom(slowOver, endAt, c.cfg.Period, int64(max(1, c.cfg.MinSamples))); held <= idle {
		c.recover(healthy + held - 1)
		c.stable = 0
	} else {
		c.recover(healthy + min(idle, math.MaxInt64-1))
	}
	c.publish()
	if c.cfg.Logger != nil && c.level != old {
		lvl := slog.LevelInfo
		if c.level < old {
			lvl = slog.LevelWarn
		}
		if p99 == 0 && n > 0 {
			// Too few to judge the period, but they ended: the record
			// gives their p99, not 0s.
			p99 = w.quantile(0.99)
		}
		c.records = append(c.records, levelRecord{lvl: lvl, level: c.level, old: old, p99: p99, base: c.base, n: n, errs: errs, hung: hung})
	}
	return next
}

// following returns the window after w, sealed: the next one linked if
// its period begins no later than now's, else one of now's period made
// and linked before it. It requires c.mu.
func (c *Controller) following(w *window, now time.Time) *window {
	start := c.periodStart(w.until, now)
	for {
		nx := w.next.Load()
		if nx != nil && !start.Before(nx.from) {
			return nx
		}
		// w is sealed: only a request finding no window after it links
		// one (at nil), so the swap fails only for that.
		nw := c.newWindow(start, nx)
		if w.next.CompareAndSwap(nx, nw) {
			return nw
		}
	}
}

// recover counts n healthy periods in a row: one step up per
// StablePeriods of them, up to the configured limit. It takes the same time
// for any n (the clock may jump years ahead). It requires c.mu.
func (c *Controller) recover(n int64) {
	total := int64(c.stable) + min(n, math.MaxInt64-int64(c.stable))
	stable := int64(c.cfg.StablePeriods)
	if ups := total / stable; ups > 0 && c.level < permille {
		c.level = min(permille, c.level+min(ups, permille)*c.step)
	}
	// Once at the configured limit, the count no longer matters: only a
	// drop (which starts it again) leaves it.
	c.stable = int(total % stable)
}

// Apply sets the limit of every controlled policy for the current level
// now, without judging a period. Call it after a reload: the middleware
// carries the effective limit of a changed policy over only in proportion
// (rounded) and a new policy enters at its full configured limit, which
// it would enforce until the next request observed (see
// [Controller.Observe]) while the service is in trouble:
//
//	w, err := reload.New(path, func(cfg *policy.Config) error {
//		err := m.ApplyConfig(cfg) // nil, or ErrRestartNeeded: the new rules are in force
//		if err != nil && !errors.Is(err, middleware.ErrRestartNeeded) {
//			return err
//		}
//		if aerr := ctrl.Apply(); aerr != nil {
//			return aerr // a failure, whatever err was
//		}
//		return err
//	})
//
// Do not join the two errors: a reloader takes an error matching
// [policy.ErrRestartNeeded] (middleware.ErrRestartNeeded) for a reload
// applied, with a warning, and errors.Is finds it in a join beside
// Apply's error, which would then pass unnoticed.
func (c *Controller) Apply() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.apply()
}

// apply sets the limit of every controlled policy for the current level
// (also when unchanged: a reload may have reset it), again if a reload
// replaced the configured policies meanwhile. It requires c.mu.
func (c *Controller) apply() error { return c.seen.settle(c.t, c.setLimits) }

// setLimits sets the limits of apply once. It requires c.mu.
func (c *Controller) setLimits() error {
	names, conf := c.seen.start(c.t, c.cfg.Policies)
	var first error
	for _, name := range names {
		p := conf[name]
		if p == nil {
			continue // removed by a reload
		}
		conf := p.Spec().Limit
		limit := int64(0)
		if c.level < permille {
			// The level rounded down, but never below the floor rounded
			// up: Floor is the lowest effective limit.
			limit = max(1, mulPermille(conf, c.level), ceilPermille(conf, c.floor))
		}
		if err := c.t.SetLimit(name, limit); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// mulPermille returns v·p/1000 rounded down, saturating.
func mulPermille(v, p int64) int64 {
	hi, lo := bits.Mul64(uint64(v), uint64(p))
	if hi >= permille {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, permille)
	return int64(min(q, math.MaxInt64))
}

// ceilPermille returns v·p/1000 rounded up, saturating.
func ceilPermille(v, p int64) int64 {
	hi, lo := bits.Mul64(uint64(v), uint64(p))
	if hi >= permille {
		return math.MaxInt64
	}
	q, r := bits.Div64(hi, lo, permille)
	if r > 0 {
		q++
	}
	return int64(min(q, math.MaxInt64))
}

// Handler returns next wrapped so that every request it handles is
// observed: its latency (the Controller's clock, from the call to the
// return of next, less the time next waits on its client: reading the
// request body, writing the response; see "What is measured" in the
// package documentation) and status (200 unless next writes another; 500
// when it panics), and counted in flight while next runs but for those
// waits (see [Controller.Begin]); a request whose connection next hijacks
// is not observed, nor one whose client went away before next ended,
// whatever next answered (its context cancelled by net/http: see
// "Requests whose client leaves" in the package documentation), while one
// whose server-side deadline ran out is. Next's request is a copy whose
// Body is wrapped to time its reads (but for nil and http.NoBody). Put it
// inside the rate limiter, around the application: the requests the
// limiter rejects say nothing about the service's health (but their
// passing time does: inside the limiter, the Controller does not hear of
// them, see "Periods no request judges" in the package documentation).
// With this package's middleware, m.SetFeedback(ctrl) does the same
// without the wrapping (the middleware times the requests it passes on,
// on its own clock), and tells the Controller of the requests it refuses
// ([Controller.Refused]); not both, which would count every request
// twice, as it ends and in flight. It panics if next is nil, as
// [http.Handle] does.
func (c *Controller) Handler(next http.Handler) http.Handler {
	if nilness.Is(next) {
		panic("adaptive: Controller.Handler: next is nil")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		timing.Serve(w, r, next, c.cfg.Clock, c)
	})
}

// window counts one period's requests, [from, until), in a latency
// histogram with four buckets per power of two (each spanning a quarter of
// the power of two it splits: its top is less than 25% above its bottom),
// lock-free, and counts exactly those slower than slowOver, the threshold
// of the baseline the period before it leaves (LatencyFactor times the
// baseline; 0 while the baseline is unknown).
//
// The windows not judged yet form a list, from the Controller's win (the
// period in course as of the last evaluation) by next, in the order of
// their periods: a request observed after the end of the last one makes
// the window of its period there, without waiting for the evaluation of
// the ones before (see Controller.add), so that an evaluation pending (its
// goroutine descheduled, a VM paused) leaves each request in the period of
// the instant it was observed at. A window is made for a period only when
// a request is observed in it, or as the period in course: the periods
// without one were idle.
type window struct {
	n, errs, over atomic.Int64
	slowOver      time.Duration
	from, until   time.Time
	next          atomic.Pointer[window]
	// state counts the requests being counted in the window, or linking a
	// window after it, plus sealed once the evaluation judging it has
	// begun: then no request is counted in it any more, and none but the
	// evaluation links a window after it but at the end of the list.
	state atomic.Int64
	// A window a request made (see add) is provisional, unless Baseline
	// is configured, until the period before it is judged, which gives it
	// its threshold: meanwhile its
	// requests' latencies are kept in lats (provIn of them being added),
	// to be judged against it then (see settle).
	prov    atomic.Bool
	provIn  atomic.Int64
	lats    atomic.Pointer[latChunk]
	buckets [64 * 4]atomic.Int64
}

// latChunk holds latencies of a provisional window: n counts the slots
// taken (beyond len(v): full), next the chunk filled before.
type latChunk struct {
	n    atomic.Int64
	v    [128]time.Duration
	next *latChunk
}

// sealed marks a window's state once its evaluation has begun.
const sealed = 1 << 62

// newWindow returns a window of the period [from, from+Period) with the
// threshold of the baseline as last set (by the judgment of the period
// before it); next is what follows it. It requires c.mu.
func (c *Controller) newWindow(from time.Time, next *window) *window {
	w := &window{slowOver: time.Duration(mulPermille(c.baseNow.Load(), c.factor)), from: from, until: from.Add(c.cfg.Period)}
	w.next.Store(next)
	return w
}

// provisional returns the window of the period [from, from+Period) that
// a request makes: provisional, its threshold known once the periods
// before it are judged (see settle), unless Baseline is configured, which
// fixes every period's threshold (kept provisional, each of its requests
// would keep its latency for as long as the evaluation before it stays
// pending); next is what follows it.
func (c *Controller) provisional(from time.Time, next *window) *window {
	w := &window{from: from, until: from.Add(c.cfg.Period)}
	if c.cfg.Baseline > 0 {
		w.slowOver = time.Duration(mulPermille(int64(c.cfg.Baseline), c.factor))
	} else {
		w.prov.Store(true)
	}
	w.next.Store(next)
	return w
}

// settle gives w, provisional, its threshold slowOver, counting the
// requests kept over it. It requires c.mu.
func (w *window) settle(slowOver time.Duration) {
	w.slowOver = slowOver // before prov is cleared: read by count once it is
	w.prov.Store(false)
	for w.provIn.Load() != 0 {
		runtime.Gosched() // a count in course, a few operations
	}
	w.over.Add(w.overKept(slowOver))
	w.lats.Store(nil)
}

// overKept returns how many of the latencies kept by w, provisional until
// no request was adding any more, exceed slowOver (0: none).
func (w *window) overKept(slowOver time.Duration) (n int64) {
	if slowOver <= 0 {
		return 0
	}
	for k := w.lats.Load(); k != nil; k = k.next {
		for _, d := range k.v[:min(k.n.Load(), int64(len(k.v)))] {
			if d > slowOver {
				n++
			}
		}
	}
	return n
}

// periodStart returns the start of the period holding t, periods following
// one another from from (t at or after from); t itself when more than 2^63
// ns lie between them (the Duration saturated).
func (c *Controller) periodStart(from, t time.Time) time.Time {
	d := t.Sub(from)
	if d == math.MaxInt64 {
		return t
	}
	return from.Add(d / c.cfg.Period * c.cfg.Period) // at most d: no overflow
}

// enter reports whether w is not sealed, counting the caller in until it
// calls leave if so.
func (w *window) enter() bool {
	if w.state.Add(1)&sealed != 0 {
		w.state.Add(-1)
		return false
	}
	return true
}

func (w *window) leave() { w.state.Add(-1) }

// seal ends the counting in w: it waits for the requests being counted
// there (a few atomic operations each) to be. It requires c.mu.
func (w *window) seal() {
	w.state.Or(sealed)
	for w.state.Load()&^sealed != 0 {
		runtime.Gosched()
	}
}

// add counts a request observed at t that took latency d in the window of
// t's period: the first one not judged (a clock set back, a request whose
// period was judged while its goroutine was paused between its reading of
// the clock and the count, one that read the clock before a restart, gen
// being c.restarts before that reading), or one after it, made as the
// first request of its period if there is none.
func (c *Controller) add(t time.Time, gen uint64, d time.Duration, isErr bool) {
	w := c.win.Load()
	late := c.restarts.Load() != gen
	for {
		if !w.enter() {
			// Sealed by a restart (which counts itself first), t is a
			// reading of the clock before it was set back.
			late = late || c.restarts.Load() != gen
			// Judged, or being judged: the request counts in the window
			// after it; one is linked at the end of the list if none is.
			nx := w.next.Load()
			if nx == nil {
				from := w.until
				if late || t.Before(from) {
					late = true // the next period will do
				} else {
					from = c.periodStart(from, t)
				}
				w.next.CompareAndSwap(nil, c.provisional(from, nil))
				continue
			}
			late = late || t.Before(w.until)
			w = nx
			continue
		}
		if late || t.Before(w.until) {
			w.count(d, isErr)
			w.leave()
			return
		}
		// t is after w: its window follows, or is made there, while w
		// is not sealed (an evaluation waits, then moves past it).
		nx := w.next.Load()
		if nx == nil || t.Before(nx.from) {
			nw := c.provisional(c.periodStart(w.until, t), nx)
			if !w.next.CompareAndSwap(nx, nw) {
				w.leave()
				continue
			}
			nx = nw
		}
		w.leave()
		w = nx
	}
}

func bucket(d time.Duration) int {
	v := uint64(max(d, 1))
	e := bits.Len64(v) - 1
	if e < 2 {
		return int(v) - 1 // 1, 2, 3 ns: buckets 0..2 hold exact values
	}
	return 4*e + int(v>>(e-2)&3)
}

// upper returns the largest latency bucket i holds.
func upper(i int) time.Duration {
	if i < 8 {
		// Latencies below 4 ns have exact buckets 0..2; 3..7 are unused.
		return time.Duration(min(i+1, 3))
	}
	e, sub := i/4, i%4
	lo := uint64(1)<<e + uint64(sub)<<(e-2)
	return time.Duration(lo + uint64(1)<<(e-2) - 1)
}

// count counts a request that took d in w.
func (w *window) count(d time.Duration, isErr bool) {
	// n first: evaluate reads errs and over before n, so that a request
	// seen in either is in n too (one being added as the period is judged
	// cannot make it look slower or failing than it is).
	w.n.Add(1)
	w.buckets[bucket(d)].Add(1)
	if !w.kept(d) && w.slowOver > 0 && d > w.slowOver {
		w.over.Add(1)
	}
	if isErr {
		w.errs.Add(1)
	}
}

// kept reports whether w is provisional, keeping d among its latencies
// to be judged against its threshold once known (see settle) if so.
func (w *window) kept(d time.Duration) bool {
	if !w.prov.Load() {
		return false
	}
	w.provIn.Add(1)
	defer w.provIn.Add(-1)
	if !w.prov.Load() {
		return false // settled since: slowOver is known
	}
	w.keep(d)
	return true
}

// keep keeps d among the latencies of w, provisional.
func (w *window) keep(d time.Duration) {
	for {
		k := w.lats.Load()
		if k != nil {
			if i := k.n.Add(1) - 1; i < int64(len(k.v)) {
				k.v[i] = d
				return
			}
		}
		w.lats.CompareAndSwap(k, &latChunk{next: k})
	}
}

// quantile returns the upper bound of the bucket holding quantile q.
func (w *window) quantile(q float64) time.Duration {
	var total int64
	for i := range w.buckets {
		total += w.buckets[i].Load()
	}
	rank := int64(math.Ceil(q * float64(total)))
	var seen int64
	for i := range w.buckets {
		seen += w.buckets[i].Load()
		if seen >= rank && seen > 0 {
			return upper(i)
		}
	}
	return 0
}
