package middleware

import (
	"net/http"
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/ratekeeper/ratekeeper/policy"
)

// builtSets are the rule sets a middleware has built (see apply) that are
// still alive: the active one and those that requests in flight were
// decided under. A middleware nested in itself finds there the set its
// layer further out decided a request under (see startedSet). The sets are
// held weakly: one that no request holds any more is collected, and its
// entry dropped, so an adaptive controller's many SetLimit calls leave
// nothing behind.
type builtSets struct {
	sets sync.Map // weak.Pointer[policy.Set] → struct{}
}

// add records s, a set the middleware built.
func (b *builtSets) add(s *policy.Set) {
	wp := weak.Make(s)
	b.sets.Store(wp, struct{}{})
	// The cleanup reaches b, which holds s only weakly: s stays
	// collectable.
	runtime.AddCleanup(s, b.drop, wp)
}

// drop forgets a set that was collected.
func (b *builtSets) drop(wp weak.Pointer[policy.Set]) { b.sets.Delete(wp) }

// has reports whether the middleware built s.
func (b *builtSets) has(s *policy.Set) bool {
	if s == nil {
		return false
	}
	_, ok := b.sets.Load(weak.Make(s))
	return ok
}

// startedSet returns the rule set a layer of m further out in r's context
// decided r under, when it is not set, the one m's layer serving r loaded:
// m is nested in itself (see ErrCountedTwice) and its rules were replaced
// ([Middleware.SetPolicies], [Middleware.SetLimit]) after r came in, for
// example while the layer further out held r for a leaky_queue Delay. It
// returns nil when no layer of m further out decided r, or the innermost
// that did decided it under set.
//
// r is then decided under the set it started with, in every layer, as
// SetPolicies promises: the layer further in finds the policies the layer
// further out counted (the same *policy.Policy values) and leaves them out,
// where under the new set, whose policies a reload rebuilt, it would count
// r again in the state of each policy whose name and Spec are unchanged,
// and hold it for a second place in a queue.
func (m *Middleware) startedSet(r *http.Request, set *policy.Set) *policy.Set {
	var started *policy.Set
	eachOuter(r.Context(), outerKey{}, 0, func(c *resultContext, _ time.Duration) bool {
		s := c.res.Set()
		switch {
		case s == set:
			return false
		case m.sets.has(s):
			started = s
			return false
		}
		return true // another middleware's
	})
	return started
}
