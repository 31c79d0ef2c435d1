package middleware

import (
	"errors"
	"fmt"
	"math/bits"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ratekeeper/ratekeeper/policy"
)

// ErrCountedTwice is told to the error handler (once per Middleware) the
// first time a policy applies to a request that a middleware further out
// has already decided under the same policy and key: a middleware nested in
// itself (chi's r.Use and then r.With of the same one on a route), or one
// *policy.Policy given to two nested middlewares. Each would count the
// request again, halving the policy's limit for the requests that pass
// both. The middleware further in leaves such a policy out of its own
// decision (its headers, its Take), so that the request counts once,
// whatever the modes: a middleware further out in shadow mode
// ([WithShadow]) counts the requests it admits as any other does. One
// that it denied consumed nothing there (a Take is all or nothing), so the
// middleware further in decides the policy, and refuses the request
// unless it is in shadow mode too: a shadow middleware further out
// neither lifts nor doubles the limit of one further in. (A leaky_queue
// place it took is not held for by the one further in: the request goes
// on at once, and the queue refuses it there only once it is full.)
//
// A middleware further out that decided nothing (its store failed and it
// let the request through, [FailOpen]) has counted nothing: the policy is
// decided further in, under the failure mode of the middleware further
// in ([FailClosed] answers 503 there). A policy whose key differs further
// in (keyfunc.FirstOf(keyfunc.User(), ip) before and behind the
// authentication) counts the request in another bucket, and is decided
// there too. A middleware built [WithoutContext] is not seen by
// those further in: nested in itself, it counts twice. Like
// [ErrForwardingIgnored], the report is also logged when the middleware
// logs.
var ErrCountedTwice = errors.New("middleware: a policy applies to a request already decided under it further out")

// unrepeated returns the policies of res, prepared for r (see
// policy.Set.Prepare), that a middleware further out (in r's context) has
// already counted for r under the same key, as a mask over set, telling
// the error handler, once, of any policy so met twice. A middleware counted
// the request when its Take admitted it, in shadow mode too: a denied
// Take consumed nothing (all or nothing), so the policies of one that
// denied (which only a middleware in shadow mode lets through) are decided
// here. A policy checked there under another key (a user that an
// authentication middleware in between made known) counts in another
// bucket, and is no repeat. shadowed is the part of again that only
// middlewares in shadow mode counted: this one enforces it on the retry
// (see outerWait).
func (m *Middleware) unrepeated(r *http.Request, set *policy.Set, res *policy.Result) (again, shadowed uint64) {
	var enforced, uncounted uint64
	eachOuter(r.Context(), outerKey{}, 0, func(c *resultContext, _ time.Duration) bool {
		o := &c.res.Result
		if !o.Taken() {
			// Its store failed and it let the request through (or it
			// found no key, in shadow mode): it decided nothing, and
			// counted nothing, so the policies it met are decided here,
			// under this middleware's failure mode.
			return true
		}
		counted := o.Allowed()
		for j := range o.Len() {
			p := o.Policy(j)
			// The i-th policy of res is the i-th of its mask.
			for i, b := 0, res.Mask(); b != 0; i, b = i+1, b&(b-1) {
				bit := b & -b
				if res.Policy(i) != p {
					continue
				}
				if res.Key(i) == o.Key(j) {
					switch {
					case !counted:
						uncounted |= bit
					case c.res.Shadow:
						shadowed |= bit
					default:
						enforced |= bit
					}
				}
				break
			}
		}
		return true
	})
	again = enforced | shadowed
	shadowed &^= enforced
	uncounted &^= again
	if again|uncounted != 0 && m.tells() && !m.stats.twiceTold.Load() && m.stats.twiceTold.CompareAndSwap(false, true) {
		var names []string
		for b := again | uncounted; b != 0; b &= b - 1 {
			names = append(names, strconv.Quote(set.Policy(bits.TrailingZeros64(b)).Name()))
		}
		what := "left out here, so that it counts once"
		if again == 0 {
			what = "decided here, since the middleware further out, in shadow mode, denied the request and counted nothing"
		}
		m.warn(r, fmt.Errorf("%w (policies %s, on a %s request): a middleware nested in itself, or a policy given to two nested middlewares; %s",
			ErrCountedTwice, strings.Join(names, ", "), r.Method, what))
	}
	return again, shadowed
}
