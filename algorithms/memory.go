package algorithms

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ratekeeper/ratekeeper/internal/nilness"
)

// MemoryStore is the in-memory Store: the default, for one process.
//
// It keeps the state of each (Spec, Key) pair in one of up to 64 shards, each with
// its own mutex, so there is no global lock; a Take locks the shards of its
// checks in a fixed order and decides them all before changing any, so a
// denied Take consumes nothing and concurrent Takes never over-admit. Keys
// are held as 64-bit hashes under a per-store random seed: two distinct keys
// share state only on a hash collision, with probability about n²/2^65 among
// n live keys (3·10^-8 for a million), and an outsider cannot aim for one.
//
// The store reads its Clock once per call, before it takes any lock: a call
// that waits for a lock is decided at the instant it arrived, which can be
// slightly before the instant of a call that got the lock first (the kinds
// handle such an instant exactly, and a key that a sweep in between dropped
// as idle is decided at the instant it was idle from, when later; see
// "Time that goes back" in the package documentation). With the default [SystemClock] it reads only
// the monotonic clock, anchored to the wall clock when the store
// was made, which halves the cost of reading the time; windows stay aligned
// to the Unix epoch as the host clock was at that moment. (A host clock
// within a century of the end of Unix nanoseconds, in 2262, is read as an
// injected one is, and clamped: see "Instants" in the package
// documentation.)
//
// Idle keys — those back to their full allowance, whose state no longer
// changes any decision — are dropped lazily, with no goroutine: a shard
// sweeps itself each time its key count doubles, and [MemoryStore.Sweep]
// sweeps on demand.
//
// With [WithMaxKeys], a shard that is full makes room for a new key by
// evicting one of a random sample of its keys, drawn from every Spec it
// holds keys of: an idle one if the sample has one, otherwise the one of
// least weight, and of equal weights the one holding the fewest units (the
// first sampled of those that tie in both). A key's weight is the units it
// has in use times the share of the capacity it is reckoned at that they
// are, a share above 1 taken as 1: u·min(u, C)/C, so 100 of 100 weighs
// 100, 99 of 100 weighs 98.01, and 10 of 100 weighs 1, as much as 1 of 1
// (and holding more, outlasts it); a key counting past the capacity it is
// reckoned at weighs its units (see below). So a flood of new keys, each
// of which made one request (weighing 1/C, at most 1), evicts its own kind
// before a client that is actively being limited; and an attacker
// displaces a client only with keys that each weigh more, or as much and
// hold at least as many units, which takes at least the client's weight
// in units a key (a key weighs at most its units, whatever its Spec and
// the limits its checks are judged at): all it holds, for a client at its
// limit. Keys of a Spec of capacity 1, using
// all of it after one request each, displace only clients weighing less
// than 1 (holding less than the square root of their capacity: 9 of 100)
// or holding 1 of 1 (a tie in both). Against the share alone, weight
// favours the key holding more units, so keys of a Spec of larger capacity
// than a client's displace it holding less than all of theirs: 71 of 1000
// (5.041) outlasts 5 of 5 (5), which keys of a Spec of capacity 5 displace
// only at their limit, as under the share. And the store never refuses a
// new key. A key evicted while in use and made again is a new key to a
// GiveBack or Refund too: one of a Take from before the eviction gives it
// nothing (see [MemoryStore.GiveBack]).
//
// A key is reckoned at its Spec's capacity, or lower when its checks are
// judged at a limit lowered below its Spec's ([Check.Limit]). The store
// keeps no limit per key but, for each Spec in each shard, the lowest limit
// below the Spec's that a Take (TakeOne and TakeInto too, admitted or
// denied; not a Peek) judged one of its checks at, in each period of two of
// the Spec's windows (aligned to the Unix epoch), and reckons all the
// Spec's keys there at the lowest of the current period and the one before,
// or at the Spec's capacity when neither has one. A check judged at a
// lowered limit counts so for more than two windows and at most four, and a
// key's state is idle two windows after the check that last changed it at
// the latest: so while its state counts, a key is never reckoned at more
// than the limit its latest check was judged at (unless the clock goes back
// two windows or more). A client denied at a limit lowered to a tenth of
// its Spec's counts as using all of it, whatever checks at the Spec's own
// limit, on new keys or held ones, come meanwhile (a weight of the lowered
// limit). The other keys of its Spec and shard, checked in those periods
// at the Spec's limit or at a higher lowered one, are reckoned at the
// lowest too, as using more than they do (a key using 1 of 1000 beside one
// held to 10 counts as 1 of 10), but never as weighing more than their
// units (one using 40 of 1000 beside it weighs 40, not 160: a client at
// 100 of 100 of another Spec outlasts any number of such keys); with a
// limit raised back from 10 to 50, the keys are reckoned at 50 once no
// check at 10 is in either period.
//
// A check judged at a limit above its Spec's (fixed_window, sliding_window
// and sliding_buckets: see [Check.Limit]) records nothing: its key is
// reckoned at its Spec's capacity (or the lowest lowered limit, as above),
// and its state may count past that capacity: more than any key checked
// at its Spec's own limit can hold, weighing its units (150 of 100 weighs
// 150). So a client let past its Spec's limit by a raised one is the last
// of its Spec's keys to go, and an attacker displaces it only with keys
// that each hold 150 units or more, as for a client at a limit of 150;
// and keys of an attacker's own raised limit (a Spec of 10 raised to 1000,
// say) weigh their units too, so they displace a client only holding at
// least its weight in units each, as any other keys. A raised limit
// neither shortens a key's life (a key is idle when its counts have left
// the window, whatever the limit) nor lowers the capacity its Spec's
// other keys are reckoned at.
//
// Len never exceeds the bound (rounded up to a multiple of the number of
// shards, as WithMaxKeys says), except after a Take on more new and held
// keys of one shard than the shard's share of the bound, all of which it
// keeps; the shard's next new key brings it back within the bound.
//
// Memory: a key of the fixed-size kinds (fixed_window, sliding_window,
// token_bucket, leaky_bucket, leaky_queue) takes one 24-byte slot (its hash
// in one array, its state in another) of an open-addressing table kept 70%
// to 87.5% full, so 27 to 35 bytes per key over the table's growth cycle,
// plus the heap's rounding of each shard's two arrays (to whole 8 KB pages
// above 32 KB): 30 to 41 bytes per key from 8,000 keys up (31 with a million
// keys, BenchmarkMemoryPerKey in benchmarks/algorithms), up to about 42 in a store
// kept at its WithMaxKeys bound under churn (a deleted key leaves no
// tombstone; each shard's record of the keys it evicted in use, for
// GiveBack, adds up to 3 bytes per key of the bound, 6 for a bound below
// 32,768 keys: 40 in all with 64,000), and up to about 62 bytes for the
// keys of a table while it grows, until the old array is collected; a
// sweep that leaves a table less than a quarter full shrinks it back to
// 70%. A small store holds more per
// key: the store takes about 10 KB, and each Spec 20 to 40 KB more (its
// table in each shard that holds keys of it), so with the keys of one Spec
// about 50 bytes per key at 2,000 keys and 44 at 4,000. A key of sliding_log
// that holds one accepted instant in its window (most keys of a large key
// set: a client that made one request) takes what a key of the fixed-size
// kinds takes, its event held in its slot (31 bytes with a million keys
// held). A key that holds two or more distinct instants has them in a log
// of its own, about 56 bytes in an array per table (grown as append grows
// it), and 16 bytes per instant the log has room for: 2 at first, doubled
// as needed, so up to twice the most its window has held at once and
// never more than 16·Limit (about 90 to 110 bytes more than a key of one
// instant with two, 32 more with four). It keeps its log while in use,
// and goes back to its slot alone when a sweep or an eviction's sample
// finds it down to one (a give-back, when it leaves none). A key of sliding_buckets takes a slot of
// a key table, as the fixed-size kinds do, a ring of 4 bytes per bucket
// and its key's 8-byte hash, in arrays per table that grow by about a
// quarter at a time: 60 to 75 bytes with 4 buckets, 4 to 5 more per bucket
// (316 with 60 buckets and a million keys held). A token_bucket or
// leaky_bucket key whose latest GiveBack gave units back has, besides its
// slot, a note of it (see [GiveBacker.GiveBack]) in a map per table, a
// 40-byte value under its 8-byte hash (about 80 bytes with the map's
// overhead), for ceil(Burst·Window/Limit) after that give-back, and is not
// idle meanwhile; a key never given back holds none. Budget 70 bytes per key,
// times the bound, and 40 KB per Spec, for the fixed-size kinds and
// sliding_log keys of one instant. TestMemoryStorePerKeyFigures measures
// these.
//
// A MemoryStore is safe for concurrent use. Its zero value is not usable;
// call [NewMemoryStore].
type MemoryStore struct {
	clock Clock
	// With the system clock, the store reads the monotonic clock only
	// (one clock read instead of two), anchored to the wall clock at start.
	mono    bool
	base    time.Time
	baseNs  int64
	seed    maphash.Seed
	maxKeys int    // 0: unbounded
	perShrd int    // max keys per shard; 0: unbounded
	mask    uint64 // shards in use − 1: fewer shards for a small bound
	closed  atomic.Bool
	shards  [numShards]shard
}

const (
	numShards  = 64
	minSweep   = 512 // a shard sweeps itself first when it holds this many keys
	evictProbe = 8   // keys sampled to choose one to evict
	maxBatch   = 8   // checks in one Take decided without allocating
	// minPerShard is the fewest keys a shard holds under a bound, when the
	// bound allows: evicting among fewer would leave too little choice.
	minPerShard = 256
)

type shard struct {
	// What the lock guards is beside the lock.
	mu     sync.Mutex
	tables []*table
	keys   int
	// seen is the latest instant a Take on the shard was decided at (its
	// clock reading), or MinInt64: an eviction notes a key it forgets in
	// use at that instant when its own is earlier (see shard.evict). It is
	// written under the lock, on the lock's line, by every Take.
	seen int64
	// dropped is the latest instant from which the keys the shard dropped
	// were idle (a sweep, an idle key's eviction: see table.idleSince), or
	// at which it evicted a key in use: a key it does not hold is decided
	// no earlier, for it may be one dropped, idle from that instant and
	// perhaps not before (a call that read the clock before the sweep got
	// the lock). Not the drop's own instant: a clock stepped days ahead,
	// where a sweep found every key idle, and back would hold every key
	// new to the shard to windows days ahead.
	dropped int64
	// compactDue: a sweep left a table without keys, which the next
	// compaction drops (see compact).
	compactDue bool
	_          [64 - 57]byte
	// For single checks, without the lock (a table's spec and params never
	// change): last is the table added last, tried first, and list a copy
	// of tables, replaced when a table is added. They are 64 bytes
	// from the lock, so never on its cache line, which moves from CPU to
	// CPU with the lock while every CPU keeps a copy of theirs.
	last atomic.Pointer[table]
	list atomic.Pointer[[]*table]
	// idx finds a table by its Spec once the shard holds more than
	// scanTables (nil until then): a process whose limits change over
	// its life (reloads, adaptive limits, SetLimit) gathers tables, and a
	// scan of a thousand costs microseconds.
	idx atomic.Pointer[map[Spec]*table]
	// forgot records the keys the shard evicted whose state still
	// counted, at instants no earlier than every Take decided before (see
	// evict); nil until the shard first evicts one. A GiveBack or Refund
	// of a Take from before such an eviction of its key gives nothing to
	// the key (see forgotSince). Used under the lock only: the pointer,
	// written once, shares the lock-free pointers' line.
	forgot *forgotten
	// sweepAt is the key count at which the shard next sweeps itself,
	// read and written under the lock when a key enters: written by a
	// sweep only, so it may share the lock-free pointers' line.
	sweepAt int
	_       [64 - 40]byte
}

// scanTables is how many tables a shard looks through one by one; beyond,
// it looks them up by Spec (shard.idx).
const scanTables = 8

// table holds the keys of one Spec within a shard.
type table struct {
	spec Spec
	p    params
	fast fastKind // the single-check path's kind, an integer to switch on
	// dead: a compaction dropped the table from its shard (it held no
	// key). Read and written under the shard's lock: a call that found the
	// table without the lock looks its Spec up again (see live).
	dead  bool
	cells *keyTable
	logs  *logTable
	rings *ringTable
	// notes holds the bucketNote of each token_bucket or leaky_bucket key
	// of cells whose latest give-back gave units back, by key hash, nil
	// until one does. A key whose note is live is not idle (see idleAt);
	// a note goes with its key (removeAt), and a sweep drops the notes
	// that no longer count. Read and written under the shard's lock.
	notes map[uint64]bucketNote
	// The lowest limits below the Spec's that checks decided on the
	// table were judged at ([Check.Limit]), 0 for none: low in period
	// lowAt of two of the Spec's windows (from the Unix epoch), lowPrev
	// in the period before it (or earlier, for a clock that went back).
	// Eviction reckons the table's keys' weights against them (see judge
	// and reckoned). Read and written under the shard's lock; a check at
	// the Spec's limit touches none of them.
	low, lowPrev, lowAt int64
}

// A MemoryOption configures a MemoryStore.
type MemoryOption func(*MemoryStore) error

// WithClock makes the store read c instead of the system clock (tests,
// replays of recorded traffic).
func WithClock(c Clock) MemoryOption {
	return func(s *MemoryStore) error {
		if nilness.Is(c) {
			return errors.New("algorithms: WithClock: clock is nil")
		}
		s.clock = c
		return nil
	}
}

// WithMaxKeys bounds the number of keys the store holds to n (0, the
// default, means no bound). At the bound, a new key takes the place of one
// of a random sample of the keys of its shard: an idle one if the sample
// has one, else the one of least weight — the units u it has in use times
// its share u/C of the capacity C it is reckoned at (1 when above),
// u·min(u, C)/C, at most u — and of equal
// weights the one holding the fewest units. So a key is displaced only by
// keys that each weigh more, or as much and hold at least as many units:
// 100 of 100 (weighing 100) and 99 of 100 (98.01) outlast any number of
// keys using 1 of 1 (1), and 10 of 100 (1) outlasts them too, holding
// more. See [MemoryStore] for the details: the sample, the capacity a key
// is reckoned at, and what an evicted key's give-backs get.
// The bound is spread evenly over the shards (fewer of them for a bound below
// 64·256 keys), so it is rounded up to a multiple of their number.
func WithMaxKeys(n int) MemoryOption {
	return func(s *MemoryStore) error {
		if n < 0 {
			return fmt.Errorf("algorithms: WithMaxKeys: MaxKeys must not be negative, got %d", n)
		}
		s.maxKeys = n
		return nil
	}
}

// NewMemoryStore returns an empty MemoryStore reading the system clock.
func NewMemoryStore(opts ...MemoryOption) (*MemoryStore, error) {
	s := &MemoryStore{clock: SystemClock, seed: maphash.MakeSeed()}
	for _, o := range opts {
		if err := o(s); err != nil {
			return nil, err
		}
	}
	// A bound is spread over the shards; a small one uses fewer shards, so
	// that each holds enough keys for eviction to have a choice.
	shards := uint64(numShards)
	for s.maxKeys > 0 && shards > 1 && s.maxKeys/int(shards) < minPerShard {
		shards /= 2
	}
	s.mask = shards - 1
	if s.maxKeys > 0 {
		// Rounded up, without the sum that overflows near MaxInt.
		s.perShrd = s.maxKeys / int(shards)
		if s.maxKeys%int(shards) != 0 {
			s.perShrd++
		}
	}
	for i := range s.shards {
		s.shards[i].sweepAt = minSweep
		s.shards[i].dropped = math.MinInt64
		s.shards[i].seen = math.MinInt64
	}
	if s.clock == SystemClock {
		s.mono, s.base = true, time.Now()
		s.baseNs = s.base.UnixNano()
		// The monotonic clock's instants are not clamped: a host clock
		// that leaves them less than a century within the bounds reads
		// the wall clock, clamped, instead.
		if s.baseNs < minInstant || s.baseNs > maxInstant-monoSpan {
			s.mono = false
		}
	}
	return s, nil
}

// Close marks the store closed: later calls of every method that returns
// an error (Take, TakeOne, TakeInto, Peek, Refund, GiveBack, Reset) return
// ErrClosed; Len and Sweep still answer, and the keys are kept until the
// store is unreachable. The store has no goroutine to stop. Close is
// idempotent and always returns nil.
func (s *MemoryStore) Close() error {
	s.closed.Store(true)
	return nil
}

// Len returns the number of keys the store holds, idle ones included.
func (s *MemoryStore) Len() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n += sh.keys
		sh.mu.Unlock()
	}
	return n
}

// Sweep drops every idle key now and returns how many it dropped, and the
// storage of every Spec left without keys (which the store also drops by
// itself, once its own sweeps have emptied it, when a new Spec comes). The
// keys it keeps are left exactly as they were.
func (s *MemoryStore) Sweep() int {
	t := s.now()
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n += sh.sweep(t)
		sh.compact()
		sh.mu.Unlock()
	}
	return n
}

// Take implements Store.
func (s *MemoryStore) Take(ctx context.Context, checks ...Check) ([]Decision, error) {
	dst := make([]Decision, len(checks))
	if err := s.TakeInto(ctx, dst, checks); err != nil {
		return nil, err
	}
	return dst, nil
}

// TakeOne decides a single check without allocating (for a key already held).
// A check judged at a limit of its own ([Check.Limit]) on a held key is
// decided in place too, on its Spec's state, as a Take of several checks
// decides it; a new key's takes those steps.
func (s *MemoryStore) TakeOne(ctx context.Context, c Check) (d Decision, err error) {
	// ready and now, in line.
	if err := ctx.Err(); err != nil {
		return Decision{}, err
	}
	if s.closed.Load() {
		return Decision{}, ErrClosed
	}
	var t int64
	if s.mono {
		t = s.baseNs + int64(time.Since(s.base))
	} else {
		t = clampInstant(s.clock.Now().UnixNano())
	}
	h := s.hash(c.Key)
	sh := &s.shards[h&s.mask&(numShards-1)] // s.mask < numShards: no bounds check
	n := c.Cost
	if n == 0 {
		n = 1
	}
	// The common case in line: a held key of a fixed-size kind (the
	// shard's latest Spec tried first, without a call). For fixed_window,
	// sliding_window and the buckets, only the admission and the new state
	// are decided under the lock; the Decision's durations, which depend on
	// nothing else, are worked out after it.
	tb := sh.last.Load()
	if tb == nil || !sameSpec(&tb.spec, &c.Spec) {
		tb = sh.lookupList(&c.Spec)
	}
	// n < 1 || n > capacity in one comparison (capacity >= 1; n−1 wraps
	// to 2^63−1 for MinInt64).
	if tb == nil || c.Limit != 0 || uint64(n-1) >= uint64(tb.p.capacity) {
		if tb != nil && c.Limit != 0 {
			return s.takeOneJudged(sh, &c, tb, h, n, t)
		}
		return s.takeOne(sh, &c, tb, h, n, t)
	}
	sh.lockAt(t)
	if tb.dead {
		// A compaction dropped it since the lookup.
		sh.mu.Unlock()
		return s.takeLocked(sh, tb, h, n, t), nil
	}
	kt := tb.cells
	p := &tb.p
	if kt == nil {
		// sliding_log and sliding_buckets: a held key in place, with one
		// lookup of its key table; a new one through the batch's steps.
		var off int64
		switch {
		case tb.logs != nil:
			if i, held := tb.logs.kt.find(h); held {
				// Decided on a view: a denied Take forgets no event
				// (see slidingLog.view). A key in line is viewed
				// straight from its cell (see logView.view).
				var (
					v   slidingLog
					buf [1]logEvent
				)
				if c := tb.logs.kt.cs[i]; c.y == 0 {
					v.ev = buf[:]
					if c.x > 0 {
						off = max(c.t-t, 0)
						if c.t >= t+off-p.window {
							buf[0], v.n, v.sum = c.inline(), 1, int64(c.x)
						}
					}
				} else {
					lg := &tb.logs.logs[c.y-1]
					off = lg.latest(t) - t
					v = lg.view(p, t+off)
				}
				d = v.decide(p, t+off, n, true)
				if d.Allowed {
					tb.logs.commit(p, i, t+off, n)
				}
				sh.mu.Unlock()
				if off > 0 {
					d = d.later(off)
				}
				return d, nil
			}
		case tb.rings != nil:
			if i, held := tb.rings.kt.find(h); held {
				// Decided on a view: a denied Take rolls no ring
				// (see bucketsView).
				bk := tb.rings.load(i)
				off = bk.latest(p, t) - t
				v := bk.view(p, t+off)
				d = v.decide(&bk, p, t+off, n, true)
				if d.Allowed {
					bk.rollTo(p, v.j)
					bk.commit(p, n)
					tb.rings.store(i, &bk)
				}
				sh.mu.Unlock()
				if off > 0 {
					d = d.later(off)
				}
				return d, nil
			}
		}
		d = s.takeOneLog(sh, tb, h, n, t)
		sh.mu.Unlock()
		return d, nil
	}
	i, held := kt.find(h)
	if !held {
		d = s.takeCell(sh, tb, h, n, t)
		sh.mu.Unlock()
		return d, nil
	}
	cp := &kt.cs[i]
	cl := *cp
	var (
		ok, quick bool
		avail     int64
	)
	switch tb.fast {
	case fastFixed:
		if t < cl.t {
			d = s.takeCell(sh, tb, h, n, t)
			sh.mu.Unlock()
			return d, nil
		}
		cl, ok = p.fixedAdmit(cl, t, n, true)
	case fastSliding:
		if t < cl.t {
			d = s.takeCell(sh, tb, h, n, t)
			sh.mu.Unlock()
			return d, nil
		}
		// In line for a state in the window of t: with an empty
		// previous window (a first window), or with a count there that
		// the estimate weighs (a hot key's steady state).
		if cl.x == 0 {
			cl, ok, avail, quick = p.slidingAdmitQuick(cl, t, n)
		} else {
			cl, ok, avail, quick = p.slidingAdmitWeighed(cl, t, n)
		}
		if !quick {
			cl, ok, avail = p.slidingAdmit(cl, t, n, true)
		}
	case fastBucket:
		// In line for a window of a whole number of nanoseconds a unit.
		if quick = p.emR == 0; quick {
			cl, ok = p.bucketAdmitQuick(cl, t, n)
		} else {
			cl, ok = p.bucketAdmit(cl, t, n, true)
		}
	default:
		// leaky_queue, in one step (on a copy of its own: cl, whose
		// address is never taken, stays in registers for the others).
		lq := cl
		p.decideCell(&lq, t, n, true, &d)
		if d.Allowed {
			*cp = lq
		}
		sh.mu.Unlock()
		return d, nil
	}
	if ok {
		*cp = cl
	}
	sh.mu.Unlock()
	switch tb.fast {
	case fastFixed:
		p.fixedReport(&d, cl, t, ok)
	case fastSliding:
		switch {
		case !ok || !quick:
			p.slidingReport(&d, cl, t, n, ok, avail)
		case cl.x > 0:
			p.slidingReportWeighed(&d, cl, t, avail)
		default:
			p.slidingReportQuick(&d, cl, t, avail)
		}
	default:
		if ok && quick {
			p.bucketReportWhole(&d, cl, t) // admitted: not full, at most C in use
		} else {
			p.bucketReport(&d, cl, t, n, ok)
		}
	}
	return d, nil
}

// takeOneJudged is TakeOne for a check judged at a limit of its own
// ([Check.Limit]) of a Spec the shard has a table for (tb): a held key in
// place; the steps of a Take for a new key, an invalid check, a table a
// compaction dropped since the lookup, or a shard whose sweep emptied a
// table (they drop it first: it would shift where eviction's sample
// starts).
func (s *MemoryStore) takeOneJudged(sh *shard, c *Check, tb *table, h uint64, n, t int64) (Decision, error) {
	lim := c.Limit
	if n < 1 || n > lim || !tb.p.judgeable(lim) {
		return s.takeJudged(sh, c, h, t)
	}
	var (
		d    Decision
		held bool
	)
	sh.lockAt(t)
	if !tb.dead && !sh.compactDue {
		d, held = takeJudgedHeld(tb, h, n, lim, t)
	}
	sh.mu.Unlock()
	if !held {
		return s.takeJudged(sh, c, h, t)
	}
	return d, nil
}

// takeOne is TakeOne for a Spec the shard has no table for yet (tb nil),
// a cost out of range, or a check judged at a limit of its own.
func (s *MemoryStore) takeOne(sh *shard, c *Check, tb *table, h uint64, n, t int64) (Decision, error) {
	if c.Limit != 0 {
		return s.takeJudged(sh, c, h, t)
	}
	if tb == nil {
		sh.mu.Lock()
		if sh.compactDue {
			sh.compact()
		}
		var err error
		tb, err = sh.table(&c.Spec)
		sh.mu.Unlock()
		if err != nil {
			return Decision{}, err
		}
	}
	if n < 1 || n > tb.p.capacity {
		return Decision{}, &CostError{Spec: c.Spec, Cost: c.Cost}
	}
	return s.takeLocked(sh, tb, h, n, t), nil
}

// takeJudged is TakeOne for a check judged at a limit of its own
// ([Check.Limit]), through the steps of a Take of several checks: it
// validates c as [Check.Validate] does (the same error), and decides it
// at its limit on the state its Spec's table keeps for its key.
func (s *MemoryStore) takeJudged(sh *shard, c *Check, h uint64, t int64) (Decision, error) {
	sh.lockAt(t)
	defer sh.mu.Unlock()
	if sh.compactDue {
		sh.compact() // before the shard's table is looked up
	}
	tb, err := sh.table(&c.Spec)
	if err != nil {
		return Decision{}, err
	}
	if err := c.validateJudged(); err != nil {
		return Decision{}, err
	}
	var op pending
	op.init(tb, h, c.cost(), c.Limit)
	op.load(t, sh.dropped)
	op.decide(t, true)
	tb.judge(c.Limit, t+op.off) // admitted or not: the limit the key is held to
	if op.d.Allowed {
		s.commit(sh, &op, t, spare{})
	}
	return op.d, nil
}

// takeJudgedHeld decides a single check of cost n judged at lim (valid:
// 1 <= n <= lim, of a window kind, and lim at most the Spec's limit for
// sliding_log, MaxLimit for the others) at t on tb for the
// key of hash h, in place, when tb holds the key, as takeJudged would (the
// state viewed, decided and committed as pending's steps do for one check;
// the limit recorded for eviction, admitted or not); it reports false,
// deciding nothing, when tb does not hold the key. sh.mu must be held.
func takeJudgedHeld(tb *table, h uint64, n, lim, t int64) (d Decision, ok bool) {
	p := &tb.p
	jp := p.judged(lim)
	var off int64
	switch {
	case tb.logs != nil:
		i, held := tb.logs.kt.find(h)
		if !held {
			return Decision{}, false
		}
		lv := tb.logs.loadView(i)
		off = lv.latest(t) - t
		lv = lv.view(p, t+off)
		d = lv.decide(&jp, t+off, n, true)
		if d.Allowed {
			tb.logs.commit(p, i, t+off, n)
		}
	case tb.rings != nil:
		i, held := tb.rings.kt.find(h)
		if !held {
			return Decision{}, false
		}
		bk := tb.rings.load(i)
		off = bk.latest(p, t) - t
		v := bk.view(p, t+off)
		d = v.decide(&bk, &jp, t+off, n, true)
		if d.Allowed {
			bk.rollTo(p, v.j)
			bk.commit(p, n)
			tb.rings.store(i, &bk)
		}
	default:
		cp := tb.cells.get(h)
		if cp == nil {
			return Decision{}, false
		}
		nc := *cp
		jp.decideCell(&nc, t, n, true, &d)
		if d.Allowed {
			*cp = nc
		}
	}
	tb.judge(lim, t+off)
	if off > 0 {
		d = d.later(off)
	}
	return d, true
}

// takeLocked decides a single check of cost n (in range) at t on tb for
// the key of hash h, held or not, taking the shard's lock.
func (s *MemoryStore) takeLocked(sh *shard, tb *table, h uint64, n, t int64) (d Decision) {
	sh.lockAt(t)
	tb = sh.live(tb)
	if tb.cells != nil {
		d = s.takeCell(sh, tb, h, n, t)
	} else {
		d = s.takeOneLog(sh, tb, h, n, t)
	}
	sh.mu.Unlock()
	return d
}

// takeCell decides a single check of cost n (in range) at t on tb, a table
// of a fixed-size kind, for the key of hash h, held or not. sh.mu must be
// held.
func (s *MemoryStore) takeCell(sh *shard, tb *table, h uint64, n, t int64) (d Decision) {
	p := &tb.p
	kt := tb.cells
	if i, held := kt.find(h); held {
		cp := &kt.cs[i]
		cl := *cp
		p.decideCell(&cl, t, n, true, &d)
		if d.Allowed {
			*cp = cl
		}
		return d
	}
	tn := max(t, sh.dropped)
	cl := p.freshCell(tn)
	p.decideCell(&cl, tn, n, true, &d)
	if d.Allowed {
		s.makeRoom(sh, t, h, spare{})
		kt.put(h, cl)
	}
	if tn > t {
		d = d.later(tn - t)
	}
	return d
}

// takeOneLog decides a single check of sliding_log or sliding_buckets.
// sh.mu must be held.
func (s *MemoryStore) takeOneLog(sh *shard, tb *table, h uint64, n, t int64) Decision {
	var op pending
	op.init(tb, h, n, 0)
	op.load(t, sh.dropped)
	op.decide(t, true)
	if op.d.Allowed {
		s.commit(sh, &op, t, spare{})
	}
	return op.d
}

// TakeInto implements IntoStore: Take writing into dst, which must have
// len(checks) elements. It does not allocate for up to 8 checks on keys
// already held, but for a key named twice in one call whose state is
// copied for the second check: a sliding_buckets key, or a sliding_log key
// that has a log of its own (see MemoryStore) or holds in its slot an
// event in the window logged before the call's instant.
func (s *MemoryStore) TakeInto(ctx context.Context, dst []Decision, checks []Check) error {
	if len(dst) != len(checks) {
		return fmt.Errorf("algorithms: TakeInto: %d decisions for %d checks", len(dst), len(checks))
	}
	if len(checks) == 1 {
		d, err := s.TakeOne(ctx, checks[0])
		if err != nil {
			return err
		}
		dst[0] = d
		return nil
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	if len(checks) == 0 {
		return nil
	}
	return s.takeMany(dst, checks, s.now(), true)
}

func (s *MemoryStore) ready(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return ErrClosed
	}
	return nil
}

// hash returns the key's 64-bit hash under the store's seed, never 0 (the
// key table's mark of an empty slot). It is maphash.String's hash, through
// maphash.Bytes on the key's bytes in place (read only), which reaches the
// runtime's hash with one call less.
func (s *MemoryStore) hash(key string) uint64 {
	h := maphash.Bytes(s.seed, unsafe.Slice(unsafe.StringData(key), len(key)))
	if h == 0 {
		h = 1
	}
	return h
}

// takeMany decides a Take of several checks at t: in place when held
// allows and takeHeld can, else through decideMany's steps.
func (s *MemoryStore) takeMany(dst []Decision, checks []Check, t int64, held bool) error {
	var hbuf [maxBatch]uint64
	hs := hbuf[:0]
	if len(checks) > maxBatch {
		hs = make([]uint64, 0, len(checks))
	}
	var locked shardSet
	for i := range checks {
		h := s.hash(checks[i].Key)
		hs = append(hs, h)
		locked.add(h & s.mask)
	}
	for m := uint64(locked); m != 0; m &= m - 1 {
		sh := &s.shards[bits.TrailingZeros64(m)]
		sh.lockAt(t)
		if sh.compactDue {
			sh.compact() // before any of the shard's tables is looked up
		}
	}
	defer s.unlockShards(locked)
	if held && s.takeHeld(dst, checks, hs, t) {
		return nil
	}
	return s.decideMany(dst, checks, hs, t)
}

// takeHeld decides the checks of a Take the quick way when it can: every
// check on a key already held, of a kind with a single-check fast path (as
// TakeOne's), judged at a limit of its own ([Check.Limit]) only when of
// fixed_window or sliding_window (on params judged at that limit, as
// decideMany's steps decide it), no two on one key of one Spec, and every
// one admitted — the usual Take of stacked policies, lowered or not. It then records them all and writes their
// Decisions to dst, the same as decideMany's. Otherwise it changes nothing
// and reports false, and decideMany decides them. The checks' shards must
// be locked.
func (s *MemoryStore) takeHeld(dst []Decision, checks []Check, hs []uint64, t int64) bool {
	if len(checks) > maxBatch {
		return false
	}
	var (
		cps [maxBatch]*cell // where each check's state is held
		cls [maxBatch]cell  // its state after the check
		tbs [maxBatch]*table
		avs [maxBatch]int64 // sliding_window's units available after the check
		qs  [maxBatch]bool  // decided by TakeOne's in-line steps
	)
	for i := range checks {
		c := &checks[i]
		tb := s.shards[hs[i]&s.mask].lookup(&c.Spec)
		if tb == nil || tb.cells == nil {
			return false
		}
		p := &tb.p
		n := c.cost()
		if n < 1 || n > p.capacity && c.Limit == 0 {
			return false // decideMany reports it
		}
		var jp params
		if c.Limit != 0 {
			// Judged at a limit of its own: a window kind's counts
			// judged at it (see params.judged); an invalid one, or a
			// bucket kind's, is decideMany's.
			if tb.fast != fastFixed && tb.fast != fastSliding || n > c.Limit || !p.judgeable(c.Limit) {
				return false
			}
			jp = p.judged(c.Limit)
			p = &jp
		}
		k, held := tb.cells.find(hs[i])
		if !held {
			return false
		}
		cp := &tb.cells.cs[k]
		for j := range i {
			if cps[j] == cp {
				return false // one key of one Spec twice
			}
		}
		cl := *cp
		var ok, quick bool
		switch tb.fast {
		case fastFixed:
			if t < cl.t {
				return false
			}
			cl, ok = p.fixedAdmit(cl, t, n, true)
		case fastSliding:
			if t < cl.t {
				return false
			}
			// TakeOne's in-line steps for a state in the window of t (at
			// the Spec's limit or at the check's: they hold for any
			// limit, the counts at most it once admitted); the general
			// ones otherwise.
			if cl.x == 0 {
				cl, ok, avs[i], quick = p.slidingAdmitQuick(cl, t, n)
			} else {
				cl, ok, avs[i], quick = p.slidingAdmitWeighed(cl, t, n)
			}
			if !quick {
				cl, ok, avs[i] = p.slidingAdmit(cl, t, n, true)
			}
		case fastBucket:
			if quick = p.emR == 0; quick {
				cl, ok = p.bucketAdmitQuick(cl, t, n)
			} else {
				cl, ok = p.bucketAdmit(cl, t, n, true)
			}
		}
		if !ok {
			return false
		}
		cps[i], cls[i], tbs[i], qs[i] = cp, cl, tb, quick
	}
	for i := range checks {
		*cps[i] = cls[i]
		p, n := &tbs[i].p, checks[i].cost()
		if lim := checks[i].Limit; lim != 0 {
			tbs[i].judge(lim, t) // the limit the key is held to
			jp := p.judged(lim)
			p = &jp
		}
		switch tbs[i].fast {
		case fastFixed:
			p.fixedReport(&dst[i], cls[i], t, true)
		case fastSliding:
			switch {
			case !qs[i]:
				p.slidingReport(&dst[i], cls[i], t, n, true, avs[i])
			case cls[i].x > 0:
				p.slidingReportWeighed(&dst[i], cls[i], t, avs[i])
			default:
				p.slidingReportQuick(&dst[i], cls[i], t, avs[i])
			}
		case fastBucket:
			if qs[i] {
				p.bucketReportWhole(&dst[i], cls[i], t) // admitted: not full, at most C in use
			} else {
				p.bucketReport(&dst[i], cls[i], t, n, true)
			}
		}
	}
	return true
}

// decideMany decides the checks of a Take in general, one by one, then
// records them all if every one is admitted. hs are the checks' key hashes;
// their shards must be locked.
func (s *MemoryStore) decideMany(dst []Decision, checks []Check, hs []uint64, t int64) error {
	// ops starts zeroed (the array, or make's slice): each op's fields are
	// set one by one below, instead of writing whole pending values (about
	// 180 bytes each) over it again.
	var buf [maxBatch]pending
	var ops []pending
	if len(checks) <= maxBatch {
		ops = buf[:len(checks)]
	} else {
		ops = make([]pending, len(checks))
	}
	for i := range ops {
		ops[i].h = hs[i]
	}
	// Past pairwiseChecks checks, maps find the checks on one key
	// (see pairwiseChecks).
	dups, rp := newDups(len(checks)), newRepeats(len(checks))
	for i := range checks {
		op := &ops[i]
		sh := &s.shards[op.h&s.mask]
		tb, err := sh.table(&checks[i].Spec)
		if err != nil {
			return err
		}
		n, err := tb.cost(&checks[i])
		if err != nil {
			return err
		}
		op.tb, op.n, op.lim = tb, n, checks[i].Limit
		op.dup = dups.find(ops, i)
		// Checks of one key that it could never admit together are an
		// error (see ValidateChecks), found before any key is read. (No
		// check before on op's key and table, none on its Key and Spec.)
		if op.dup >= 0 || rp.ahead != nil {
			if err := rp.check(checks, i); err != nil {
				return err
			}
		}
	}
	allowed := true
	for i := range ops {
		op := &ops[i]
		if op.dup >= 0 {
			op.follow(&ops[op.dup], t)
		} else {
			op.load(t, s.shards[op.h&s.mask].dropped)
		}
		op.decide(t, true)
		// Admitted or not, the limit the key is held to; the lowest of
		// those of the Take's checks on one table holds.
		op.tb.judge(op.lim, t+op.off)
		allowed = allowed && op.d.Allowed
	}
	if !allowed {
		// Nothing is consumed: the checks that would pass report the state
		// as it is, as if each had been decided alone.
		for i := range ops {
			if ops[i].d.Allowed {
				alone(ops, i, t)
			}
		}
	}
	for i := range ops {
		dst[i] = ops[i].d
	}
	if allowed {
		for i := range ops {
			op := &ops[i]
			s.commit(&s.shards[op.h&s.mask], op, t, spare{ops, dups.last})
		}
	}
	return nil
}

// dups finds, for each of the pending checks of one call in order, the
// latest check before it on the same key (hash) and table: pair by pair
// for up to pairwiseChecks checks, past that in a map.
type dups struct {
	last map[dupKey]int // nil: pair by pair
}

type dupKey struct {
	tb *table
	h  uint64
}

// newDups returns the dups of a call of n checks.
func newDups(n int) dups {
	if n <= pairwiseChecks {
		return dups{}
	}
	return dups{last: make(map[dupKey]int, n)}
}

// find returns the index of the latest of ops[:i] on the key and table of
// ops[i], or -1. Past pairwiseChecks checks it must be called for every
// i, in order.
func (d *dups) find(ops []pending, i int) int {
	op := &ops[i]
	if d.last == nil {
		for j := i - 1; j >= 0; j-- {
			if ops[j].tb == op.tb && ops[j].h == op.h {
				return j
			}
		}
		return -1
	}
	k := dupKey{op.tb, op.h}
	j, ok := d.last[k]
	d.last[k] = i
	if !ok {
		return -1
	}
	return j
}

// spare is the checks of a Take making room for its new keys, which
// eviction spares: ops, and past pairwiseChecks checks the set of their
// tables and key hashes (dups.last, of every check once all are
// decided), so that telling a key of theirs takes no search of them all
// for each key sampled (TestManyChecksLinear/TakeAtBound).
type spare struct {
	ops []pending
	set map[dupKey]int // nil: search ops
}

// has reports whether a check of sp is on the key of hash h in tb.
func (sp spare) has(tb *table, h uint64) bool {
	if sp.set != nil {
		_, ok := sp.set[dupKey{tb, h}]
		return ok
	}
	for i := range sp.ops {
		if sp.ops[i].tb == tb && sp.ops[i].h == h {
			return true
		}
	}
	return false
}

// A shardSet is a set of shard indexes, one bit each (numShards is at
// most 64). A call on several keys locks their shards in increasing index
// order, whatever the order of its checks, so that two calls never wait
// on each other's locks.
type shardSet uint64

// The shard indexes fit a shardSet.
const _ = uint(64 - numShards)

// add adds shard index i.
func (ss *shardSet) add(i uint64) { *ss |= 1 << i }

// lockShards locks the shards of ss, in increasing index order.
func (s *MemoryStore) lockShards(ss shardSet) {
	for m := uint64(ss); m != 0; m &= m - 1 {
		s.shards[bits.TrailingZeros64(m)].mu.Lock()
	}
}

// unlockShards unlocks the shards of ss.
func (s *MemoryStore) unlockShards(ss shardSet) {
	for m := uint64(ss); m != 0; m &= m - 1 {
		s.shards[bits.TrailingZeros64(m)].mu.Unlock()
	}
}

// table returns the shard's table for spec, creating it (after validating
// spec) if needed. sh.mu must be held.
func (sh *shard) table(spec *Spec) (*table, error) {
	// Under the lock the published view is sh.tables (see publish).
	if tb := sh.lookupList(spec); tb != nil {
		return tb, nil
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	tb := &table{spec: *spec, p: newParams(*spec)}
	switch spec.Algorithm {
	case FixedWindow:
		tb.fast = fastFixed
	case SlidingWindow:
		tb.fast = fastSliding
	case TokenBucket, LeakyBucket:
		tb.fast = fastBucket
	}
	switch spec.Algorithm {
	case SlidingLog:
		tb.logs = newLogTable()
	case SlidingBuckets:
		tb.rings = newRingTable(tb.p.buckets)
	default:
		tb.cells = newKeyTable()
	}
	sh.tables = append(sh.tables, tb)
	sh.publish()
	sh.last.Store(tb)
	return tb, nil
}

// publish makes sh.tables what the lookups without the lock see: the list,
// and the index beyond scanTables. sh.mu must be held.
func (sh *shard) publish() {
	list := slices.Clone(sh.tables)
	sh.list.Store(&list)
	if len(list) > scanTables {
		m := make(map[Spec]*table, len(list))
		for _, t := range list {
			m[t.spec] = t
		}
		sh.idx.Store(&m)
	} else {
		sh.idx.Store(nil)
	}
}

// compact drops the tables of sh that hold no key: a process whose limits
// change over its life (reloads, adaptive limits, SetLimit) would
// otherwise keep a table per Spec it ever used. It runs only where the
// caller holds no table of the shard (Sweep, a single check's new table,
// the start of a Take of several checks); a call that found a table without
// the lock checks, once it has the lock, that it is still live (see live).
// sh.mu must be held.
func (sh *shard) compact() {
	sh.compactDue = false
	live := make([]*table, 0, len(sh.tables))
	for _, tb := range sh.tables {
		if tb.empty() {
			tb.dead = true
			continue
		}
		live = append(live, tb)
	}
	if len(live) == len(sh.tables) {
		return
	}
	sh.tables = live
	sh.publish()
	if last := sh.last.Load(); last != nil && last.dead {
		if len(live) > 0 {
			sh.last.Store(live[len(live)-1])
		} else {
			sh.last.Store(nil)
		}
	}
}

// len returns how many keys tb holds.
func (tb *table) len() int { return tb.slots().len() }

// slots returns the key table of tb's keys: its cells, or the table of
// its logs (sliding_log) or of its rings (sliding_buckets).
func (tb *table) slots() *keyTable {
	switch {
	case tb.logs != nil:
		return tb.logs.kt
	case tb.rings != nil:
		return tb.rings.kt
	}
	return tb.cells
}

// idleAt reports whether the key in slot i of tb.slots() is idle at t:
// forgetting it changes no decision.
func (tb *table) idleAt(i int, t int64) bool {
	if tb.logs != nil {
		return tb.logs.used(&tb.p, i, t) == 0
	}
	if tb.rings != nil {
		c := tb.rings.kt.cs[i]
		s := slidingBuckets{last: c.t, sum: int64(c.x)} // all idle reads
		return s.idle(&tb.p, t)
	}
	if !tb.p.idleCell(tb.cells.cs[i], t) {
		return false
	}
	// A bucket key's live note still counts (see bucketNote): kept.
	nt, ok := tb.notes[tb.cells.hs[i]]
	return !ok || !tb.p.noteLive(nt.g, t)
}

// usedAt returns how much of its capacity the key in slot i of
// tb.slots() has in use at t.
func (tb *table) usedAt(i int, t int64) int64 {
	if tb.logs != nil {
		return tb.logs.used(&tb.p, i, t)
	}
	if tb.rings != nil {
		bk := tb.rings.load(i)
		return bk.used(&tb.p, t)
	}
	return tb.p.usedCell(tb.cells.cs[i], t)
}

// judge records that a check judged at limit l ([Check.Limit]; 0 for its
// Spec's) was decided on tb at u, the instant its key's state was decided
// at, admitted or not. Eviction reckons the weights of tb's keys against
// the lowest limit below the Spec's that checks were judged at in the
// current or the previous period of two of the Spec's windows (see
// reckoned): a key's state last changed at u is idle two windows later
// (one, but for sliding_window), and until then u is in one of those two
// periods. A check at the Spec's own limit, or above it, records nothing
// and ends nothing: were it to set the reckoning back, a flood of new
// keys of the Spec, checked at its own limit, would set it back for the
// client held to a lowered limit that each of them makes room beside (a
// key that a raised limit let count past the capacity has a share above
// 1 instead: see MemoryStore). sh.mu must be held.
func (tb *table) judge(l, u int64) {
	if l == 0 || l >= tb.p.capacity {
		return
	}
	k := floorDiv(u, 2*tb.p.window)
	switch {
	case (tb.low == 0 && tb.lowPrev == 0) || k > tb.lowAt+1:
		tb.low, tb.lowPrev, tb.lowAt = l, 0, k
	case k == tb.lowAt+1:
		tb.low, tb.lowPrev, tb.lowAt = l, tb.low, k
	case k == tb.lowAt:
		tb.low = lowest(tb.low, l)
	default:
		// An earlier period (a clock that went back): kept with the
		// previous one, at least as long as its own would be.
		tb.lowPrev = lowest(tb.lowPrev, l)
	}
}

// lowest returns the lower of a recorded limit a (0 for none) and l >= 1.
func lowest(a, l int64) int64 {
	if a == 0 {
		return l
	}
	return min(a, l)
}

// reckoned returns the capacity eviction reckons the weights of tb's keys
// against at t: the lowest limit below the Spec's that checks decided on
// tb were judged at in the period of two of its windows holding t or the
// one before (or later ones, for a clock that went back; see judge), or
// else the Spec's capacity. sh.mu must be held.
func (tb *table) reckoned(t int64) int64 {
	c := tb.p.capacity
	if tb.low == 0 && tb.lowPrev == 0 {
		return c
	}
	k := floorDiv(t, 2*tb.p.window)
	if tb.low != 0 && tb.lowAt >= k-1 {
		c = min(c, tb.low)
	}
	if tb.lowPrev != 0 && tb.lowAt >= k {
		c = min(c, tb.lowPrev)
	}
	return c
}

// removeAt deletes the key in slot i of tb.slots() (and its log or ring).
func (tb *table) removeAt(i int) {
	switch {
	case tb.logs != nil:
		tb.logs.removeAt(i)
	case tb.rings != nil:
		tb.rings.removeAt(i)
	default:
		if tb.notes != nil {
			delete(tb.notes, tb.cells.hs[i])
		}
		tb.cells.removeAt(i)
	}
}

// shrink gives memory back when tb.slots() is less than a quarter full.
func (tb *table) shrink() {
	switch {
	case tb.logs != nil:
		tb.logs.shrink()
	case tb.rings != nil:
		tb.rings.shrink()
	default:
		tb.cells.shrink()
	}
}

// empty reports whether tb holds no key.
func (tb *table) empty() bool { return tb.len() == 0 }

// live returns tb, a table of sh found without the lock, or when a
// compaction has dropped it since, the shard's table of its Spec now,
// made anew. sh.mu must be held.
func (sh *shard) live(tb *table) *table {
	if !tb.dead {
		return tb
	}
	tb, _ = sh.table(&tb.spec) // valid: it had a table
	return tb
}

// liveOrNil is live without making a table: nil when the shard has none
// of tb's Spec now. sh.mu must be held.
func (sh *shard) liveOrNil(tb *table) *table {
	if !tb.dead {
		return tb
	}
	return sh.lookupList(&tb.spec)
}

// lookup returns the shard's table for spec, or nil if there is none yet,
// without the lock.
func (sh *shard) lookup(spec *Spec) *table {
	if tb := sh.last.Load(); tb != nil && sameSpec(&tb.spec, spec) {
		return tb
	}
	return sh.lookupList(spec)
}

// lookupList is lookup without its first probe, the shard's latest table.
func (sh *shard) lookupList(spec *Spec) *table {
	if m := sh.idx.Load(); m != nil {
		return (*m)[*spec]
	}
	if list := sh.list.Load(); list != nil {
		for _, tb := range *list {
			if sameSpec(&tb.spec, spec) {
				return tb
			}
		}
	}
	return nil
}

// fastKind tells apart the kinds whose single checks on held keys are
// decided in two steps (admission under the lock, the Decision after it).
type fastKind uint8

const (
	fastNone fastKind = iota
	fastFixed
	fastSliding
	fastBucket
)

// sameSpec reports whether a and b are equal, cheaply when they are not: the
// numbers first, then the kind's length and its bytes' address (usually the
// same constant), and only then the first byte, which tells the known kinds
// apart, and the whole kind.
func sameSpec(a, b *Spec) bool {
	if a.Limit != b.Limit || a.Window != b.Window || a.Burst != b.Burst || a.Buckets != b.Buckets || a.MaxDelay != b.MaxDelay {
		return false
	}
	ka, kb := a.Algorithm, b.Algorithm
	if len(ka) != len(kb) {
		return false
	}
	if unsafe.StringData(string(ka)) == unsafe.StringData(string(kb)) {
		return true
	}
	return len(ka) == 0 || (ka[0] == kb[0] && ka == kb)
}

// cost returns c's cost, or the error of c's Limit or cost (a *SpecError
// or *CostError, as Check.Validate's) when they are out of range for tb,
// its Spec's table.
func (tb *table) cost(c *Check) (int64, error) {
	n := c.cost()
	if c.Limit != 0 {
		return n, c.validateJudged()
	}
	if n < 1 || n > tb.p.capacity {
		return 0, &CostError{Spec: c.Spec, Cost: c.Cost}
	}
	return n, nil
}

// commit applies op, an admitted check, to the store: it inserts the key if
// it is not held (making room first) and records the consumption. sp is
// the checks of the same Take, which eviction spares. A key op found held
// may be gone by now: a sweep made room for a new key of the same Take, and
// dropped it as idle; it is then inserted again, as a new key.
func (s *MemoryStore) commit(sh *shard, op *pending, t int64, sp spare) {
	tb := op.tb
	switch tb.p.kind {
	case SlidingLog:
		lt := tb.logs
		i, held := lt.kt.find(op.h)
		if !held {
			// A new key, or one a sweep made room for a new key of the
			// same Take with, dropped as idle: either way nothing it
			// logged is in the window at t+off.
			s.makeRoom(sh, t, op.h, sp)
			lt.put(op.h, t+op.off, op.n)
			return
		}
		// Logging at t+off, its newest instant from now on, it forgets
		// what has left the window there.
		lt.commit(&tb.p, i, t+op.off, op.n)
	case SlidingBuckets:
		rt := tb.rings
		i, held := rt.kt.find(op.h)
		if !held {
			// A new key, or one a sweep made room for a new key of the
			// same Take with, dropped as idle: either way its ring is as
			// a fresh one at t+off once rolled there.
			s.makeRoom(sh, t, op.h, sp)
			i = rt.insert(op.h, floorDiv(t+op.off, tb.p.sub))
		}
		// Counting a request in the sub-window of t+off, the ring moves
		// there.
		bk := rt.load(i)
		bk.roll(&tb.p, t+op.off)
		bk.commit(&tb.p, op.n)
		rt.store(i, &bk)
	default:
		if ptr := tb.cells.get(op.h); ptr != nil {
			*ptr = op.nc
		} else {
			s.makeRoom(sh, t, op.h, sp)
			tb.cells.put(op.h, op.nc)
		}
	}
}

// lockAt takes sh's lock for a Take decided at t, and records t in
// sh.seen.
func (sh *shard) lockAt(t int64) {
	sh.mu.Lock()
	if t > sh.seen {
		sh.seen = t
	}
}

// makeRoom is called before a new key enters sh, and counts it: it sweeps
// the shard when its size has doubled since the last sweep, and evicts a key
// when the shard is at its bound. sh.mu must be held.
func (s *MemoryStore) makeRoom(sh *shard, t int64, h uint64, sp spare) {
	if sh.keys >= sh.sweepAt {
		sh.sweep(t)
		sh.sweepAt = max(minSweep, 2*sh.keys)
	}
	for s.perShrd > 0 && sh.keys >= s.perShrd && sh.evict(t, h, sp, s.perShrd) {
	}
	sh.keys++
}

// sweep drops the idle keys of sh and returns how many. sh.mu must be held.
func (sh *shard) sweep(t int64) int {
	n := 0
	since := sh.dropped
	for _, tb := range sh.tables {
		kt := tb.slots()
		for i := 0; i < len(kt.hs); {
			if kt.hs[i] != 0 && tb.idleAt(i, t) {
				since = tb.idleSince(i, since, t)
				// The next entries may shift back into slot i.
				tb.removeAt(i)
				n++
				continue
			}
			i++
		}
		tb.shrink()
		tb.dropNotes(t)
	}
	sh.keys -= n
	if n > 0 {
		sh.dropped = since
		for _, tb := range sh.tables {
			if tb.empty() {
				sh.compactDue = true
				break
			}
		}
	}
	return n
}

// evict removes one key of sh, chosen among a few sampled ones: an idle one
// if any, else the one of least weight, u·min(u, C)/C for u units in use
// of the capacity C its table reckons its keys at (see table.reckoned;
// see cmpWeight), and of
// equal weights the one holding fewer units. Every table of the shard that
// holds keys gets its part of the sample, so a flood of new keys under one
// Spec is weighed against the clients limited under another. It spares
// the keys of sp, the checks of the Take making room; the key h about to
// enter, absent from the table it enters, only seeds where the sample
// starts: its state under other Specs, unless the same Take holds it, is
// a candidate like any other. It reports whether it found a key to
// remove. A key it removes in use (not idle at t) is noted in the
// shard's forgot (perShard, the shard's share of the bound, sizes it).
// sh.mu must be held.
func (sh *shard) evict(t int64, h uint64, sp spare, perShard int) bool {
	var (
		best     *table
		bestH    uint64
		bestUsed int64 = -1
		bestCap  int64 = 1
		seen     int   // keys sampled in the current table
		quota    int   // keys to sample in each table
	)
	held := 0
	for _, tb := range sh.tables {
		if !tb.empty() {
			held++
		}
	}
	quota = max(1, (evictProbe+held-1)/max(held, 1))
	spared := sp.has
	// consider reports whether the search of the current table can stop.
	// The spared keys are not counted among those sampled: a Take on many
	// keys of the shard must not keep the search from the others.
	// It compares the weights used·min(used, capacity)/capacity and
	// bestUsed's alike, cross-multiplied (see cmpWeight). Of two keys of equal weights, the
	// one holding fewer units goes: a key of a Spec of capacity 1 weighs
	// 1 after one request, as much as a client holding 10 of 100.
	consider := func(tb *table, k uint64, used, capacity int64) bool {
		if spared(tb, k) {
			return false
		}
		seen++
		if bestUsed < 0 {
			best, bestH, bestUsed, bestCap = tb, k, used, capacity
		} else if c := cmpWeight(used, capacity, bestUsed, bestCap); c < 0 || (c == 0 && used < bestUsed) {
			best, bestH, bestUsed, bestCap = tb, k, used, capacity
		}
		return bestUsed == 0 || seen >= quota
	}
	start := int(h % uint64(max(len(sh.tables), 1)))
	for i := range sh.tables {
		if bestUsed == 0 {
			break // an idle key: none is better
		}
		seen = 0
		tb := sh.tables[(start+i)%len(sh.tables)]
		if kt := tb.slots(); kt.n > 0 {
			capacity := tb.reckoned(t)
			// A run of slots from a start that h, secret to outsiders, makes random.
			from := int(bits.RotateLeft64(h, 32) % uint64(len(kt.hs)))
			for k := range kt.hs {
				j := (from + k) % len(kt.hs)
				if e := kt.hs[j]; e != 0 && consider(tb, e, tb.usedAt(j, t), capacity) {
					break
				}
			}
		}
	}
	if best == nil {
		return false
	}
	// An idle key's Takes no longer count: a give-back of one would give
	// nothing back to it, and gives nothing to a key made again after it,
	// decided no earlier than t (sh.dropped). A key in use is noted, at
	// the latest instant a Take on the shard was decided at if that is
	// later than t: this call read the clock before it waited for the
	// lock, and a Take on the key that read it after may have got the
	// lock first; the eviction comes after that Take, and must count so.
	// (So the instants noted never decrease.)
	if i, _ := best.slots().find(bestH); !best.idleAt(i, t) {
		sh.seen = max(t, sh.seen)
		sh.noteForgotten(bestH, sh.seen, perShard)
		sh.dropped = max(sh.dropped, t)
	} else {
		sh.dropped = best.idleSince(i, sh.dropped, t)
	}
	best.forget(bestH)
	sh.keys--
	return true
}

// idleSince returns the later of lo and the earliest instant from which
// the key in slot i of tb.slots(), idle at t >= lo, is idle (every later
// one, up to t, too: a key's state left alone only gets idler). A key
// dropped is decided again from that instant on (shard.dropped), not from
// the drop's: a clock stepped days ahead and back must not hold the keys
// a sweep found idle then, and every key new to the shard since, to
// windows days ahead. It searches at most 2^61 ns before t (73 years),
// within which the kinds' differences of instants fit an int64. sh.mu
// must be held.
func (tb *table) idleSince(i int, lo, t int64) int64 {
	if lo >= t {
		return lo
	}
	if uint64(t)-uint64(lo) > 1<<61 {
		lo = t - 1<<61 // above lo, so no overflow
	}
	if lo < minInstant && minInstant <= t {
		lo = minInstant
	}
	if tb.idleAt(i, lo) {
		return lo
	}
	hi := t // idle at hi, not at lo
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if tb.idleAt(i, mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// now returns the current instant in Unix nanoseconds.
func (s *MemoryStore) now() int64 {
	if s.mono {
		return s.baseNs + int64(time.Since(s.base))
	}
	return clampInstant(s.clock.Now().UnixNano())
}

// The instants the store decides at are within [minInstant, maxInstant]:
// eight of the longest windows from either end of int64, so that every
// instant the kinds work out from one (a window's start two windows
// before, a bucket's or a queue's full or free instant up to a window
// after, a give-back's reckoning four windows either side, and half a
// window more) is an int64. A clock read outside is decided at the bound
// (see "Instants" in the package documentation).
const (
	minInstant = math.MinInt64 + 8*int64(MaxWindow)
	maxInstant = math.MaxInt64 - 8*int64(MaxWindow)
	// monoSpan is how long a store reading the monotonic clock may run:
	// its instants are not clamped.
	monoSpan = 100 * 365 * 24 * int64(time.Hour)
)

// clampInstant returns t within [minInstant, maxInstant].
func clampInstant(t int64) int64 {
	return min(max(t, minInstant), maxInstant)
}

// giveArgs returns the error of a Refund or GiveBack (op) whose arguments
// do not fit together.
func giveArgs(op string, dst []Refunded, checks []Check, ds []Decision, waited time.Duration) error {
	if len(ds) != len(checks) {
		return fmt.Errorf("algorithms: %s: %d decisions for %d checks", op, len(ds), len(checks))
	}
	if len(dst) != len(checks) {
		return fmt.Errorf("algorithms: %s: %d results for %d checks", op, len(dst), len(checks))
	}
	if waited < 0 {
		return fmt.Errorf("algorithms: %s: waited must not be negative, got %s", op, waited)
	}
	return nil
}

// allAllowed reports whether every decision of a Take admitted, which is
// whether the Take consumed anything.
func allAllowed(ds []Decision) bool {
	for i := range ds {
		if !ds[i].Allowed {
			return false
		}
	}
	return true
}

var (
	_ Refunder   = (*MemoryStore)(nil)
	_ GiveBacker = (*MemoryStore)(nil)
)

// Refund implements [Refunder]: it gives back the queue places of the
// leaky_queue checks of an admitted Take (see Refunder for which places),
// last first, so that a Take holding several places in one queue gives
// them all back, and then looks at each queue at the refund's instant (see
// [Refunded]). The refund and the look at one key take its shard's lock
// apart: a Take between them is counted. A queue evicted at the
// [WithMaxKeys] bound while in use since the Take is a new queue, and
// gets no place back, as [MemoryStore.GiveBack] says of a key evicted.
// Since a caller may state its remaining wait instead of the Take's Delay
// ([Limiter.RefundN] does), the store reckons the Take at the earliest it
// can have been: MaxDelay before its place's departure, now + Delay −
// waited, or before now when that departure is later. So an eviction of
// the queue's key up to MaxDelay before the Take (or, older than the
// latest evictions its shard holds, of a key of its class) also leaves
// the place taken.
func (s *MemoryStore) Refund(ctx context.Context, dst []Refunded, checks []Check, ds []Decision, waited time.Duration) error {
	if err := giveArgs("Refund", dst, checks, ds, waited); err != nil {
		return err
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	// Every check first: an invalid one fails the Refund before any place
	// is given back, as do queue checks of one key that no Take admits
	// together (see ValidateChecks: only queue checks share their Spec).
	rp := newRepeats(len(checks))
	for i := range checks {
		if c := &checks[i]; c.Spec.Algorithm == LeakyQueue {
			if err := c.Validate(); err != nil {
				return err
			}
			if err := rp.check(checks, i); err != nil {
				return err
			}
		}
	}
	admitted := allAllowed(ds) // a denied Take consumed nothing: nothing to give back
	t := s.now()
	// given marks the checks whose place came back.
	var buf [maxBatch]bool
	given := buf[:0]
	if len(checks) > maxBatch {
		given = make([]bool, 0, len(checks))
	}
	given = given[:len(checks)]
	for i := len(checks) - 1; i >= 0 && admitted; i-- {
		if checks[i].Spec.Algorithm == LeakyQueue {
			given[i] = s.refundOne(&checks[i], ds[i].Delay, waited, t)
		}
	}
	for i := range checks {
		if checks[i].Spec.Algorithm != LeakyQueue {
			dst[i] = Refunded{Decision: ds[i]}
			continue
		}
		dst[i] = Refunded{Decision: s.lookQueue(&checks[i], t), Given: given[i]}
	}
	return nil
}

// refundOne gives back at t the place of c, a valid leaky_queue check of an
// admitted Take whose Delay was delay, waited after it, and reports
// whether it came back.
func (s *MemoryStore) refundOne(c *Check, delay, waited time.Duration, t int64) bool {
	h := s.hash(c.Key)
	sh := &s.shards[h&s.mask]
	tb := sh.lookup(&c.Spec)
	if tb == nil {
		return false // no key of this spec is held
	}
	n := c.cost()
	// Delay − waited, which a Delay stating the remaining wait itself,
	// negative once the departure has passed (Limiter.RefundN), could
	// take below MinInt64: saturated at MinInt64+1, whose negation
	// refundQueue takes.
	rem := int64(math.MinInt64 + 1)
	if d := int64(delay); d >= math.MinInt64+1+int64(waited) {
		rem = d - int64(waited)
	}
	// The Take was decided no earlier than MaxDelay before its place's
	// departure, t + rem (later than t + min(rem, 0)).
	since := before(before(t, time.Duration(-min(rem, 0))), c.Spec.MaxDelay)
	given := false
	sh.mu.Lock()
	if tb = sh.liveOrNil(tb); tb == nil || sh.forgotSince(h, since) {
		// No key of c's Spec held, or the key may be one made again
		// since the Take.
		sh.mu.Unlock()
		return false
	}
	if kt := tb.cells; kt != nil {
		if j, held := kt.find(h); held {
			cp := &kt.cs[j]
			var ok bool
			*cp, ok = tb.p.refundQueue(*cp, t, n, rem)
			given = ok
		}
	}
	sh.mu.Unlock()
	return given
}

// lookQueue returns the Decision a Take of c, a valid leaky_queue check,
// alone at t would report without consuming (Delay 0): a fresh queue's
// when the store does not hold its key.
func (s *MemoryStore) lookQueue(c *Check, t int64) Decision {
	p := newParams(c.Spec)
	h := s.hash(c.Key)
	sh := &s.shards[h&s.mask]
	cl := cell{t: t} // a queue never seen is free from t, at any instant
	if tb := sh.lookup(&c.Spec); tb != nil {
		p = tb.p
		sh.mu.Lock()
		if tb = sh.liveOrNil(tb); tb == nil {
			tb = &table{} // dropped: no key held
		}
		if kt := tb.cells; kt != nil {
			if j, held := kt.find(h); held {
				cl = kt.cs[j]
			}
		}
		sh.mu.Unlock()
	}
	var d Decision
	p.leakyQueue(&cl, t, c.cost(), false, &d)
	return d
}

// cmpWeight compares the eviction weights u1·min(u1, c1)/c1 and
// u2·min(u2, c2)/c2 (u >= 0, c >= 1), returning -1, 0 or +1: u1·min(u1,
// c1)·c2 with u2·min(u2, c2)·c1, exactly in 192 bits (counts and
// capacities are at most MaxLimit, but the comparison does not rely on
// it). A key's weight is its units times its share of the capacity it is
// reckoned at, the share taken as 1 when above: a count past that
// capacity (a raised limit's, or the Spec's own beside a key judged at a
// lowered one) weighs its units, never more.
func cmpWeight(u1, c1, u2, c2 int64) int {
	a1, a0 := mul192(mul(u1, min(u1, c1)), c2)
	b1, b0 := mul192(mul(u2, min(u2, c2)), c1)
	switch {
	case a1 < b1:
		return -1
	case a1 > b1:
		return 1
	}
	return a0.cmp(b0)
}

// mul192 returns x·c as its top 64 bits and low 128 bits.
func mul192(x u128, c int64) (uint64, u128) {
	h1, l1 := bits.Mul64(x.lo, uint64(c))
	h2, l2 := bits.Mul64(x.hi, uint64(c))
	mid, carry := bits.Add64(h1, l2, 0)
	return h2 + carry, u128{mid, l1}
}
