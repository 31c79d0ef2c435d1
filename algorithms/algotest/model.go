package algotest

import (
	"context"
	"fmt"
	"math/big"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// A Model is the reference implementation of the seven algorithms: slow,
// written straight from the semantics in the algorithms package
// documentation, with every quantity an exact rational (math/big). It shares
// no code with the stores it judges except Spec.Validate and Check.Validate,
// which define which checks are errors (the bound on checks of one key in
// one call, [algorithms.ValidateChecks], it reckons itself), and
// Check.Judged, which names the Spec a check is judged at.
//
// Every kind is described the same way: at instant t a key has a quantity
// used(t) in use out of its capacity C, which only falls while nothing
// arrives. A request of cost n is admitted when used(t)+n <= C (leaky_queue:
// when its wait, used(t)·W/L, is at most MaxDelay). The Decision fields
// follow from used alone:
//
//   - Remaining = floor(C − used) after the decision (leaky_queue: the number
//     of unit requests that could still be queued now);
//   - RetryAfter = the smallest wait d >= 1 ns after which the request would
//     be admitted;
//   - ResetAfter = the smallest wait after which used is 0, that is after
//     which the key is indistinguishable from a fresh one;
//   - NextAfter = the smallest wait after which Remaining is larger.
//
// Each kind computes "the first instant at which used <= x" in closed form;
// the package's own tests check those closed forms against a binary search
// over used, and the Decision fields against unit-by-unit simulation.
//
// Time may go back between calls, as the package documentation of
// algorithms describes: a window kind decides a request at an instant
// before the latest one its state knows of at that latest instant, and
// lengthens the durations by the difference; for the buckets and the queue
// an earlier instant is a larger deficit.
//
// Take is all or nothing, as the Store contract says: the checks are decided
// in order, each seeing what the earlier checks of the same call took, or
// would have taken had they been admitted, from the same (Spec, Key), with
// the RetryAfter of a denied one the wait for them all (see
// [algorithms.Decision]); if one is denied, nothing is consumed (see
// [Model.TakeAt] for what the Decisions of such a call report).
//
// A check judged at a limit of its own ([algorithms.Check.Limit]), below
// its Spec's or, for fixed_window, sliding_window and sliding_buckets,
// above it (up to algorithms.MaxLimit), is decided on the state of its
// (Spec, Key), which holds everything counted under Spec whatever the
// limit of the checks that counted it, as a check of the Spec
// [algorithms.Check.Judged] returns: its capacity C is the check's Limit.
// A window kind's used(t) does not depend on the limit (sliding_window's
// is prev·(W−e)/W + curr, whatever L), so it may be above C (Remaining 0),
// for a check at its Spec's own limit too once a raised one has counted
// past it, and the waits are until used falls to what C needs.
//
// A Model is safe for concurrent use (it holds one lock).
type Model struct {
	mu   sync.Mutex
	keys map[modelKey]machine
}

type modelKey struct {
	spec algorithms.Spec
	key  string
}

// NewModel returns an empty Model.
func NewModel() *Model { return &Model{keys: make(map[modelKey]machine)} }

// TakeAt decides checks at instant now, all or nothing. It returns the first
// validation error (from Check.Validate, or checks of one key that ask
// together for more than it can ever admit at once: see
// [algorithms.ValidateChecks]) without consuming anything.
//
// When every check is admitted, each Decision describes its key after this
// call's consumption up to and including that check. When one is denied the
// call consumes nothing: a denied check keeps its decision (made after the
// earlier checks of the call on the same key, as if they had been
// admitted, with the RetryAfter of one check of their combined cost);
// a check that passed keeps Allowed true — it is not the reason for the
// denial — but reports its key as it is, untouched, with Delay 0, as if it
// had been decided alone without consuming. This is what the in-memory store
// reports.
func (m *Model) TakeAt(now time.Time, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	if err := validate(checks); err != nil {
		return nil, err
	}
	t := now.UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()

	work, out, all := m.decideInOrder(t, checks)
	if all {
		for k, mc := range work {
			m.keys[k] = mc
		}
		return out, nil
	}
	m.denied(t, checks, work, out)
	return out, nil
}

// decideInOrder decides checks in order at t on copies of their keys'
// states, which it returns (work), so that a denied call consumes nothing,
// with a Decision for each and whether all are admitted. A check that
// follows others of the call on its key is decided as if they had been
// admitted just before it (a denied one is counted all the same), and when
// it is denied its RetryAfter is the smallest wait after which they and it
// would all be admitted: that of one check of their combined cost on the
// key's state before the call, since a retry counts the earlier checks at
// its own instant (for leaky_queue, until the backlog is at most the
// queue's slots less what they queue ahead of it). m.mu must be held.
func (m *Model) decideInOrder(t int64, checks []algorithms.Check) (map[modelKey]machine, []algorithms.Decision, bool) {
	work := make(map[modelKey]machine)
	ahead := make(map[modelKey]int64) // the cost of the earlier checks on each key
	out := make([]algorithms.Decision, len(checks))
	all := true
	for i, c := range checks {
		k := modelKey{c.Spec, c.Key}
		mc, ok := work[k]
		if !ok {
			mc = m.machineFor(k).clone()
			work[k] = mc
		}
		n := cost(c)
		out[i] = decideLate(c.Judged(), mc, t, n, true)
		if !out[i].Allowed {
			if a := ahead[k]; a > 0 {
				out[i].RetryAfter = repeatWait(c.Judged(), m.machineFor(k), t, a, n)
			}
			mc.consume(effective(mc, t), n) // as if admitted, for the checks after it
		}
		ahead[k] += n
		all = all && out[i].Allowed
	}
	return work, out, all
}

// repeatWait returns the smallest wait after t after which checks of cost
// ahead then n on one key, whose state before them is mc (left unchanged),
// are all admitted, the last judged at s (its Spec, or the one
// Check.Judged returns): used <= C − ahead − n (leaky_queue: a backlog of at
// most slots − ahead, when the last is queued), at or after the effective
// instant of t. The checks are within ValidateChecks' bound, so that
// threshold is not negative.
func repeatWait(s algorithms.Spec, mc machine, t, ahead, n int64) time.Duration {
	mc = mc.clone()
	te := effective(mc, t)
	mc.touch(te)
	x := ratInt(capacity(s) - ahead - n)
	if s.Algorithm == algorithms.LeakyQueue {
		x = sub(queueSlots(s), ratInt(ahead))
	}
	return time.Duration(mc.firstAtMost(te, x) - t)
}

// denied completes the decisions out of checks decided in order at t on
// the copies work, when one is denied. Nothing is consumed, but a held key
// has still been looked at (at its effective instant), which moves the
// instant it knows of. A denied check keeps its decision; one that passed
// reports the key as it is, as if decided alone, with Delay 0. m.mu must
// be held.
func (m *Model) denied(t int64, checks []algorithms.Check, work map[modelKey]machine, out []algorithms.Decision) {
	for k := range work {
		if mc, ok := m.keys[k]; ok {
			mc.touch(effective(mc, t))
		}
	}
	for i, c := range checks {
		if !out[i].Allowed {
			continue
		}
		d := decideLate(c.Judged(), m.machineFor(modelKey{c.Spec, c.Key}).clone(), t, cost(c), false)
		d.Delay = 0
		out[i] = d
	}
}

// Store returns a view of m as an algorithms.Store that reads clock once per
// call, for running the suite against the model itself. It honours a
// cancelled context (returning ctx.Err() and consuming nothing), and has a
// Close method after which calls fail with algorithms.ErrClosed.
func (m *Model) Store(clock algorithms.Clock) algorithms.Store {
	return modelStore{m: m, clock: clock, closed: new(atomic.Bool)}
}

type modelStore struct {
	m      *Model
	clock  algorithms.Clock
	closed *atomic.Bool
}

func (s modelStore) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	return s.m.TakeAt(s.clock.Now(), checks...)
}

// ready returns ctx's error, or algorithms.ErrClosed once the store is
// closed: what every call checks first.
func (s modelStore) ready(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return algorithms.ErrClosed
	}
	return nil
}

// Close makes later calls fail with algorithms.ErrClosed.
func (s modelStore) Close() error {
	s.closed.Store(true)
	return nil
}

func (m *Model) machineFor(k modelKey) machine {
	if mc, ok := m.keys[k]; ok {
		return mc
	}
	return newMachine(k.spec)
}

// validate returns the first invalid check's error (from Check.Validate),
// or the *algorithms.CostError of the first check that takes the checks of
// its (Spec, Key) up to it past what a fresh key admits in one call: each
// is decided as if the earlier ones had been admitted just before, so
// together they may use the capacity C the check is judged at (its
// Limit, when it has one: see algorithms.Check.Limit), and a leaky_queue request is
// queued while the units ahead of it wait at most MaxDelay (ahead·W/L <=
// MaxDelay), whatever its own cost.
func validate(checks []algorithms.Check) error {
	ahead := make(map[modelKey]int64)
	for _, c := range checks {
		if err := c.Validate(); err != nil {
			return err
		}
		k := modelKey{c.Spec, c.Key}
		before := ahead[k]
		ahead[k] = before + cost(c)
		if before == 0 {
			continue
		}
		fits := ahead[k] <= capacity(c.Judged())
		if c.Spec.Algorithm == algorithms.LeakyQueue {
			fits = ratInt(before).Cmp(queueSlots(c.Spec)) <= 0
		}
		if !fits {
			return &algorithms.CostError{Spec: c.Judged(), Cost: c.Cost, Combined: ahead[k]}
		}
	}
	return nil
}

func cost(c algorithms.Check) int64 {
	if c.Cost == 0 {
		return 1
	}
	return c.Cost
}

// A machine is the state of one (Spec, Key). Times are Unix nanoseconds.
type machine interface {
	// used returns the amount in use at t, for t at or after anchor (for
	// the buckets and the queue, at any t: an earlier t is a larger deficit).
	used(t int64) *big.Rat
	// firstAtMost returns the smallest instant t' >= t with used(t') <= x, for x >= 0.
	firstAtMost(t int64, x *big.Rat) int64
	// consume records an admitted request of cost n at t >= anchor.
	consume(t, n int64)
	// anchor returns the latest instant the state knows of, for the window
	// kinds (ok false when none, and always for the others): the start of
	// the key's window or sub-window, the newest logged request.
	anchor() (t int64, ok bool)
	// touch records that a call looked at the key at t >= anchor, admitted
	// or not: it changes nothing of any kind's state (the log and the
	// buckets change only when they count a request); it is kept as the
	// one place to say so.
	touch(t int64)
	clone() machine
}

// noAnchor is embedded by the kinds to which time going back is simply a
// larger deficit.
type noAnchor struct{}

func (noAnchor) anchor() (int64, bool) { return 0, false }
func (noAnchor) touch(int64)           {}

// effective returns the instant a call at t is decided at: t, or the
// latest instant the key knows of when that is later.
func effective(mc machine, t int64) int64 {
	if a, ok := mc.anchor(); ok && a > t {
		return a
	}
	return t
}

// decideLate decides at the effective instant of t, as the package
// documentation says of time that goes back: a request at an instant before
// the latest one a window kind's state knows of is decided at that instant,
// with its durations lengthened by the difference.
func decideLate(s algorithms.Spec, mc machine, t, n int64, consume bool) algorithms.Decision {
	te := effective(mc, t)
	mc.touch(te)
	d := decide(s, mc, te, n, consume)
	if off := time.Duration(te - t); off > 0 {
		if !d.Allowed {
			d.RetryAfter += off
		}
		if d.ResetAfter > 0 {
			d.ResetAfter += off
		}
		if d.NextAfter > 0 {
			d.NextAfter += off
		}
		if d.Delay > 0 {
			d.Delay += off
		}
	}
	return d
}

// capacity is Spec.Capacity, recomputed here from its definition.
func capacity(s algorithms.Spec) int64 {
	switch s.Algorithm {
	case algorithms.TokenBucket, algorithms.LeakyBucket:
		if s.Burst == 0 {
			return s.Limit
		}
		return s.Burst
	case algorithms.LeakyQueue:
		return floorRat(queueSlots(s)) + 1
	}
	return s.Limit
}

// queueSlots is MaxDelay·L/W, the backlog (in units) at which a leaky_queue
// still admits.
func queueSlots(s algorithms.Spec) *big.Rat {
	return new(big.Rat).Mul(frac(int64(s.MaxDelay), int64(s.Window)), ratInt(s.Limit))
}

// decide computes the Decision for one check of cost n at t on mc, consuming
// when admitted and consume is true.
func decide(s algorithms.Spec, mc machine, t, n int64, consume bool) algorithms.Decision {
	c := capacity(s)
	queue := s.Algorithm == algorithms.LeakyQueue
	var slots *big.Rat // leaky_queue only
	if queue {
		slots = queueSlots(s)
	}
	// threshold(n) is the largest used at which a cost-n request is admitted.
	threshold := func(n int64) *big.Rat {
		if queue {
			return slots
		}
		return ratInt(c - n)
	}
	remaining := func(u *big.Rat) int64 {
		if queue {
			if u.Cmp(slots) > 0 {
				return 0
			}
			return floorRat(sub(slots, u)) + 1
		}
		if u.Cmp(ratInt(c)) >= 0 {
			// More than empty (a clock years back at the highest rates):
			// C − used may not fit in an int64, as floorRat needs.
			return 0
		}
		return floorRat(sub(ratInt(c), u))
	}

	d := algorithms.Decision{Limit: c}
	u := mc.used(t)
	d.Allowed = u.Cmp(threshold(n)) <= 0
	if d.Allowed {
		if queue {
			// The wait is used·W/L.
			d.Delay = time.Duration(ceilRat(new(big.Rat).Mul(u, frac(int64(s.Window), s.Limit))))
		}
		if consume {
			mc.consume(t, n)
			u = mc.used(t)
		}
	} else {
		d.RetryAfter = time.Duration(mc.firstAtMost(t, threshold(n)) - t)
	}
	d.Remaining = remaining(u)
	d.ResetAfter = time.Duration(mc.firstAtMost(t, new(big.Rat)) - t)
	if r := d.Remaining; r < c {
		// Remaining grows past r when used <= C−r−1 (leaky_queue: slots−r).
		x := ratInt(c - r - 1)
		if queue {
			x = sub(slots, ratInt(r))
		}
		d.NextAfter = time.Duration(mc.firstAtMost(t, x) - t)
	}
	return d
}

func newMachine(s algorithms.Spec) machine {
	w := int64(s.Window)
	switch s.Algorithm {
	case algorithms.FixedWindow:
		return &fixedWindow{w: w}
	case algorithms.SlidingLog:
		return &slidingLog{w: w}
	case algorithms.SlidingWindow:
		return &slidingWindow{w: w}
	case algorithms.SlidingBuckets:
		return &slidingBuckets{size: w / int64(s.Buckets), n: int64(s.Buckets), counts: map[int64]int64{}}
	case algorithms.TokenBucket:
		return &tokenBucket{rate: frac(s.Limit, w), burst: capacity(s)}
	case algorithms.LeakyBucket:
		return &leakyBucket{rate: frac(s.Limit, w)}
	case algorithms.LeakyQueue:
		return &leakyQueue{rate: frac(s.Limit, w)}
	}
	panic(fmt.Sprintf("algotest: unknown kind %q", s.Algorithm)) // unreachable: checks are validated first
}

// fixedWindow: the count of window k = floor(t/W).
type fixedWindow struct {
	w, win, count int64
	held          bool // has admitted a request
}

func (m *fixedWindow) anchor() (int64, bool) { return m.win * m.w, m.held }
func (m *fixedWindow) touch(int64)           {}

func (m *fixedWindow) used(t int64) *big.Rat {
	if m.held && floorDiv(t, m.w) == m.win {
		return ratInt(m.count)
	}
	return new(big.Rat)
}

func (m *fixedWindow) firstAtMost(t int64, x *big.Rat) int64 {
	if m.used(t).Cmp(x) <= 0 {
		return t
	}
	return (m.win + 1) * m.w // the next window starts empty
}

func (m *fixedWindow) consume(t, n int64) {
	if k := floorDiv(t, m.w); k != m.win || !m.held {
		m.win, m.count = k, 0
	}
	m.count += n
	m.held = true
}

func (m *fixedWindow) clone() machine { c := *m; return &c }

// slidingLog: the accepted requests; one at ts counts while ts >= t−W.
type slidingLog struct {
	w      int64
	events []event // in order of ts; those that left the window when last looked at are gone
}

type event struct{ ts, n int64 }

func (m *slidingLog) used(t int64) *big.Rat {
	var sum int64
	for _, e := range m.events {
		if e.ts >= t-m.w {
			sum += e.n
		}
	}
	return ratInt(sum)
}

func (m *slidingLog) firstAtMost(t int64, x *big.Rat) int64 {
	u := m.used(t)
	if u.Cmp(x) <= 0 {
		return t
	}
	// Events leave the window oldest first, the one at ts at ts+W+1.
	for _, e := range m.events {
		if e.ts < t-m.w {
			continue
		}
		u = sub(u, ratInt(e.n))
		if u.Cmp(x) <= 0 {
			return e.ts + m.w + 1
		}
	}
	panic("algotest: sliding_log never drains") // unreachable for x >= 0
}

func (m *slidingLog) consume(t, n int64) {
	m.forget(t)
	m.events = append(m.events, event{t, n})
}

func (m *slidingLog) anchor() (int64, bool) {
	if len(m.events) == 0 {
		return 0, false
	}
	return m.events[len(m.events)-1].ts, true
}

// touch changes nothing: a call that logs nothing (a denied one, a peek,
// a give-back) forgets no event, for a request at an earlier instant (its
// clock read before the call's, or behind it) counts the events in its
// own window, at the instant it is decided at: those that left the
// window at the look's later instant included. The log forgets only when
// it logs (consume), at its new newest instant, before which no request
// is decided.
func (m *slidingLog) touch(int64) {}

// forget forgets the events that have left the window at t.
func (m *slidingLog) forget(t int64) {
	live := m.events[:0:0]
	for _, e := range m.events {
		if e.ts >= t-m.w {
			live = append(live, e)
		}
	}
	m.events = live
}

func (m *slidingLog) clone() machine {
	return &slidingLog{w: m.w, events: append([]event(nil), m.events...)}
}

// slidingWindow: the counts of windows k−1 and k, weighted by the share of
// window k−1 still inside the sliding window.
type slidingWindow struct {
	w, win, prev, curr int64
	held               bool // has admitted a request
}

func (m *slidingWindow) anchor() (int64, bool) { return m.win * m.w, m.held }
func (m *slidingWindow) touch(int64)           {}

// counts returns window k of t and the counts of windows k−1 and k.
func (m *slidingWindow) counts(t int64) (k, prev, curr int64) {
	k = floorDiv(t, m.w)
	if !m.held {
		return k, 0, 0
	}
	switch k {
	case m.win:
		return k, m.prev, m.curr
	case m.win + 1:
		return k, m.curr, 0
	}
	return k, 0, 0
}

func (m *slidingWindow) used(t int64) *big.Rat {
	k, prev, curr := m.counts(t)
	e := t - k*m.w
	// prev·(W−e)/W + curr
	return new(big.Rat).Add(new(big.Rat).Mul(ratInt(prev), frac(m.w-e, m.w)), ratInt(curr))
}

func (m *slidingWindow) firstAtMost(t int64, x *big.Rat) int64 {
	if m.used(t).Cmp(x) <= 0 {
		return t
	}
	k, prev, curr := m.counts(t)
	end := (k + 1) * m.w
	if ratInt(curr).Cmp(x) <= 0 {
		// Within window k: prev·(end−t')/W + curr <= x ⇔ t' >= end − (x−curr)·W/prev.
		// prev > 0 here, or used(t) = curr <= x.
		at := sub(ratInt(end), new(big.Rat).Mul(sub(x, ratInt(curr)), frac(m.w, prev)))
		return max(t, ceilRat(at))
	}
	// In window k+1, curr is the previous count: curr·(end+W−t')/W <= x.
	at := sub(ratInt(end+m.w), new(big.Rat).Mul(x, frac(m.w, curr)))
	return ceilRat(at)
}

func (m *slidingWindow) consume(t, n int64) {
	k, prev, curr := m.counts(t)
	m.win, m.prev, m.curr, m.held = k, prev, curr+n, true
}

func (m *slidingWindow) clone() machine { c := *m; return &c }

// slidingBuckets: counts of sub-windows j = floor(t/size); the window is the
// current sub-window and the n−1 before it.
type slidingBuckets struct {
	size, n int64
	counts  map[int64]int64
	last    int64 // the newest sub-window a request was counted in
	seen    bool
}

func (m *slidingBuckets) anchor() (int64, bool) { return m.last * m.size, m.seen }

// touch changes nothing: as for the log, a call that counts nothing
// (a denied one, a peek, a give-back) leaves the ring where it is, for a
// request at an earlier instant counts the sub-windows in its own window,
// at the instant it is decided at: those that left the window at the
// look's later instant included. The ring moves on only when a request
// is counted (consume), to its sub-window, before which no request is
// decided.
func (m *slidingBuckets) touch(int64) {}

func (m *slidingBuckets) used(t int64) *big.Rat {
	j := floorDiv(t, m.size)
	var sum int64
	for i := j - m.n + 1; i <= j; i++ {
		sum += m.counts[i]
	}
	return ratInt(sum)
}

func (m *slidingBuckets) firstAtMost(t int64, x *big.Rat) int64 {
	u := m.used(t)
	if u.Cmp(x) <= 0 {
		return t
	}
	// At the start of sub-window j', sub-window j'−n leaves.
	j := floorDiv(t, m.size)
	for jj := j + 1; ; jj++ {
		c := m.counts[jj-m.n]
		if c == 0 {
			continue // nothing leaves: used is unchanged (and above x)
		}
		u = sub(u, ratInt(c))
		if u.Cmp(x) <= 0 {
			return jj * m.size
		}
	}
}

func (m *slidingBuckets) consume(t, n int64) {
	j := floorDiv(t, m.size)
	if !m.seen || j > m.last {
		m.last, m.seen = j, true
	}
	for i := range m.counts {
		if i <= j-m.n {
			delete(m.counts, i)
		}
	}
	m.counts[j] += n
}

func (m *slidingBuckets) clone() machine {
	c := &slidingBuckets{size: m.size, n: m.n, counts: make(map[int64]int64, len(m.counts)), last: m.last, seen: m.seen}
	for k, v := range m.counts {
		c.counts[k] = v
	}
	return c
}

// tokenBucket: tokens refill at rate L/W per ns up to burst; full at first.
// used is burst − tokens.
type tokenBucket struct {
	noAnchor
	rate   *big.Rat
	burst  int64
	tokens *big.Rat // at last; nil: never used (full)
	last   int64
	note   *giveNote // the latest give-back that gave units back; nil: none
}

func (m *tokenBucket) tokensAt(t int64) *big.Rat {
	if m.tokens == nil {
		return ratInt(m.burst)
	}
	tok := new(big.Rat).Add(m.tokens, new(big.Rat).Mul(ratInt(t-m.last), m.rate))
	if tok.Cmp(ratInt(m.burst)) > 0 {
		return ratInt(m.burst)
	}
	return tok
}

func (m *tokenBucket) used(t int64) *big.Rat { return sub(ratInt(m.burst), m.tokensAt(t)) }

func (m *tokenBucket) firstAtMost(t int64, x *big.Rat) int64 {
	if m.used(t).Cmp(x) <= 0 {
		return t
	}
	// tokens + (t'−last)·rate >= burst − x
	need := sub(sub(ratInt(m.burst), x), m.tokens)
	return ceilRat(new(big.Rat).Add(ratInt(m.last), new(big.Rat).Quo(need, m.rate)))
}

func (m *tokenBucket) consume(t, n int64) {
	m.tokens = sub(m.tokensAt(t), ratInt(n))
	m.last = t
}

func (m *tokenBucket) clone() machine { c := *m; return &c }

// leakyBucket: a level that leaks at rate L/W per ns; empty at first.
type leakyBucket struct {
	noAnchor
	rate  *big.Rat
	level *big.Rat // at last; nil: empty
	last  int64
	note  *giveNote // the latest give-back that gave units back; nil: none
}

func (m *leakyBucket) used(t int64) *big.Rat {
	if m.level == nil {
		return new(big.Rat)
	}
	lv := sub(m.level, new(big.Rat).Mul(ratInt(t-m.last), m.rate))
	if lv.Sign() < 0 {
		return new(big.Rat)
	}
	return lv
}

func (m *leakyBucket) firstAtMost(t int64, x *big.Rat) int64 {
	if m.used(t).Cmp(x) <= 0 {
		return t
	}
	// level − (t'−last)·rate <= x
	return ceilRat(new(big.Rat).Add(ratInt(m.last), new(big.Rat).Quo(sub(m.level, x), m.rate)))
}

func (m *leakyBucket) consume(t, n int64) {
	m.level = new(big.Rat).Add(m.used(t), ratInt(n))
	m.last = t
}

func (m *leakyBucket) clone() machine { c := *m; return &c }

// leakyQueue: next is the instant the queue is free; requests leave 1/rate
// apart. used is the backlog in units, max(0, next−t)·rate.
type leakyQueue struct {
	noAnchor
	rate *big.Rat
	next *big.Rat // nil: never used
}

func (m *leakyQueue) used(t int64) *big.Rat {
	if m.next == nil {
		return new(big.Rat)
	}
	q := sub(m.next, ratInt(t))
	if q.Sign() < 0 {
		return new(big.Rat)
	}
	return q.Mul(q, m.rate)
}

func (m *leakyQueue) firstAtMost(t int64, x *big.Rat) int64 {
	if m.used(t).Cmp(x) <= 0 {
		return t
	}
	// (next−t')·rate <= x
	return ceilRat(sub(m.next, new(big.Rat).Quo(x, m.rate)))
}

func (m *leakyQueue) consume(t, n int64) {
	start := ratInt(t)
	if m.next != nil && m.next.Cmp(start) > 0 {
		start = m.next
	}
	m.next = new(big.Rat).Add(start, new(big.Rat).Quo(ratInt(n), m.rate))
}

func (m *leakyQueue) clone() machine { c := *m; return &c }

// Exact arithmetic helpers. big.Rat values are never mutated once shared.

func ratInt(a int64) *big.Rat { return new(big.Rat).SetInt64(a) }

func frac(a, b int64) *big.Rat { return big.NewRat(a, b) }

func sub(a, b *big.Rat) *big.Rat { return new(big.Rat).Sub(a, b) }

// floorRat returns floor(r); it must fit in an int64.
func floorRat(r *big.Rat) int64 {
	q := new(big.Int).Div(r.Num(), r.Denom()) // Euclidean: floor for a positive divisor
	return q.Int64()
}

// ceilRat returns ceil(r); it must fit in an int64.
func ceilRat(r *big.Rat) int64 { return -floorRat(new(big.Rat).Neg(r)) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
