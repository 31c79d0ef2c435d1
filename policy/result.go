package policy

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
	"unsafe"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// inline is the number of policies a Result holds without allocating.
const inline = 4

// keyBufLen is the room a Result has for its namespaced keys without
// allocating.
const keyBufLen = 96

// A Result is the evaluation of a Set for one request: the policies that
// applied and, once taken, their decisions. Fill it with [Set.Prepare] and
// then [Result.Take]. The zero Result is empty and ready for Prepare; a
// Result is reused by calling Prepare again.
//
// A Result holds up to four policies and their keys without allocating, and
// Take borrows its check buffer from a pool, so a request costs no
// allocation here beyond the Result itself.
//
// A Result is not safe for concurrent mutation; once taken it is read-only
// and may be read from any goroutine.
type Result struct {
	set       *Set
	mask      uint64 // applicable and not skipped
	skipped   uint64 // applicable, skipped for want of a key
	taken     bool
	policies  []*Policy
	keys      []string
	costs     []int64
	decisions []algorithms.Decision

	polArr  [inline]*Policy
	keyArr  [inline]string
	costArr [inline]int64
	decArr  [inline]algorithms.Decision
	// keyBuf backs the namespaced keys when they fit; only the next
	// Prepare writes it again (see Prepare).
	keyBuf [keyBufLen]byte
}

// Prepare resets res and fills it with one check per policy of s in mask
// (from [Set.Match]) that applies to r: its namespaced key ("name:key") and
// its cost. Nothing is consumed.
//
// A policy whose key function fails is left out if its action is
// [SkipPolicy]; otherwise Prepare returns a *KeyError (the caller rejects
// the request with the action's status). A cost out of range returns a
// *CostError.
//
// The keys of a Result are only valid until the next Prepare on it: a
// caller that reuses a Result must not keep its keys (the stores of this
// module do not keep them).
func (s *Set) Prepare(r *http.Request, mask uint64, res *Result) error {
	res.set = s
	res.mask, res.skipped, res.taken = 0, 0, false
	res.policies, res.keys, res.costs = res.polArr[:0], res.keyArr[:0], res.costArr[:0]
	total := 0
	for i, p := range s.policies {
		if mask&(1<<i) == 0 {
			continue
		}
		key, err := p.key(r)
		if err != nil {
			if p.onKey == SkipPolicy {
				res.skipped |= 1 << i
				continue
			}
			res.clear()
			return &KeyError{Policy: p, Action: p.onKey, Err: err}
		}
		cost := int64(1)
		if p.cost != nil {
			cost = p.cost(r)
			if cost < 1 || cost > p.capacity {
				res.clear()
				return &CostError{Policy: p, Cost: cost}
			}
		}
		res.mask |= 1 << i
		res.policies = append(res.policies, p)
		res.keys = append(res.keys, key)
		res.costs = append(res.costs, cost)
		total += len(p.name) + 1 + len(key)
	}
	// Namespace every key with its policy's name ("name:key"; names
	// contain no ':', so the result is unambiguous), all in one buffer:
	// res.keyBuf when they fit, else one allocation.
	var b []byte
	if total <= keyBufLen {
		b = res.keyBuf[:0]
	} else {
		b = make([]byte, 0, total)
	}
	for i, key := range res.keys {
		b = append(b, res.policies[i].name...)
		b = append(b, ':')
		b = append(b, key...)
	}
	off := 0
	for i, key := range res.keys {
		n := len(res.policies[i].name) + 1 + len(key)
		// The bytes are never written again while the string lives: a
		// reused Result writes them again only in the next Prepare, whose
		// documented contract ends the life of these keys.
		res.keys[i] = unsafe.String(&b[off], n)
		off += n
	}
	switch n := len(res.keys); {
	case n <= inline:
		res.decisions = res.decArr[:n]
	case cap(res.decisions) < n:
		res.decisions = make([]algorithms.Decision, n)
	default:
		res.decisions = res.decisions[:n]
	}
	return nil
}

func (res *Result) clear() {
	res.mask = 0
	res.policies, res.keys, res.costs, res.decisions = res.polArr[:0], res.keyArr[:0], res.costArr[:0], res.decArr[:0]
}

// checkBuf is a pooled buffer of checks for one Take.
type checkBuf struct{ checks [16]algorithms.Check }

var checkPool = sync.Pool{New: func() any { return new(checkBuf) }}

// Take decides every prepared check in one call to store, all or nothing:
// with an [algorithms.IntoStore] it writes into res's buffers without
// allocating. The error is the store's, wrapped; res is then not taken.
// Taking a Result with no checks does not call the store.
func (res *Result) Take(ctx context.Context, store algorithms.Store) error {
	res.taken = false
	n := len(res.keys)
	if n == 0 {
		res.taken = true
		return nil
	}
	var checks []algorithms.Check
	var buf *checkBuf
	if n <= len(buf.checks) {
		buf = checkPool.Get().(*checkBuf)
		checks = buf.checks[:n]
	} else {
		checks = make([]algorithms.Check, n)
	}
	for i, p := range res.policies {
		checks[i] = algorithms.Check{Spec: p.spec, Key: res.keys[i], Cost: res.costs[i]}
	}
	err := res.take(ctx, store, checks)
	if buf != nil {
		clear(checks) // drop the keys
		checkPool.Put(buf)
	}
	if err != nil {
		return err
	}
	res.taken = true
	return nil
}

func (res *Result) take(ctx context.Context, store algorithms.Store, checks []algorithms.Check) error {
	if is, ok := store.(algorithms.IntoStore); ok {
		if err := is.TakeInto(ctx, res.decisions, checks); err != nil {
			return fmt.Errorf("policy: store: %w", err)
		}
		return nil
	}
	ds, err := store.Take(ctx, checks...)
	if err != nil {
		return fmt.Errorf("policy: store: %w", err)
	}
	if len(ds) != len(checks) {
		return fmt.Errorf("policy: store: %d decisions for %d checks", len(ds), len(checks))
	}
	copy(res.decisions, ds)
	return nil
}

// Taken reports whether res holds decisions (Take succeeded).
func (res *Result) Taken() bool { return res.taken }

// Len returns the number of policies evaluated (applicable, with a key).
func (res *Result) Len() int { return len(res.policies) }

// Policy returns the i-th evaluated policy, in Set order.
func (res *Result) Policy(i int) *Policy { return res.policies[i] }

// Key returns the key the i-th policy was checked under, namespaced by the
// policy's name ("per-ip:192.0.2.1").
func (res *Result) Key(i int) string { return res.keys[i] }

// Cost returns the cost the i-th policy was charged (if allowed).
func (res *Result) Cost(i int) int64 { return res.costs[i] }

// Decision returns the i-th policy's decision; the zero Decision before Take.
func (res *Result) Decision(i int) algorithms.Decision {
	if !res.taken {
		return algorithms.Decision{}
	}
	return res.decisions[i]
}

// Mask returns the policies evaluated, as a mask over the Set.
func (res *Result) Mask() uint64 { return res.mask }

// SkippedMask returns the policies that applied but were left out because
// their key could not be extracted ([SkipPolicy]).
func (res *Result) SkippedMask() uint64 { return res.skipped }

// Set returns the Set res was prepared by (nil for the zero Result).
func (res *Result) Set() *Set { return res.set }

// Allowed reports whether every decision allowed the request (true for a
// taken Result with no checks, false before Take).
func (res *Result) Allowed() bool {
	if !res.taken {
		return false
	}
	for i := range res.decisions {
		if !res.decisions[i].Allowed {
			return false
		}
	}
	return true
}

// Delay returns the longest Delay among the decisions: how long a
// leaky_queue policy asks the caller to hold the request.
func (res *Result) Delay() time.Duration {
	var d time.Duration
	if !res.taken {
		return 0
	}
	for i := range res.decisions {
		d = max(d, res.decisions[i].Delay)
	}
	return d
}

// RetryAfter returns, for a denied request, how long the client should wait:
// the longest RetryAfter among the violated policies, and never less than
// their NextAfter (the t of the RateLimit header). It is 0 when allowed.
func (res *Result) RetryAfter() time.Duration {
	var d time.Duration
	if !res.taken {
		return 0
	}
	for i := range res.decisions {
		if dec := res.decisions[i]; !dec.Allowed {
			d = max(d, dec.RetryAfter, dec.NextAfter)
		}
	}
	return d
}

// Lowest returns the index of the decision that single-valued headers
// report: among the denied decisions if any (else all), the one with the
// lowest Remaining, and on a tie the longest ResetAfter. It returns -1 when
// res holds no decisions.
func (res *Result) Lowest() int {
	if !res.taken || len(res.decisions) == 0 {
		return -1
	}
	best := 0
	for i := 1; i < len(res.decisions); i++ {
		if lower(res.decisions[i], res.decisions[best]) {
			best = i
		}
	}
	return best
}

// lower reports whether d is reported in preference to b.
func lower(d, b algorithms.Decision) bool {
	if d.Allowed != b.Allowed {
		return !d.Allowed
	}
	if d.Remaining != b.Remaining {
		return d.Remaining < b.Remaining
	}
	return d.ResetAfter > b.ResetAfter
}
