package redisstore

import (
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// WithDenyCache keeps, in process memory, the decisions of up to size
// checks of recently denied Takes (Envoy's over-limit cache). A later Take
// whose every check is cached (same spec, key and cost, judged at the same
// limit: a denial at one [algorithms.Check.Limit], or at the Spec's own,
// says nothing of the key at another, such as a limit raised above the
// Spec's, which may admit on the state the Spec's limit denies), one of
// them with a
// denial whose RetryAfter has not yet elapsed, is denied locally with no
// round trip (not at an instant before one of them was decided, as on an
// injected clock stepped back: Redis decides that Take): the cached decisions are reported with RetryAfter, ResetAfter
// and NextAfter reduced by the time elapsed since Redis's reply arrived
// (never shorter than Redis would report: it decided before). Only
// denials are answered locally, and only while Redis itself would deny —
// its state can only move further from admitting, by other requests, before
// RetryAfter — so the cache never admits anything. The exceptions, where
// the state moves back: a denial caused by another process's cross-slot
// Take's reservation on a Cluster, which is then undone (see the package
// documentation, "Cluster"), a key another process refunds or gives back
// ([Store.Refund], [Store.GiveBack]; this process's refunds, give-backs,
// cross-slot undos (TestDenyCacheForgetsItsOwnUndoneReservation) and
// resets ([Store.Reset]) drop its entries, as do its admitted Takes
// of the key, such as one of another cost, and its Takes that fail, which
// Redis may have admitted, and keep a denial in flight meanwhile from
// being cached; a refund, give-back, reset or cross-slot undo whose
// caller stopped waiting for it drops them again when the store sees it
// end, as it may have run late: TestDenyCacheForgetsALateAbandonedGiveBack,
// TestDenyCacheForgetsALateAbandonedUndo; one the client itself
// gave up on, closing its connection at a deadline or read timeout, and
// that Redis runs after all, the store does not see, as it does not see
// another process's), and a key deleted in Redis (by another process's
// [Store.Reset], an operator resetting a client's limit, a restart
// without persistence, an eviction) stay cached
// until their RetryAfter, and later Takes of that key in this process are
// denied for that long where Redis would admit them. The Remaining of a
// cached decision is Redis's at that time: other clients may have consumed
// since. A key named twice in one Take is not cached from it (its second
// check saw the first one's consumption), and such a Take is not answered
// from the cache (its second check waits for both). Entries expire with their
// RetryAfter; when the cache is full, new denials are not cached until
// expired entries make room. A Take is answered from the cache only before
// the NextAfter of each of its cached decisions, when the key's Remaining
// could grow (a denial of a cost above 1, or a check of a stacked Take that
// passed, reaches it before its RetryAfter): from then on it goes to Redis,
// so that the Remaining and NextAfter reported are Redis's.
//
// Memory: an entry takes about 250 to 350 bytes (by how full the cache's
// map is since it last grew) plus a copy of its key. Keys longer than 512
// bytes are not cached (their Takes go to Redis every time), so a direct
// user of the Store passing keys of any length cannot make the cache hold
// more than about size × 900 bytes (TestDenyCacheMemory); the policy layer's
// keys (a policy name of at most 64 bytes, ':', a key of at most
// keyfunc.MaxKeyLen = 256 bytes or its digest) are all cacheable.
func WithDenyCache(size int) Option {
	return func(s *Store) error {
		if size < 1 {
			return fmt.Errorf("redisstore: WithDenyCache: Size must be at least 1, got %d", size)
		}
		s.deny = newDenyCache(size)
		return nil
	}
}

func newDenyCache(size int) *denyCache {
	return &denyCache{size: size, m: make(map[denyKey]denyEntry), seed: maphash.MakeSeed()}
}

// maxDenyKeyLen is the longest key the deny cache keeps (see WithDenyCache).
const maxDenyKeyLen = 512

type denyKey struct {
	spec algorithms.Spec
	key  string
}

// A denyEntry is the decision of one (Spec, Key) state, whatever limit its
// check was judged at: an admitted Take at any limit changes that state,
// and forgets the entry.
type denyEntry struct {
	d       algorithms.Decision
	at      time.Time // before the call: no later than when Redis decided
	replied time.Time // when its reply arrived: no earlier than when Redis decided
	until   time.Time // when the entry expires: at + the Take's largest RetryAfter
	cost    int64
	limit   int64 // the limit the check was judged at: Check.Judged().Limit
}

type denyCache struct {
	mu   sync.Mutex
	size int
	m    map[denyKey]denyEntry
	n    atomic.Int64 // len(m), read without mu
	// next is no later than the earliest expiry among the entries: a full
	// cache is swept for expired entries only from then on, so denials on
	// a cache full of live ones do not each look through all of them.
	next time.Time
	// visited counts the entries sweeps have looked at (tests).
	visited int
	// epochs[h] counts the forgets of the keys that hash to h (seed): a
	// Take notes the sum over its checks before its call (mark), and learn
	// caches nothing when it changed meanwhile. A forget (this process's
	// admitted Take, refund or give-back of the key) that came after Redis
	// denied would otherwise be undone by the denial cached after it, which
	// would then stand for its RetryAfter where Redis admits. A collision
	// only makes the cache learn less.
	seed   maphash.Seed
	epochs [denyEpochs]atomic.Uint64
	// afterMark, when set (tests), runs in learn after its first
	// comparison of the forget counters, under mu.
	afterMark func()
}

// denyEpochs is the number of forget counters (see denyCache.epochs): 8 kB,
// so that forgets of other keys rarely keep a denial from being cached.
const denyEpochs = 1024

func (c *denyCache) epoch(key string) *atomic.Uint64 {
	return &c.epochs[maphash.String(c.seed, key)%denyEpochs]
}

// mark returns the sum of the forget counters of checks' keys, which learn
// compares with the sum after the call.
func (c *denyCache) mark(checks []algorithms.Check) uint64 {
	var sum uint64
	for _, ch := range checks {
		sum += c.epoch(ch.Key).Load()
	}
	return sum
}

// answer fills dst and reports true when the Take can be denied locally.
func (c *denyCache) answer(dst []algorithms.Decision, checks []algorithms.Check, now time.Time) bool {
	if c.n.Load() == 0 {
		return false
	}
	// A key named twice: its later check waits for the earlier ones too
	// (see algorithms.Decision.RetryAfter), longer than the key's cached
	// decision alone says. Redis decides. (Found before the lock, which
	// every Take of the process waits for.)
	if c.anyTwice(checks) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) == 0 {
		return false
	}
	denied := false
	for _, ch := range checks {
		e, ok := c.m[denyKey{ch.Spec, ch.Key}]
		if !ok || e.cost != cost(ch) || e.limit != ch.Judged().Limit || !now.Before(e.until) {
			return false
		}
		if now.Before(e.at) {
			// A clock stepped back: the entry tells nothing of an instant
			// before Redis decided (a bucket is further from full then,
			// every wait longer). Redis decides.
			return false
		}
		if e.d.NextAfter > 0 && !now.Before(e.at.Add(e.d.NextAfter)) {
			// The key's Remaining may have grown since (counted, as a
			// wait's end, from before the call): Redis reports it.
			return false
		}
		if !e.d.Allowed && now.Before(e.at.Add(e.d.RetryAfter)) {
			denied = true
		}
	}
	if !denied {
		return false
	}
	for i, ch := range checks {
		e := c.m[denyKey{ch.Spec, ch.Key}]
		// Whether a wait is over counts from before the call (Redis may
		// admit from then on); the waits reported count from the reply
		// (Redis denies until then at least).
		el := now.Sub(e.replied)
		d := e.d
		if !d.Allowed {
			if now.Before(e.at.Add(d.RetryAfter)) {
				d.RetryAfter = max(d.RetryAfter-el, time.Nanosecond)
			} else {
				// A denial whose wait is over would now pass if decided alone.
				d.Allowed, d.RetryAfter = true, 0
			}
		}
		d.ResetAfter = max(d.ResetAfter-el, 0)
		d.NextAfter = max(d.NextAfter-el, 0)
		dst[i] = d
	}
	return true
}

// pairwiseChecks bounds the checks whose specs and keys twice and anyTwice
// compare pair by pair; past it a map finds the repeated ones, in time
// linear in the checks (comparing the pairs of a Take of 8000 checks,
// under the cache's lock, held every other Take of the process for
// seconds: TestReview3DenyCacheManyChecksLinear).
const pairwiseChecks = 8

// hashedChecks bounds the checks anyTwice looks through without a map:
// past pairwiseChecks and up to it, it sorts a hash of each check's spec
// and key in an array on the stack and compares neighbours, so that the
// deny cache's answer, asked about every Take while it holds an entry,
// allocates nothing for them (TestDenyCacheAnswerAllocatesNothing).
const hashedChecks = 64

// anyTwice reports whether two checks of checks name the same spec and
// key; it allocates nothing for up to hashedChecks checks (and for more,
// nor for fewer than two hashes alike, a map of them).
func (c *denyCache) anyTwice(checks []algorithms.Check) bool {
	if len(checks) <= pairwiseChecks {
		for i := 1; i < len(checks); i++ {
			for _, o := range checks[:i] {
				if o.Spec == checks[i].Spec && o.Key == checks[i].Key {
					return true
				}
			}
		}
		return false
	}
	if len(checks) <= hashedChecks {
		var a [hashedChecks]uint64
		hs := a[:len(checks)]
		for i := range checks {
			hs[i] = c.checkHash(&checks[i])
		}
		slices.Sort(hs)
		for i := 1; i < len(hs); i++ {
			if hs[i] == hs[i-1] {
				// A key named twice, or two hashes alike: the exact test.
				return twice(checks) != nil
			}
		}
		// Checks of one spec and key hash alike: none is named twice.
		return false
	}
	return twice(checks) != nil
}

// checkHash returns a hash of ch's Spec and Key: equal for checks of
// equal Specs and Keys (it reads nothing else), rarely for others.
func (c *denyCache) checkHash(ch *algorithms.Check) uint64 {
	const mul = 0x9e3779b97f4a7c15 // odd: each step is a bijection of h
	s := &ch.Spec
	h := maphash.String(c.seed, ch.Key)
	h = (h ^ maphash.String(c.seed, string(s.Algorithm))) * mul
	for _, v := range [...]int64{s.Limit, int64(s.Window), s.Burst, int64(s.Buckets), int64(s.MaxDelay)} {
		h = (h ^ uint64(v)) * mul
		h ^= h >> 29
	}
	return h
}

// twice returns the spec and key pairs that more than one check of checks
// names, as a set, or nil when there are none.
func twice(checks []algorithms.Check) map[denyKey]bool {
	var out map[denyKey]bool
	if len(checks) <= pairwiseChecks {
		for i := 1; i < len(checks); i++ {
			for _, o := range checks[:i] {
				if o.Spec == checks[i].Spec && o.Key == checks[i].Key {
					if out == nil {
						out = make(map[denyKey]bool)
					}
					out[denyKey{o.Spec, o.Key}] = true
				}
			}
		}
		return out
	}
	seen := make(map[denyKey]bool, len(checks))
	for _, ch := range checks {
		k := denyKey{ch.Spec, ch.Key}
		if _, ok := seen[k]; ok {
			if out == nil {
				out = make(map[denyKey]bool)
			}
			out[k] = true
		}
		seen[k] = true
	}
	return out
}

func cost(c algorithms.Check) int64 {
	if c.Cost == 0 {
		return 1
	}
	return c.Cost
}

// learn caches the decisions of a Take that Redis denied, decided after
// now and before replied; marked is mark(checks) from before the call.
func (c *denyCache) learn(dst []algorithms.Decision, checks []algorithms.Check, now, replied time.Time, marked uint64) {
	var wait time.Duration
	denied := false
	for _, d := range dst {
		if !d.Allowed {
			denied = true
			wait = max(wait, d.RetryAfter)
		}
	}
	if !denied {
		// Admitted: the Take consumed on every key of its checks, so
		// waits cached for them (another cost's denial) are too short.
		c.forget(checks)
		return
	}
	if wait <= 0 {
		return
	}
	until := now.Add(wait)
	// Each occurrence of a key named twice saw the earlier ones'
	// consumption within the Take: its decision is not the key's alone.
	// (Found before the lock, which every Take of the process waits for.)
	repeats := twice(checks)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mark(checks) != marked {
		// A key was forgotten during the call, maybe after Redis decided:
		// the denial may be stale already (see epochs).
		return
	}
	if c.afterMark != nil {
		c.afterMark()
	}
	defer func() { c.n.Store(int64(len(c.m))) }()
	if len(c.m)+len(checks) > c.size && !now.Before(c.next) {
		var next time.Time
		for k, e := range c.m {
			c.visited++
			if !now.Before(e.until) {
				delete(c.m, k)
			} else if next.IsZero() || e.until.Before(next) {
				next = e.until
			}
		}
		c.next = next
	}
	for i, ch := range checks {
		k := denyKey{ch.Spec, ch.Key}
		if len(ch.Key) > maxDenyKeyLen {
			continue // bounded bytes: see WithDenyCache
		}
		if repeats[k] {
			continue // named twice: see repeats
		}
		if _, ok := c.m[k]; !ok && len(c.m) >= c.size {
			continue
		}
		// The caller may write the key's bytes again after the Take
		// (policy.Result's keys point into a reused buffer), and storing
		// into a map stores the key too, even over an existing entry: the
		// map gets a copy.
		k.key = strings.Clone(k.key)
		c.m[k] = denyEntry{d: dst[i], at: now, replied: replied, until: until, cost: cost(ch), limit: ch.Judged().Limit}
		if len(c.m) == 1 || until.Before(c.next) {
			c.next = until
		}
	}
	// A forget that counted after the comparison above read the number of
	// entries without the lock, perhaps before they were written, and so
	// may have dropped nothing: publish the number, then compare again. A
	// forget the second comparison misses counted after the number was
	// published, sees the entries and drops them once mu is released.
	c.n.Store(int64(len(c.m)))
	if c.mark(checks) != marked {
		for _, ch := range checks {
			delete(c.m, denyKey{ch.Spec, ch.Key})
		}
	}
}

// forget drops what the cache holds for checks (their keys' state changed
// in a way the cache cannot follow: an admission, a refund).
func (c *denyCache) forget(checks []algorithms.Check) {
	// Before the entries go, and even when there are none: a denial in
	// flight must not be cached after this (see epochs).
	for _, ch := range checks {
		c.epoch(ch.Key).Add(1)
	}
	if c.n.Load() == 0 {
		return // the common case of an admitted Take: nothing cached
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range checks {
		delete(c.m, denyKey{ch.Spec, ch.Key})
	}
	c.n.Store(int64(len(c.m)))
}

// forgetLater returns the function a caller that stops waiting for a call
// of checks that makes the state of their keys admit more (a give-back, a
// refund, a reset) leaves to the call's goroutine (handoff.leave), nil
// without a deny cache: once the call has ended, it forgets checks' keys
// again. The caller forgets them when it returns, but the call may reach
// Redis after that, and a Take of the key denied in between, whose call
// began after that forget, would be cached, and deny locally until its
// RetryAfter what Redis admits once the call has run
// (TestDenyCacheForgetsALateAbandonedGiveBack). The keys are copied: the
// caller may write their bytes again once it has returned.
func (s *Store) forgetLater(checks []algorithms.Check) func() {
	if s.deny == nil || len(checks) == 0 {
		return nil
	}
	cs := make([]algorithms.Check, len(checks))
	for i, c := range checks {
		cs[i] = algorithms.Check{Spec: c.Spec, Key: strings.Clone(c.Key)}
	}
	return func() { s.deny.forget(cs) }
}
