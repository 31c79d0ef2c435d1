package middleware

import (
	"context"
	"net/http"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/reqcopy"
	"github.com/ratekeeper/ratekeeper/internal/timing"
	"github.com/ratekeeper/ratekeeper/policy"
)

// oneMemberPerName leaves in h, under the IETF profile (and
// IETFMostConstraining, which writes its lines), one member of each name
// in each field where res, decided here and written with vals, and a
// middleware further out in ctx both wrote a member of that name: a
// policy of that name there that counts apart from ours (see
// ErrSameNameNested), the same policy keyed apart (another bucket), a
// copy of it whose member the middleware further in writes beside the
// one further out (a leaky_queue's, a window kind's raised further in
// or lowered further out). A policy name identifies the policy its
// members describe, in each field and across the two: a client cannot
// tell two members of one name apart, nor match a RateLimit member to
// its RateLimit-Policy one.
//
// The member that stands, in both fields, is the one of the middleware
// whose RateLimit member of the name is the more constraining: the
// lower r; of equal r the longer t; of equal t the lower q (the member
// that a window of the policies admits the fewest requests in); of
// equal members, the one further out. It is the member a client reading
// both would have had to follow: the response never reports more room
// than the request finds, as with both members. Where only one
// RateLimit line holds a member of the name (under IETFMostConstraining
// each holds one member), that one stands; where neither does, the more
// constraining decision (see moreConstraining) chooses the
// RateLimit-Policy member. The other middleware's members of the name
// are removed from its lines, and a line left empty goes (but for a
// RateLimit line of one member, see dropMember). Both policies are still
// enforced.
//
// It is called once every middleware the request passed has written its
// members, restated or replaced those further out (see restateOuter,
// unlistOuter): as the response's status is written (see passShared),
// or as this middleware answers the request itself. Called before, it
// would remove members that a middleware further in restates or merges.
//
// held is the hold of the request since this middleware's decision, where
// ctx does not tell it (ctx is the one the request came with): a member
// removed from a line of one member (IETFMostConstraining) makes way for
// the line's next most constraining policy, counted after the holds (see
// dropMember).
//
// self is the Result this middleware put in the context of the request
// it passed on, which ctx may hold (the others in ctx are further out's);
// res is self, or a copy of it holding the decisions as they are now
// (see counted), and vals the header values of res.
func oneMemberPerName(ctx context.Context, h http.Header, self, res *Result, vals *[2]string, held time.Duration) {
	if vals == nil || res.wrote != uint8(IETF)+1 || !decided(&res.pr) {
		return
	}
	// The hold since our decision: ctx tells it when it is the context of
	// the request passed on.
	own := held
	eachOuter(ctx, chainKey{}, held, func(c *resultContext, since time.Duration) bool {
		if &c.res != self {
			return true
		}
		own = since
		return false
	})
	for i := range res.Len() {
		name := res.Policy(i).Name()
		eachOuter(ctx, chainKey{}, 0, func(c *resultContext, held time.Duration) bool {
			if &c.res == self {
				return true // the context of the request passed on is ours
			}
			if c.res.wrote != uint8(IETF)+1 {
				return false // its lines are not IETF's, nor those further out
			}
			oq, inP := paramOf(c.vals[0], name, "q")
			or, inR := paramOf(c.vals[1], name, "r")
			if !inP && !inR {
				return true
			}
			q, ownP := paramOf(vals[0], name, "q")
			r, ownR := paramOf(vals[1], name, "r")
			if !ownP && !ownR {
				return false // ours went already
			}
			var outerStands bool
			switch {
			case inR && ownR:
				ot, _ := paramOf(c.vals[1], name, "t")
				t, _ := paramOf(vals[1], name, "t")
				outerStands = or < r || or == r && (ot > t || ot == t && (!ownP || inP && oq <= q))
			case inR != ownR:
				outerStands = inR
			default:
				d, ok := outerDecision(&c.res.pr, name, held)
				outerStands = ok && !moreConstraining(res.Decision(i), d)
			}
			if outerStands {
				dropMember(h, vals, &res.pr, res.marks&markMost != 0, name, own)
				return false
			}
			dropOuterMember(ctx, h, c, name, held)
			return true
		})
	}
}

// sharesName reports whether res, decided here and written with vals
// under the IETF profile, has a member of a name that a middleware
// further out in ctx wrote a member of too (see oneMemberPerName).
func sharesName(ctx context.Context, res *Result, vals *[2]string) bool {
	if vals == nil || res.wrote != uint8(IETF)+1 || !decided(&res.pr) {
		return false
	}
	found := false
	for i := 0; i < res.Len() && !found; i++ {
		name := res.Policy(i).Name()
		eachOuter(ctx, chainKey{}, 0, func(c *resultContext, _ time.Duration) bool {
			if &c.res == res {
				return true
			}
			if c.res.wrote != uint8(IETF)+1 {
				return false
			}
			_, inP := paramOf(c.vals[0], name, "q")
			_, inR := paramOf(c.vals[1], name, "r")
			found = inP || inR
			return !found
		})
	}
	return found
}

// outerDecision returns o's decision of its policy named name, counted
// after held (see afterHold), and whether o has a policy of that name.
func outerDecision(o *policy.Result, name string, held time.Duration) (algorithms.Decision, bool) {
	for j := range o.Len() {
		if o.Policy(j).Name() == name {
			return afterHold(o.Decision(j), held), true
		}
	}
	return algorithms.Decision{}, false
}

// passShared is pass for r, decided as res whose headers were written
// with vals; when shared (see sharesName), through a writer that makes
// the members of each name one (see oneMemberPerName) as the status is
// written, or once next returned having written nothing: the middlewares
// further in have written theirs then. It allocates only when shared.
func passShared(w http.ResponseWriter, caller, r *http.Request, next http.Handler, res *Result, vals *[2]string, shared bool) {
	if !shared {
		pass(w, caller, r, next)
		return
	}
	if r != caller {
		defer reqcopy.Back(caller, r)
	}
	u := &uniqueNames{ctx: r.Context(), h: w.Header(), res: res, vals: vals}
	timing.ServeStatus(w, r, next, u.written, u.done)
}

// uniqueNames makes one the members of each name of res as the response
// served by passShared goes out. Once the request is passed on, vals is
// shared with the middlewares further in, which read it, perhaps on a
// goroutine of their own (see counted): the lines are edited with a copy
// of it, made when the status is written or the handler has returned.
type uniqueNames struct {
	ctx  context.Context
	h    http.Header
	res  *Result
	vals *[2]string
	own  [2]string
}

func (u *uniqueNames) written(int) {
	u.own = *u.vals
	oneMemberPerName(u.ctx, u.h, u.res, u.res, &u.own, 0)
}

func (u *uniqueNames) done(_ int, sent bool) {
	if !sent {
		u.own = *u.vals
		oneMemberPerName(u.ctx, u.h, u.res, u.res, &u.own, 0)
	}
}
