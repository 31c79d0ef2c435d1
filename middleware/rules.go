package middleware

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/errlist"
	"github.com/ratekeeper/ratekeeper/policy"
)

// rules is the writers' side of the active rule set: the policies as
// configured and the effective limits that replace theirs.
type rules struct {
	mu     sync.Mutex          // serialises writers; requests never take it
	base   []*policy.Policy    // as configured
	limits map[string]effLimit // effective limit by policy name, when not the configured one
	// carries: by policy name, the Specs reloads replaced by tighter
	// ones (at most policy.MaxCarries, first replaced first), each of
	// which guards it until its counters can hold no request counted
	// before its reload (see SetPolicies).
	carries map[string][]carry
	// closed: Close was called; the observers are told of no change of
	// limits, nor of a policy removed.
	closed bool
}

// A carry is a Spec a reload replaced by a tighter one of the same
// policy (its configured Spec, the one of its limit set by
// SetLimitUnguarded, whose counters alone hold its requests, or the one
// of a bucket kind's limit set by SetLimit, whose counters alone know
// what was used at it), and until when (Unix ns, on the middleware's
// clock) the policy is guarded by it.
type carry struct {
	spec  algorithms.Spec
	until int64
}

// tighter reports whether a policy's configured Spec to, replacing from,
// admits no more than from in any respect, and is not from: the same
// kind, or one machine told as another (a fixed_window is sliding_buckets
// of one bucket; a leaky_bucket is a token_bucket seen from the other
// side), no more capacity, and
//
//   - for a window kind, no higher limit and windows that cover the
//     replaced ones ([covers]): for sliding_log a window no shorter; for
//     sliding_window a whole number of the replaced windows; for
//     fixed_window and sliding_buckets (sub-windows of Window/Buckets,
//     one for fixed_window) a window that holds every window of the
//     replaced Spec within one of its own, as the same window cut into
//     finer buckets, or one of an hour in place of one of a minute, does.
//     Coarser buckets, or a fixed_window in place of sliding_buckets of
//     the same window, admit more across a boundary, and are not tighter;
//   - for token_bucket and leaky_bucket, no faster rate (Limit per
//     Window);
//   - for leaky_queue, no faster rate and the same MaxDelay: the replaced
//     queue's Delay, up to its MaxDelay, is the one a request it admits
//     is held for, which must stay within the new MaxDelay.
//
// The replaced Spec's counters, which hold the requests admitted before
// the change, can then guard the new one: a request both admit is one
// the new Spec admits.
func tighter(from, to algorithms.Spec) bool {
	if from == to || machine(from.Algorithm) != machine(to.Algorithm) || to.Capacity() > from.Capacity() {
		return false
	}
	switch to.Algorithm {
	case algorithms.TokenBucket, algorithms.LeakyBucket:
		return !faster(to, from)
	case algorithms.LeakyQueue:
		return to.MaxDelay == from.MaxDelay && !faster(to, from)
	}
	return to.Limit <= from.Limit && covers(from, to)
}

// covers reports whether every window of from, of a window kind, lies
// within a window of to, of the same machine, so that to's counts bound
// from's. A sliding_log window is the Window up to the instant; a
// sliding_window's estimate is a weighted previous window and the
// current one, and one whose windows are cut into whole windows of from
// weights each of from's no less; fixed_window and sliding_buckets count
// Window in sub-windows of S = Window/Buckets (Buckets 1 for
// fixed_window) aligned to the Unix epoch, and one of from's windows,
// starting at a multiple of from's S, starts at most to's S less the
// greatest common divisor of the two S into one of to's sub-windows.
func covers(from, to algorithms.Spec) bool {
	switch to.Algorithm {
	case algorithms.SlidingLog:
		return to.Window >= from.Window
	case algorithms.SlidingWindow:
		return to.Window%from.Window == 0
	}
	s1, s2 := sub(from), sub(to)
	a, b := s1, s2
	for b != 0 {
		a, b = b, a%b
	}
	// from.Window + s2 - gcd <= to.Window, without overflow: s2 <= to.Window.
	return from.Window <= to.Window-s2+a
}

// sub returns the sub-window of s, of fixed_window or sliding_buckets:
// Window/Buckets, Window for fixed_window.
func sub(s algorithms.Spec) time.Duration {
	if s.Algorithm == algorithms.FixedWindow || s.Buckets <= 1 {
		return s.Window
	}
	return s.Window / time.Duration(s.Buckets)
}

// machine returns the kind that decides as k does: sliding_buckets for
// fixed_window (one bucket), token_bucket for leaky_bucket, k otherwise.
func machine(k algorithms.Kind) algorithms.Kind {
	switch k {
	case algorithms.FixedWindow:
		return algorithms.SlidingBuckets
	case algorithms.LeakyBucket:
		return algorithms.TokenBucket
	}
	return k
}

// faster reports whether a's rate, Limit per Window, is above b's.
func faster(a, b algorithms.Spec) bool {
	ahi, alo := bits.Mul64(uint64(a.Limit), uint64(b.Window))
	bhi, blo := bits.Mul64(uint64(b.Limit), uint64(a.Window))
	return ahi > bhi || ahi == bhi && alo > blo
}

// holds reports whether the counters of from, a Spec whose requests a
// reload hands over to p, configured, in force at to (p's Spec, or a
// share's: see setPolicies), hold them as to's would, so that from can
// guard to: to is tighter, or to is p's Spec, of a kind whose counters
// count requests whatever the limit, at a limit above from's (judged at
// it: [policy.Policy.GuardLimit]).
func holds(p *policy.Policy, from, to algorithms.Spec) bool {
	return tighter(from, to) || to == p.Spec() && from.Limit < to.Limit && p.GuardLimit(from) == to.Limit
}

// carryFor returns how long a key's state under s can hold a request
// admitted at its start: the longest ResetAfter s reports (a window, two
// for sliding_window's weighted previous window, and for the buckets and
// the queue the time a full one takes to drain), and a window more, to
// err on the side of keeping the guard.
func carryFor(s algorithms.Spec) time.Duration {
	w := s.Window
	switch s.Algorithm {
	case algorithms.SlidingWindow:
		return 3 * w
	case algorithms.TokenBucket, algorithms.LeakyBucket, algorithms.LeakyQueue:
		// Capacity·W/L, rounded up, and a window: saturating, since a
		// burst of 10^9 at one per day passes what an int64 holds.
		c, l := s.Capacity(), s.Limit
		hi, lo := bits.Mul64(uint64(c), uint64(w))
		if hi >= uint64(l) {
			return math.MaxInt64
		}
		q, r := bits.Div64(hi, lo, uint64(l))
		if r > 0 {
			q++
		}
		if q > math.MaxInt64-uint64(w) {
			return math.MaxInt64
		}
		return time.Duration(q) + w
	}
	return 2 * w
}

// addSat returns t + d, or math.MaxInt64 past it.
func addSat(t int64, d time.Duration) int64 {
	if int64(d) > math.MaxInt64-t {
		return math.MaxInt64
	}
	return t + int64(d)
}

// endCarries rebuilds the rule set without the guards of reloads whose
// time is over, if no writer holds the rules (a later request tries
// again): a request never waits on a writer.
func (m *Middleware) endCarries() {
	if !m.rules.mu.TryLock() {
		return
	}
	defer m.rules.mu.Unlock()
	if cu := m.carryUntil.Load(); cu == 0 || m.clock.Now().UnixNano() < cu {
		return // another request ended them
	}
	_ = m.apply(m.rules.base, m.rules.limits) // the same policies: no new error
}

// limitedSpec returns the Spec of p at limit (see policy.Policy.WithLimit),
// p's own if none.
func limitedSpec(p *policy.Policy, limit int64) algorithms.Spec {
	q, err := p.WithLimit(limit)
	if err != nil {
		return p.Spec()
	}
	return q.Spec()
}

// effLimit is a limit set by SetLimit (guarded when lower than the
// configured one) or by SetLimitUnguarded.
type effLimit struct {
	n         int64
	unguarded bool
}

// SetPolicies replaces the policies the middleware enforces, while requests
// are in flight: each request is decided entirely under the rule set it
// started with (one immutable [policy.Set], swapped atomically), never a
// mix; a middleware nested in itself (see [ErrCountedTwice]) decides it
// in both layers under the set its layer further out started it with. On
// an error (the same checks as [New]) the running policies stay.
//
// The stores key their state by Spec and namespaced key ("name:key"), so a
// policy whose name and Spec are unchanged keeps its counters across the
// swap, and a policy whose configured Spec changes gets new ones. A Spec
// is the one spelling [policy.Policy.Spec] gives it: a token_bucket or
// leaky_bucket whose burst is written out at its limit is the one whose
// burst is left to default, and a reload from one to the other changes
// nothing.
//
// A reload must not hand clients a fresh quota when it tightens a
// policy (an operator lowering a login limit during an attack). The new
// Spec tightens the old when it admits no more in any respect: the same
// algorithm, or one machine told as another (a fixed_window is
// sliding_buckets of one bucket; a leaky_bucket is a token_bucket seen
// from the other side), no more capacity, and for a window kind
// (fixed_window, sliding_window, sliding_log, sliding_buckets) no higher
// limit and a window that holds every one of the old Spec's within one of
// its own: for sliding_log no shorter; for sliding_window a whole number
// of the old windows; for fixed_window and sliding_buckets, whose windows
// start at multiples of their sub-window (Window/Buckets; Window for
// fixed_window), the old window cut into finer buckets, or a longer
// window that holds it wherever it starts (a fixed window of an hour in
// place of one of a minute). Coarser buckets, a fixed_window in place of
// sliding_buckets, or a window the old one does not divide admit more
// across a boundary than the Spec they replace: they are not tighter. For
// token_bucket and leaky_bucket, no faster rate (Limit per Window: a
// lower limit or burst, a longer window); for leaky_queue no faster rate
// and the same MaxDelay.
// Then the policy is also checked and counted under the Spec it replaced,
// in the same store call, as a lowered one is under its guard
// ([policy.Policy.Guard]), for as long as that Spec's counters can hold a
// request admitted before the reload: two of its windows (three for
// sliding_window; for the buckets and the queue, the time a full one
// takes to drain, and a window). While that guard stands, a request is
// admitted only when both Specs admit it, each on its own counters: the
// replaced Spec's, which hold what the client used before the reload, and
// the new Spec's, which count from the reload. So a client gets no more
// than the replaced Spec would have given it had there been no reload,
// nor more than the new Spec gives it counting from the reload alone; its
// decision (the headers, the 429's Retry-After) is the stricter of the
// two. At all times after the reload, then, a client gets no more than
// the new Spec gives counting from the reload, and, in the window of the
// reload, no more than what the replaced Spec gave it before the reload
// and the new Spec since. A client that emptied a token bucket of 20 a
// minute gets none at once when the burst is reloaded at 10 (not a fresh
// 10), and 10 half a minute on (what the replaced bucket refilled); one
// that used the 10 of a fixed window of a minute gets none more in that
// minute when the window is reloaded at an hour, and 10 more in that hour
// from the next minute on, when the replaced counters start afresh: what
// it used before the reload is not counted in the new hour, since the
// replaced counters do not know the hour. When the new
// Spec is the old one at a lower limit, of a window kind, the replaced
// counters, which count requests whatever the limit, are judged at the
// new limit ([policy.Policy.GuardLimit]): in the window of the reload a
// client gets no more than the new limit, counting what it used before
// the reload, exactly as if it had been counted under the new Spec from
// the start. One that used 4 of its 10 per minute gets 1 more in that
// minute when the limit is reloaded at 5, one that used 5 or more none,
// and each gets 5 in the next. Any other tightening is checked at the
// replaced Spec's own limit and shape: a token_bucket, leaky_bucket or
// leaky_queue, whose state is a function of its rate, at a lower limit
// (in the window of the reload a client gets no more than the replaced
// limit, nor more than the new one since: 4 used of 10, 5 more), and
// every Spec of another burst, window or buckets. That is short of
// exact: the bucket of 20 above, emptied and then judged at a burst of 10
// as if under the new Spec from the start, would hold none half a minute
// on, not 10, but no store check reads one Spec's state at another's
// burst, window or buckets. Nor is a leaky_queue whose MaxDelay a reload
// lowers guarded: the replaced queue would hold a request it admits up to
// its own, longer MaxDelay, past the new one; its new queue starts
// afresh.
//
// Nor must a reload that raises a limit hand clients the new limit on
// top of what they used: when the new Spec is
// the old one at a higher limit, of a kind whose counters count requests
// whatever the limit (fixed_window, sliding_window, sliding_buckets), the
// Spec it replaced guards it the same way, judged at the new limit: one
// that used 100 of its 100 an hour gets 10 more in that hour when the
// limit is reloaded at 110, as under a limiter keeping one counter per
// client whatever the limit. That guard ends at the first
// request after its time (or the next reload), which rebuilds the rule
// set without it if no writer holds the rules (requests never wait on
// them; one that finds them held leaves it to the next). A policy
// reloaded again with its Spec unchanged keeps its guards until their
// ends. One reloaded again during a guard is guarded, from that reload
// on, by every Spec whose counters hold requests of before it and that
// still guards its new Spec as above: the Specs the running guards
// hold, each until its own end, and the Spec this reload replaces, for
// its own time. Each knows what no other does: a token_bucket of burst
// 20 whose burst is lowered to 10, and to 5 while the 20 guards it, is
// guarded by the 20 and by the 10, whose counters alone know that a
// client emptied the 10 (judged at the 20's burst, it has 10 left), so
// that the client gets none at once at the 5, not a fresh 5 (and, three
// times tightened, by the 20, the 10 and the 5). Of a window kind, the
// Specs of the new Spec's shape at other limits are one guard: the
// counters of the first of them, counted under through every later one
// (as its guard), judged at the new limit, hold the requests of the
// others, till the last of their ends (a fixed window of 10 lowered to
// 8, then to 5, is guarded by the 10 until two windows after the second
// reload), and going back to the Spec a running guard holds ends the
// guards of its shape (its counters hold every request of their time).
// So one changed during a guard to a Spec that still tightens the one
// the guard holds (raised to a limit still below it, say), stays guarded
// by it until its end (a client that used 50 of 100 before a reload to
// 50 gets 30 more when a reload raises it to 80 in that window, for a
// window kind; for the bucket kinds, no more than the replaced limit nor
// the new one since); one raised or lowered during it, of a kind judged
// at a higher limit, stays guarded by it too (its counters hold the
// requests of every Spec since); a guard that no longer holds the new
// Spec ends (the burst of 20 lowered to 10, then reloaded at 15: the 20
// guards it still, the 10 no more); and one tightened after a guard
// ends is guarded by the Spec just replaced. A policy has at most
// [policy.MaxCarries] such guards (each a check more per request, in the
// same store call): past them, those that guard the Spec in force (at a
// limit set by SetLimit) stay first, then the Specs the reload replaces,
// whose counters know the client's latest use, and of the others those
// that end last; a guard so dropped may have known what the others do
// not, and the client may then get more than the replaced Specs would
// give (10 of 40,000 random traces of reloads and SetLimit ending in a
// tightening, TestReloadTightenedTwinDifferential's past its seeds). Any
// other change
// starts the policy from a full allowance at its new Spec: one that
// admits more in some respect (a higher limit of a sliding_log, whose log
// holds the instants of no more than its limit's requests, or of a bucket
// kind, whose state is a function of its rate; a faster rate, a larger
// burst, a shorter window, a longer MaxDelay), a leaky_queue's MaxDelay
// lowered, or another algorithm but as above, unless
// it goes back to a Spec it had before: then it finds that Spec's
// counters, if the store still holds them (idle keys expire), holding the
// requests counted under it then, and under it as a guard since (going
// back to the Spec a running guard holds ends that guard: its counters
// hold every request of its time). (A limit
// set by [Middleware.SetLimit] is another matter: see there; a policy
// both lowered by it and reloaded tighter is guarded by its new
// configured Spec and, until the reload's guard ends, by the Spec the
// reload replaced too: three checks per request (two for a window kind,
// whose new configured Spec's check stands for its lowered one's). The
// Spec replaced is judged at the limit in force when the reload changes
// the limit alone, of a window kind; otherwise at its own: a client that
// used 8 of 10 a minute held at 8 gets 2 more in that minute when the
// window is reloaded at an hour (the limit carried over at 8), not a
// fresh 8; for a bucket kind, no more than the replaced limit nor the
// new one since. A bucket kind's lowered Spec counts its requests on
// counters of its own, which alone know what the client used at the
// lowered limit: the reload guards the policy with that Spec too (four
// checks per request), for its time, while it holds the Spec in force.
// A token_bucket of 20 a minute held at 10, whose client emptied the 10
// (10 left in the 20), gets none at once when its burst is reloaded at 10
// (in force: 10 a minute, burst 5), not a fresh 5, and one unit every
// 6 s (the lowered bucket's refill); restored to its configured limit
// during that guard, it is guarded by the 20 alone (the lowered Spec, of
// a slower rate, would hold it below its limit), and lowered again, by
// the lowered Spec again. A limit set by
// [Middleware.SetLimitUnguarded], such as a Fleet's share, of a bucket
// kind counts the requests under its own Spec alone: a reload that lowers
// it, carried over in proportion (or tightens it otherwise at the same
// limit, as a lower burst does), guards it with the Spec of the limit it
// replaced, whose counters hold them, for that Spec's time, as it guards
// a policy with its configured Spec; a window kind's share is SetLimit's,
// judged on the configured counters, and a reload guards it with the
// configured Spec it replaced, judged at the new share: a client that
// used its share of 50 gets none of the new share of 30 before the next
// window, one that used 20 of it 10.) An
// effective limit set by SetLimit or
// [Middleware.SetLimitUnguarded] survives the swap, guarded or not as it
// was set: unchanged if the policy's configured Spec is unchanged, and
// otherwise in proportion, as the new configured limit times the old effective limit
// over the old configured one (rounded down, at least 1). So a policy held
// at 80% by package middleware/adaptive enters at 80% of its new limit, in
// the same swap, not at its full new limit until the controller next acts.
// A carried limit the new Spec does not allow (one raised above the
// configured limit, scaled past algorithms.MaxLimit) is dropped: the
// policy enters at its new configured limit.
//
// Headers, failure mode and the other options are fixed at construction.
//
// Its error names the call ("middleware: SetPolicies: policy: ...") and
// holds every problem, as [New] reports the policies'.
func (m *Middleware) SetPolicies(policies []*policy.Policy) error {
	m.rules.mu.Lock()
	defer m.rules.mu.Unlock()
	return errlist.Join(wrapEach("middleware: SetPolicies: ", m.setPolicies(policies)))
}

// setPolicies is SetPolicies, returning its problems without the
// caller's prefix (see apply); it requires m.rules.mu.
func (m *Middleware) setPolicies(policies []*policy.Policy) []error {
	limits := make(map[string]effLimit, len(m.rules.limits))
	carries := make(map[string][]carry)
	now := m.clock.Now().UnixNano()
	for _, p := range policies {
		if p == nil {
			continue // NewSet reports it
		}
		old := m.configured(p.Name())
		if old == nil {
			continue
		}
		ol, wasLimited := m.rules.limits[p.Name()]
		l, limited := ol, wasLimited
		if limited && old.Spec() != p.Spec() {
			l.n = scaleLimit(l.n, old.Spec().Limit, p.Spec().Limit)
			if _, err := p.WithLimit(l.n); err != nil {
				// Beyond what the new Spec allows (a limit raised
				// above the configured one): the new configured
				// limit is in force.
				limited = false
			}
		}
		if p.Spec().Algorithm.Windowed() {
			l.unguarded = false // as SetLimitUnguarded makes it
		}
		if limited = limited && l.n != p.Spec().Limit; limited {
			limits[p.Name()] = l
		}
		// The Specs whose counters hold the policy's requests, before
		// the reload and after: the configured ones (a limit set by
		// SetLimit is guarded by it), but a limit set by
		// SetLimitUnguarded (a Fleet's share) is counted under its own
		// Spec alone.
		from, to := old.Spec(), p.Spec()
		if ol.unguarded {
			from = limitedSpec(old, ol.n)
		}
		if limited && l.unguarded {
			to = limitedSpec(p, l.n)
		}
		if cs := m.heldCarries(p, old, ol, wasLimited, l, limited, from, to, now); len(cs) > 0 {
			carries[p.Name()] = cs
		}
	}
	prev := m.rules.carries
	m.rules.carries = carries
	if errs := m.apply(policies, limits); len(errs) > 0 {
		m.rules.carries = prev
		return errs
	}
	return nil
}

// heldCarries returns the guards a reload gives p, replacing old (see
// SetPolicies): every Spec whose counters hold requests of the policy
// counted before the reload, the reload's guards still running among
// them, that guards what p enforces. Those Specs are the guards of old
// in force (the Specs earlier reloads replaced, each until its own end),
// from, old's configured Spec (or the Spec of its limit set by
// SetLimitUnguarded), and the Spec of old's limit in force (ol, set by
// SetLimit, of a kind not folded into its guard's: the bucket kinds, a
// sliding_log raised), whose counters alone know what the client used
// under that limit. Each that tightens p's configured Spec (to: or p's
// limit set by SetLimitUnguarded) or p's Spec at its limit in force (l),
// or holds them as a window kind's judged at their limit (holds), guards
// p, but to's own Spec (its counters count p's requests from now on, and
// hold those before) and the Spec p enforces at a limit when it was old's
// in force too (its counters go on). One that is p's Spec at its limit
// in force, a guard of old's or from, is kept to keep its own check (see
// apply). Of a window kind, those of to's shape are one (the first). Past
// policy.MaxCarries, those that guard the Spec in force stay first (one
// that guards to alone guards nothing enforced while p is held at l),
// then the Specs this reload replaces, and of the earlier guards those
// that end last. It requires m.rules.mu.
func (m *Middleware) heldCarries(p, old *policy.Policy, ol effLimit, wasLimited bool, l effLimit, limited bool, from, to algorithms.Spec, now int64) []carry {
	// A held Spec: guarded, it guards old; mayOwn, it may be p's Spec in
	// force (a guard of old's, or from).
	type held struct {
		carry
		guarded, mayOwn bool
	}
	var hs []held
	add := func(h held) {
		for i := range hs {
			if hs[i].spec == h.spec {
				hs[i].until = max(hs[i].until, h.until)
				hs[i].guarded, hs[i].mayOwn = hs[i].guarded || h.guarded, hs[i].mayOwn || h.mayOwn
				return
			}
		}
		hs = append(hs, h)
	}
	for _, c := range m.rules.carries[p.Name()] {
		if c.until > now {
			add(held{c, true, true})
		}
	}
	add(held{carry{from, addSat(now, carryFor(from))}, false, true})
	if wasLimited {
		if q, err := old.WithLimit(ol.n); err == nil {
			if ol.unguarded {
				q = q.Unguarded()
			}
			// Its own counters count its requests unless its guard's,
			// judged at its limit, stand for them (nested.Ops.Folded).
			if g, ok := q.Guard(); !(ok && q.GuardLimit(g) != g.Limit) {
				add(held{carry{q.Spec(), addSat(now, carryFor(q.Spec()))}, false, false})
			}
		}
	}
	in := p
	if limited {
		if q, err := p.WithLimit(l.n); err == nil {
			if in = q; l.unguarded {
				in = q.Unguarded()
			}
		}
	}
	toHeld := false // to's counters were a guard's: they hold every request of its time
	kept := hs[:0]
	for _, h := range hs {
		switch {
		case h.spec == to:
			// Its counters are the policy's own from now on.
			toHeld = h.guarded
		case h.spec == in.Spec():
			if h.mayOwn {
				kept = append(kept, h)
			}
		case holds(p, h.spec, to) || holds(in, h.spec, in.Spec()):
			kept = append(kept, h)
		}
	}
	// Of a window kind, the Specs of to's shape at other limits are
	// judged at the limit in force (policy.Policy.GuardLimit) on counters
	// that count the requests whatever the limit: the one counted longest,
	// each of the others' requests counted there too (as a guard, all or
	// nothing), decides for them all, till the last of their ends. to's
	// own, a guard's before, is that one.
	n := 0
	for _, h := range kept {
		if h.spec.Algorithm.Windowed() && sameShape(h.spec, to) {
			if toHeld {
				continue
			}
			if j := slices.IndexFunc(kept[:n], func(k held) bool { return sameShape(k.spec, to) }); j >= 0 {
				kept[j].until = max(kept[j].until, h.until)
				continue
			}
		}
		kept[n] = h
		n++
	}
	kept = kept[:n]
	if len(kept) > policy.MaxCarries {
		// The Specs this reload replaces know the client's latest use
		// at the tightest shape: they stay, and of the guards of
		// earlier reloads, those that end last (in the order given).
		idx := make([]int, len(kept))
		for i := range idx {
			idx[i] = i
		}
		// First those that guard the Spec in force (see apply): one
		// that guards only p's configured Spec, held lower or higher
		// by SetLimit, guards nothing the policy enforces now.
		enforced := func(h held) bool {
			s := in.Spec()
			return h.spec == s || holds(in, h.spec, s) || holds(p, h.spec, to) && s.Limit < h.spec.Limit
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			if ea, eb := enforced(kept[a]), enforced(kept[b]); ea != eb {
				if ea {
					return -1
				}
				return 1
			}
			if ga, gb := kept[a].guarded, kept[b].guarded; ga != gb {
				if gb {
					return -1
				}
				return 1
			}
			return cmp.Compare(kept[b].until, kept[a].until)
		})
		idx = idx[:policy.MaxCarries]
		slices.Sort(idx)
		sel := make([]held, 0, policy.MaxCarries)
		for _, i := range idx {
			sel = append(sel, kept[i])
		}
		kept = sel
	}
	cs := make([]carry, len(kept))
	for i, h := range kept {
		cs[i] = h.carry
	}
	return cs
}

// sameShape reports whether a and b are one Spec but for their limits.
func sameShape(a, b algorithms.Spec) bool {
	a.Limit = b.Limit
	return a == b
}

// SetLimit sets the limit the middleware enforces for the policy named
// name, in place of its configured Spec.Limit (a Burst set explicitly is
// scaled alike; see [policy.Policy.WithLimit]); limit 0 restores the
// configured limit. The change is atomic, like [Middleware.SetPolicies];
// setting the limit in force does nothing.
//
// The stores key their state by Spec, so a new limit is a Spec whose
// counters start from a full allowance; lowering a limit must not hand
// every client a fresh quota. So a limit below the configured one is
// guarded by the configured Spec ([policy.Policy.WithLimit],
// [policy.Policy.Guard]): each request of the policy is also checked and
// counted under the configured Spec, in the same store call, all or
// nothing, and its decision (the headers, the 429's Retry-After) reports
// the stricter of the two. The configured Spec's counters go on through
// every change of limit (but not while a reload's guard stands in for
// them: see [Middleware.SetPolicies]).
//
// For a window kind (fixed_window, sliding_window, sliding_log,
// sliding_buckets), whose counters count requests whatever the limit,
// the configured Spec's are judged at the limit in force
// ([policy.Policy.GuardLimit]): within a window a client never gets more
// than the limit in force, counting everything it used in that window,
// however often the limit moves. A client that used 40 of its 100 per
// minute gets 10 more when the limit drops to 50 (as an operator
// lowering a login limit during an attack expects), one that used 50 or
// more none; each gets 50 in the next minute, and, the limit raised back
// to 100 within the minute, 100 less all it used in it. For
// token_bucket, leaky_bucket and leaky_queue, whose state is a function
// of their rate (a bucket refilled at 100 a minute cannot be read at 50),
// the configured Spec is checked at the configured limit: within one
// window a client never gets more than the configured limit, however
// often the limit moves, nor more than the new limit since the change
// (the client that used 40 gets 50 more at 50; one that used all 100
// gets what the configured bucket refills). For a window kind the
// configured Spec's counters, judged at the limit in force, hold every
// request the lowered Spec's would, and more: they alone decide, one check
// per request as when unlowered, and nothing counts under the lowered
// Spec's own counters ([policy.Policy.Guards]; but for a while after a
// reload that carries the limit onto a Spec whose counters hold requests,
// see [Middleware.SetPolicies]). For the other kinds it
// costs a second check per request (in the same store call) while the
// limit is lowered. Going back to the configured limit finds its
// counters, holding every request counted meanwhile. A limit above the
// configured one is judged on the configured Spec's counters too, in one
// check, for fixed_window, sliding_window and sliding_buckets (a client
// that used 100 of 100 gets 50 more at 150, not 150); for a sliding_log
// (whose log holds the instants of no more than its limit's requests)
// and the bucket kinds it is not guarded: its counters start from a full
// allowance. Nor is a limit set by [Middleware.SetLimitUnguarded] of a
// bucket kind guarded. Package middleware/adaptive sets limits
// from the service's health (SetLimit) and the number of instances
// (SetLimitUnguarded).
//
// A request whose cost ([policy.WithCost]) is above a lowered limit's
// capacity but within the configured one cannot be admitted now, but can
// be once the limit is back: the policy denies it, as it denies a request
// it has no room for now ([policy.Result.AboveLimit]), consuming nothing
// under any policy. It is answered 429 with the policy's rate-limit
// fields at the limit in force (as a peek at the store reads the key),
// counted in Stats.Denied and observed as Denied (ShadowDenied in shadow
// mode, which lets it through), not reported to the error handler; the
// problem's detail says the policy's limit is lowered ("The request costs
// 90 units; policy upload admits 1 to 80 while its limit is lowered (1 to
// 100 as configured)."). Its Retry-After is the wait after which the same
// request would be admitted were the configured limit back (a second peek,
// of its cost under the configured Spec), never below the policy's t nor
// 1 s: no decision knows when a limit comes back, and a retry before it
// is denied again with the wait as it stands then. Such a request costs
// two store calls, which read and write nothing (both stores of this
// module can peek; with a store that is not an [algorithms.Peeker] it is
// refused as a cost out of range, without Retry-After). A cost above the
// configured capacity is out of range whatever the limit in force.
//
// Its errors name the call and its arguments, before every problem
// ([policy.Policy.WithLimit]'s, which errors.As and [policy.Errors] find):
// `middleware: SetLimit("upload", 2000000000): policy: "upload": Spec.Limit
// must be at most 1000000000, got 2000000000`.
func (m *Middleware) SetLimit(name string, limit int64) error {
	return m.setLimit("SetLimit", name, effLimit{n: limit})
}

// SetLimitUnguarded is [Middleware.SetLimit] without the guard (a cost
// above the limit is denied alike: see SetLimit), for the
// bucket kinds (token_bucket, leaky_bucket, leaky_queue): a limit below
// the configured one is checked under its own Spec alone, whose counters
// start from a full allowance, so that a client may use, in the window of
// the change, what it used before it and the new limit as well. It suits
// a limit that stays lowered for long and changes seldom, such as one
// instance's share of a cluster-wide limit (package middleware/adaptive's
// Fleet uses it): there the guard could bind only in the window of a
// change, and would cost a second check on every request. Setting a
// limit in force with the other method switches its guard on or off;
// switched off, the lowered Spec's counters, never counted while guarded,
// start from a full allowance.
//
// Such a copy counts apart from its policy as configured: a policy given
// to two nested middlewares, one of which holds it at a share of its own
// (or both, at different shares), is decided in each under its own Spec
// and state, neither holding the other's, so that each middleware writes
// its member (q=5 further out, q=3 further in), and the IETF headers keep
// the more constraining one of the policy's name alone (see
// [ErrSameNameNested]). The middleware further in tells
// [ErrSameNameNested] then, as for two policies of one name. A copy lowered by SetLimit is guarded by the
// configured Spec, which the middleware further out counted: its member
// holds that decision and replaces the other, and nothing is reported;
// so is the same share in both (one Spec, counted once: see
// [ErrCountedTwice]). Give a share to the middleware that alone runs the
// policy, or lower it with SetLimit.
//
// For a window kind (fixed_window, sliding_window, sliding_log,
// sliding_buckets) it is SetLimit: the configured Spec's counters, which
// count requests whatever the limit, judged at the new limit, decide in
// one check, as cheap as an unguarded limit's own and exact through every
// change (a client that used 7 of 10 gets 1 more at 8, not 8), so there
// is no guard to leave out, and switching between the two methods at the
// limit in force changes nothing. A reload that lowers the limit guards
// it all the same for a while: see [Middleware.SetPolicies].
func (m *Middleware) SetLimitUnguarded(name string, limit int64) error {
	return m.setLimit("SetLimitUnguarded", name, effLimit{n: limit, unguarded: true})
}

// setLimit is SetLimit and SetLimitUnguarded (op); its errors name the
// call and its arguments: `middleware: SetLimit("per-ip", -1): ...`.
func (m *Middleware) setLimit(op, name string, limit effLimit) error {
	call := fmt.Sprintf("middleware: %s(%q, %d): ", op, name, limit.n)
	if limit.n < 0 {
		return errors.New(call + "the limit is negative")
	}
	m.rules.mu.Lock()
	defer m.rules.mu.Unlock()
	p := m.configured(name)
	if p == nil {
		return fmt.Errorf("%sno policy named %q", call, name)
	}
	if limit.n >= p.Spec().Limit || p.Spec().Algorithm.Windowed() {
		// No limit is guarded there, or a window kind's is judged on
		// the configured Spec's counters at no cost: the flag is moot.
		limit.unguarded = false
	}
	cur, ok := m.rules.limits[name]
	if !ok {
		cur = effLimit{n: p.Spec().Limit}
	}
	if cur == limit || limit.n == 0 && !ok {
		return nil // unchanged: the set is not rebuilt
	}
	limits := make(map[string]effLimit, len(m.rules.limits)+1)
	for k, v := range m.rules.limits {
		limits[k] = v
	}
	if limit.n == 0 || limit.n == p.Spec().Limit {
		delete(limits, name)
	} else {
		limits[name] = limit
	}
	return errlist.Join(wrapEach(call, m.apply(m.rules.base, limits)))
}

// Configured returns the policy named name as configured (before any
// [Middleware.SetLimit]), or nil.
func (m *Middleware) Configured(name string) *policy.Policy {
	m.rules.mu.Lock()
	defer m.rules.mu.Unlock()
	return m.configured(name)
}

// configured requires m.rules.mu.
func (m *Middleware) configured(name string) *policy.Policy {
	for _, p := range m.rules.base {
		if p.Name() == name {
			return p
		}
	}
	return nil
}

// apply builds the set of base with limits (see build) and makes it the
// active one, or returns the problems build found. It requires
// m.rules.mu.
func (m *Middleware) apply(base []*policy.Policy, limits map[string]effLimit) []error {
	set, until, errs := m.build(base, limits)
	if len(errs) > 0 {
		return errs
	}
	m.sets.add(set)
	old := m.set.Swap(set)
	m.carryUntil.Store(until)
	oldBase := m.rules.base
	m.rules.base = append([]*policy.Policy(nil), base...)
	m.rules.limits = limits
	if m.obs != nil && !m.rules.closed {
		m.notifyLimits(old, oldBase, set)
	}
	return nil
}

// build returns the set of base with limits, guarded by the carries of
// m.rules (dropping those that ended), and the earliest instant at
// which such a guard ends (0: none). Else it returns every independent
// problem, each without this package's prefix, which the caller adds
// with the call it names (see wrapEach): a copy at a limit its Spec does
// not allow (Policy.WithLimit's problems, which leave no set to judge),
// or the set's (policy.NewSet's, several joined) and those of
// canGiveBack. It requires m.rules.mu, and changes nothing else.
func (m *Middleware) build(base []*policy.Policy, limits map[string]effLimit) (*policy.Set, int64, []error) {
	eff := make([]*policy.Policy, len(base))
	now, until := m.clock.Now().UnixNano(), int64(0)
	for i, p := range base {
		eff[i] = p
		if p == nil {
			continue
		}
		cs := m.rules.carries[p.Name()]
		if live := slices.DeleteFunc(slices.Clone(cs), func(c carry) bool { return c.until <= now }); len(live) == 0 {
			delete(m.rules.carries, p.Name())
			cs = nil
		} else if len(live) < len(cs) {
			m.rules.carries[p.Name()] = live
			cs = live
		}
		for _, c := range cs {
			if c.spec != p.Spec() && holds(p, c.spec, p.Spec()) {
				if g, err := p.WithGuard(c.spec); err == nil {
					// Guarded by a Spec a reload replaced (a lowered
					// copy below keeps that guard).
					p, eff[i] = g, g
				}
			}
		}
		if l, ok := limits[p.Name()]; ok {
			q, err := p.WithLimit(l.n)
			if err != nil {
				return nil, 0, []error{err}
			}
			if l.unguarded {
				q = q.Unguarded()
			}
			eff[i] = q
		}
		for _, c := range cs {
			e := eff[i]
			switch {
			case e.Spec() == c.spec:
				// The copy at the limit in force is the Spec a reload
				// replaced (see setPolicies): it keeps its own check
				// on that Spec's counters (policy.Policy.WithGuard).
				if g, err := e.WithGuard(c.spec); err == nil {
					eff[i] = g
				}
			case slices.Contains(e.Guards(), c.spec):
			case c.spec != p.Spec() && holds(p, c.spec, p.Spec()) && e.Spec().Limit < c.spec.Limit || holds(e, c.spec, e.Spec()):
				// The copy at a limit set by SetLimitUnguarded has no
				// guard, and a share a reload replaced (see
				// setPolicies) cannot guard the configured policy,
				// which it holds less than, nor can the Spec of a
				// lowered limit a reload replaced, of a slower rate:
				// the copy at the limit (lower, or tightened
				// otherwise, as by a lower burst) is guarded by it,
				// as a lowered copy keeps the guard of the configured
				// policy.
				if g, err := e.WithGuard(c.spec); err == nil {
					eff[i] = g
				}
			}
			if (slices.Contains(eff[i].Guards(), c.spec) || eff[i].Spec() == c.spec) && (until == 0 || c.until < until) {
				until = c.until
			}
		}
	}
	var setOpts []policy.SetOption
	if m.pattern != nil {
		setOpts = append(setOpts, policy.WithPatternFunc(m.pattern))
	}
	var errs []error
	set, err := policy.NewSet(eff, setOpts...)
	if err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, m.canGiveBack(base)...)
	if len(errs) > 0 {
		return nil, 0, errs
	}
	return set, until, nil
}

// canGiveBack refuses a policy of ps that counts only some responses
// ([policy.CountIf]) when the store, or the fallback store, cannot give
// units back (is no [algorithms.GiveBacker], as a wrapper that forwards
// Take alone is not): every response would count, silently. The store
// and the fallback are judged apart; a nil store (refused by New) is not
// judged.
func (m *Middleware) canGiveBack(ps []*policy.Policy) []error {
	i := slices.IndexFunc(ps, func(p *policy.Policy) bool { return p != nil && !p.CountsAll() })
	if i < 0 {
		return nil
	}
	var errs []error
	check := func(what string, store algorithms.Store) {
		if _, ok := store.(algorithms.GiveBacker); !ok && store != nil {
			errs = append(errs, fmt.Errorf("policy %q: CountIf needs a store that gives units back (an algorithms.GiveBacker); the %s, a %T, is not one", ps[i].Name(), what, store))
		}
	}
	check("store", m.store)
	if m.failure.mode == fallBack {
		check("fallback store", m.failure.store)
	}
	return errs
}

// notifyLimits tells the observer of every policy whose effective or
// configured limit is new or changed between the sets old (nil at
// construction, configured as oldBase) and set; if it is a
// [PolicyObserver], of the configured Spec of every policy new or whose
// configured Spec changed, before its limits; and, if it is a
// [RemovalObserver], of every policy of old that set no longer has. It
// requires m.rules.mu.
func (m *Middleware) notifyLimits(old *policy.Set, oldBase []*policy.Policy, set *policy.Set) {
	type told struct {
		eff  int64
		conf algorithms.Spec
	}
	prev := map[string]told{}
	if old != nil {
		for i, p := range old.Policies() {
			prev[p.Name()] = told{p.Spec().Limit, oldBase[i].Spec()}
		}
	}
	po, _ := m.obs.(PolicyObserver)
	for _, p := range set.Policies() {
		cur := told{p.Spec().Limit, p.Spec()}
		if c := m.configured(p.Name()); c != nil {
			cur.conf = c.Spec()
		}
		pt, ok := prev[p.Name()]
		delete(prev, p.Name())
		if po != nil && (!ok || pt.conf != cur.conf) {
			po.ObservePolicy(p.Name(), cur.conf)
		}
		if ok && pt.eff == cur.eff && pt.conf.Limit == cur.conf.Limit {
			continue
		}
		m.obs.ObserveLimit(p.Name(), cur.eff, cur.conf.Limit)
	}
	if ro, ok := m.obs.(RemovalObserver); ok && len(prev) > 0 {
		for _, p := range old.Policies() { // in the old set's order
			if _, gone := prev[p.Name()]; gone {
				ro.ObservePolicyRemoved(p.Name())
			}
		}
	}
}

// scaleLimit returns l·to/from rounded down and at least 1 (saturating):
// an effective limit l of a policy configured at from, carried over to its
// new configured limit to.
func scaleLimit(l, from, to int64) int64 {
	hi, lo := bits.Mul64(uint64(l), uint64(to))
	if hi >= uint64(from) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(from))
	return max(1, int64(min(q, math.MaxInt64)))
}
