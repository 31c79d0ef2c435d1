package middleware

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/lowest"
	"github.com/ratekeeper/ratekeeper/internal/nested"
	"github.com/ratekeeper/ratekeeper/policy"
)

// nest holds the operations of a policy.Result that decide a policy
// nested in another middleware (leave out the checks a middleware further
// out counted, merge in its decisions, match their states), which package
// policy keeps off its API: a handler holding the request's Result must
// not call them.
var nest = nested.Of[*policy.Result]()

// ErrCountedTwice is told to the error handler (once per Middleware) the
// first time a policy applies to a request that a middleware further out
// has already decided under the same policy and key: a middleware nested in
// itself (chi's r.Use and then r.With of the same one on a route), one
// *policy.Policy given to two nested middlewares, or two policies of one
// name and Spec (one state in the store). Each would count the
// request again, halving the policy's limit for the requests that pass
// both. The middleware further in leaves such a policy out of its own
// decision (its headers, its Take), so that the request counts once,
// whatever the modes: a middleware further out in shadow mode
// ([WithShadow]) counts the requests it admits as any other does. One
// that it denied consumed nothing there (a Take is all or nothing), so the
// middleware further in decides the policy, and refuses the request
// unless it is in shadow mode too: a shadow middleware further out
// neither lifts nor doubles the limit of one further in. (The requests it
// counted and the one further in refused, judged at a limit lowered there,
// stay counted: a limit raised again within the window, a Fleet's share
// or a Controller's level, finds them there.) The IETF
// headers then report the policy once, as the middleware further in
// decided it: its list member replaces the shadow one's. (A leaky_queue
// place it took is not held for by the one further in: the request goes
// on at once, and the queue refuses it there only once it is full.)
//
// A copy of the policy lowered further in ([Middleware.SetLimit], a
// reload) is guarded by the Spec it was lowered from, which a middleware
// further out running the policy at that Spec counts the request under:
// that state is not counted twice either, but for a window kind the copy
// judges it at its lowered limit ([policy.Policy.GuardLimit]) from the
// decision further out, so that a client gets no more than the lowered
// limit, counting everything it used in the window. A request past it is
// refused further in, where its guard is checked again (a refused Take
// counts nothing); the middleware further out, which admitted it, has
// counted it. The response reports the policy once, as the middleware
// further in decided it: the member further out reports the same state
// at a limit not in force (r=15 of its 20 on the 429 of a copy reloaded
// to 4 further in), and goes, where the decision further in holds every
// state it reports. A window kind's copy lowered by SetLimit, checked on
// its guard's state alone when not nested ([policy.Policy.WithLimit]),
// is checked further in under its own lowered Spec instead, the guard
// left out (a store call checks each policy it decides under one Spec at
// least): a second check of the request, in a state of the copy's own
// that only such a nested copy counts in, and that holds no more than
// the guard's state judged there. It costs the store a key per client
// while the limit is lowered, and takes nothing from the limit in force,
// whose state counts the request once. Observers are told the request once
// under the policy: the middleware further in reports the copy counted
// further out ([Event.CountedFurtherOut]), and the metrics packages do
// not count it allowed there again, so that lowering a limit further in
// does not double the allowed rate they report; a request the copy
// refuses counts denied there, the middleware further out having counted
// it allowed. Conversely, a window kind's copy lowered by SetLimit
// further out is checked on the configured Spec's state alone
// (one check per request: see [policy.Policy.Guards]) and counts nothing
// under its lowered Spec: a
// policy further in that counts under that Spec itself (built at that
// limit, by New or by a reload) is decided further in, under it, the
// configured Spec's state left out there.
//
// A window kind's copy raised further out (SetLimit above the configured
// limit, a reload raising it) judges the state of the Spec it was raised
// from at its higher limit. A middleware further in running the policy
// at that Spec leaves it out while that state holds no more than its own
// limit, and decides it, refusing, past it. Either way its lower limit
// holds the client, and the response reports the policy once, at it:
// the IETF member further out is restated with the q and r of this
// middleware (q=5, r = 5 - used, not q=8 and r = 8 - used: the same
// state, the same w and t), and replaced by its refusing one past it;
// the draft -06/-07 RateLimit-Policy member likewise ("5;w=60", not
// "8;w=60", unless a policy of another name has that member too: then
// both stand); a single-valued profile reports it so when it has the
// lowest remaining. Through three middlewares or more, each raised but
// the innermost (8 and 6, say), the state is counted once, by the
// outermost, the policy is held at the lowest limit the request reaches
// (the innermost refuses past its 5 what the one at 6 admits), and the
// response reports the policy once, at that limit: the member of each
// copy raised further out is restated or removed, and that of a copy
// that refuses replaces the higher ones further out. Where the
// middleware further in is in shadow mode and the one further out is
// not, the higher limit is the one in force: the member further out is
// left as it is. (The converse, a copy raised
// further in over the configured Spec further out, is no repeat: the
// one further in decides it, its guard judged from the decision further
// out at its own higher limit, and each middleware writes its member,
// as for a copy lowered further out: the lower limit is then the lower
// member's, which the response keeps, one member of a name: see
// [ErrSameNameNested].)
//
// A bucket kind's copy (token_bucket, leaky_bucket, leaky_queue), whose
// level is a function of its rate, counts every request under its own
// Spec (besides its guard, if any): one lowered further in is decided
// there under its lowered Spec (its guard, counted further out, left
// out, and the decision there of its state merged in, but for a
// leaky_queue's), and one raised further out has no
// guard, so that a middleware further in running the policy at its
// configured Spec decides it there. The member further in of a
// token_bucket or leaky_bucket lowered there then replaces the one
// further out; of a leaky_queue each middleware
// writes its member (q=7 further out and q=4 further in, for one of six
// a minute lowered to three), of which the response keeps the more
// constraining (see [ErrSameNameNested]), and holds the request in each
// of the two queues in turn.
//
// Wherever a member further in replaces the member further out of a
// policy of its name (any of the cases above), and the one further out
// counted the request and enforces it, the member that stands reports
// the binding copy: the lower q of the two, and the lower r with its t.
// A copy further in more generous than the one further out (raised
// there, or lowered further out below it by SetLimit or a reload: 3
// further out, 5 or 8 further in) is reported at the 3, its r the room
// the 3 leaves, not with the q of the copy further in; a member restated
// by a middleware in between is kept at the limit it was restated at;
// under draft -06/-07 the RateLimit-Policy member of the lower quota
// stands, not the one further in, and the single values (limit,
// remaining, reset) name a member that stands: where those of the
// middleware further out named the member that goes (a token_bucket
// of 5 lowered to 3 further in, both with 2 left), the ones further in
// replace them. So the response never reports more room, nor a higher
// quota, than the request finds in force.
//
// A middleware further out that decided nothing (its store failed and it
// let the request through, [FailOpen]) has counted nothing: the policy is
// decided further in, under the failure mode of the middleware further
// in ([FailClosed] answers 503 there). A policy whose key differs further
// in (keyfunc.FirstOf(keyfunc.User(), ip) before and behind the
// authentication) counts the request in another bucket, and is decided
// there too. A middleware built [WithoutContext] is not seen by
// those further in: nested in itself, it counts twice (and holds a
// request of a leaky_queue policy twice, taking two places). Like
// [ErrForwardingIgnored], the report is also logged when the middleware
// logs, and on [log/slog.Default] when it has neither a log nor an error
// handler.
var ErrCountedTwice = errors.New("middleware: a policy applies to a request already decided under it further out")

// ErrSameNameNested is told to the error handler (once per Middleware)
// the first time a policy applies to a request that a middleware further
// out decided under another policy of the same name: two policies that
// count apart (neither is the other, a copy of it by SetLimit or a
// reload, nor counts in its state), such as a global "api" of 100 a
// minute and a route's "api" of 5, or a bucket kind's copy lowered by
// [Middleware.SetLimitUnguarded], which counts in no state of the policy
// it was made from (see there). Both are enforced, each in its own
// state, and each middleware writes its member. Two members of one name
// in a field, which a client cannot tell apart, nor match across the
// two fields, are not sent: as the response goes out, the IETF headers
// keep the more constraining of them in each field (the lower r; of
// equal r, the longer t; then the lower q) with its middleware's
// RateLimit-Policy member, and the other policy goes unreported (so
// wherever nested middlewares write members of one name: the same
// policy keyed apart in each, or copies whose members both stand, see
// [ErrCountedTwice]). An observer's or a log's records, which name the
// policy, still cannot tell the two apart. Neither middleware knows the
// other when it is built, so none can refuse the pair; name the
// policies apart ("api", "api-login"). Like
// [ErrCountedTwice], the report is also logged when the middleware logs,
// and on [log/slog.Default] when it has neither a log nor an error
// handler. It is a warning: the request is decided as it would be
// without it.
var ErrSameNameNested = errors.New("middleware: a policy has the name of another policy a middleware further out decided the request under")

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
// (see outerWait). uncounted are the policies of res, not in again, that
// a middleware further out denied in shadow mode under the same key, or
// one of whose guards it denied so and no middleware further out counted:
// this one decides them, and its decision replaces theirs in the response
// (see unlistOuter). shadowedGuards are the policies of res, not in again,
// one of whose guards (see below) only middlewares in shadow mode further
// out counted: this one decides them with that guard on the retry, which
// they deny once it is spent, and so waits for it too (see outerWait).
// ownOnly are the guarded policies of res counted further out under their
// Spec (as again would be) but not under each of their guards: they are
// not in again, and are decided here under the guards not counted further
// out alone (see nested.Ops.DropOwn), which still hold; shadowed keeps
// them as for again. foldedOut are the policies of res, not in again,
// whose Spec is that of a policy of their name that a middleware further
// out checked on its guard's state alone (a copy lowered by SetLimit,
// see meets), not under that Spec, whether it admitted the request or
// denied it in shadow mode: they are decided here, and their members
// replace that one's (see unlistOuter), as they would have had it
// counted under that Spec (or, denying, been met as the same policy).
// foldedOut holds too the policies decided here because their state,
// counted further out at a higher limit, holds more than theirs (see
// ownBelow), or one of whose guards so counted by a copy raised from it
// holds more than their limit here (see raisedOver), when this
// middleware enforces them or the one further out is in shadow mode:
// their member (refusing) replaces the one further out, which reports
// room left at a limit not in force for the request.
//
// merged are the policies of res, in neither again nor ownOnly, one of
// whose guards a middleware further out counted the request under at
// another limit, which this one judges from that decision (judged) or
// checks again past its limit here, or at its own limit, which this one
// takes as it is (judged too, see ownOuter): their decision here holds
// that state as it is in force here, so that their member replaces the one
// further out where it holds every state that one reports (see
// supersedes and unlistOuter).
//
// countedOut are the policies of res (those of again are left out of
// it) that a middleware further out counted the request under, admitting
// it, as a request of their policy: in their own state (ownOnly) or in
// one of their guards' (a copy lowered here, or raised further out,
// judged on that state), but for a leaky_queue, which holds the request
// here in a queue of its own. An observer counts them there, and not
// again here (see Event.CountedFurtherOut).
//
// A guard counted further out at a limit other than the one this
// middleware judges it at (a window kind's guard is judged at its
// policy's limit, policy.Policy.GuardLimit: the copy further out runs the
// policy at its configured limit, or lowered further, this one lowered)
// is the same state, and is not counted again: judged is this middleware's judgement of it,
// from the decision of the middleware further out that counted it (see
// judgeOuter), merged into the policy's decision once it is taken. One
// whose state holds more than that limit is not left out: checked here
// too, it refuses the request (a denied Take counts nothing), reporting
// the wait until its state has room below that limit. (Between the two
// store calls the state can only lose units, a window passing: should
// it fall to that limit meanwhile, the check here admits the request and
// counts it there a second time, which errs towards refusing, never past
// the limit.)
//
// A policy lowered by SetLimit is a copy guarded by the configured Spec
// ([policy.Policy.Guard]): met further out as the configured policy, or
// met here so when the one further out runs the lowered copy, it counts
// in the same state. So a policy here whose Spec is a guard of the
// policy of its name further out is a repeat as the same policy is (but
// for one that policy judges at a limit above its own, raised further out
// by SetLimit or a reload, once that state holds more than its limit:
// decided here, it refuses the request; see ownBelow); and
// a guarded policy here one of whose guards' Spec and key the policy of
// its name further out counted (as its Spec, or as one of its own
// guards) keeps its own Spec, but is decided without that guard: a
// policy has up to policy.MaxGuards ([policy.Policy.Guards]: its
// configured Spec, reloads' replaced ones), each dropped apart, and unguard[k] holds the
// policies whose k-th guard is so dropped. A policy
// here of the name, key and Spec of one further out counts in its state
// too, whatever their guards: each middleware guards its own copy of a
// policy that a reload tightened (see SetPolicies), so the same policy
// given to both is no longer the same *policy.Policy in them. meets tells
// these apart; unlistOuter and adopted.match match policies as it does.
func (m *Middleware) unrepeated(r *http.Request, set *policy.Set, res *policy.Result) (again, shadowed, uncounted uint64, unguard [policy.MaxGuards]uint64, shadowedGuards, ownOnly, foldedOut, merged, countedOut uint64, judged []outerGuard, restate []restated) {
	var enforced uint64
	var denied [policy.MaxGuards]uint64        // as unguard, of the middlewares that denied
	var guardEnforced [policy.MaxGuards]uint64 // as unguard, of those not in shadow mode
	var refused [policy.MaxGuards]uint64       // as unguard, of the guards whose state is past their limit here
	var pastOut uint64                         // the policies whose state a middleware further out judged past their limit
	var apart []string                         // the names of policies that count apart from one of their name further out
	eachOuter(r.Context(), outerKey{}, 0, func(c *resultContext, held time.Duration) bool {
		o := &c.res.pr
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
				q := res.Policy(i)
				if q != p && q.Name() != p.Name() {
					continue
				}
				if sameNameApart(q, p) {
					apart = append(apart, q.Name())
				}
				if res.Key(i) != o.Key(j) {
					break // another bucket
				}
				same, gs := meets(q, p, nest.Folded(res, i), nest.Folded(o, j))
				if counted && (same || gs != 0) && q.Spec().Algorithm != algorithms.LeakyQueue {
					// Counted there as a request of q's policy, in
					// q's state or one q is judged on (see
					// Event.CountedFurtherOut).
					countedOut |= bit
				}
				var past bool
				if same && counted && q != p && q.Spec() != p.Spec() {
					// q's Spec may be a guard of p judged there at a
					// higher limit (p raised): past q's limit, q
					// refuses the request here; below it, q is a
					// repeat, but holds the client at its limit,
					// which p's member reports (see restateOuter)
					// where q's is the limit in force. A p that
					// left that guard to a middleware further out
					// still (raised there too, which judged it) has
					// no decision of it: its member goes.
					if d, higher, ok := ownBelow(q, o, j); ok && d.Remaining < 0 {
						past, same = true, false
						pastOut |= bit
					} else if higher && (!m.shadow || c.res.shadow) {
						restate = append(restate, restated{bit: bit, c: c, p: p, q: q, d: afterHold(d, held), judged: ok, ctx: r.Context()})
					}
				}
				// Its guards counted further out already, each apart
				// (a lowered copy's configured Spec, a reload's
				// replaced one).
				for k := range denied {
					switch {
					case gs>>k&1 == 0:
					case counted:
						if d, past, ok := judgeOuter(q, k, o, j); past {
							refused[k] |= bit
							merged |= bit
							if raisedOver(p, q, k) && (!m.shadow || c.res.shadow) {
								// Refusing at q's limit, the one in
								// force: its member replaces p's,
								// which reports room left at p's
								// higher one.
								foldedOut |= bit
							}
						} else if ok {
							judged = append(judged, outerGuard{bit, afterHold(d, held)})
							merged |= bit
						} else if d, ok := ownOuter(q, k, o, j); ok && !same {
							// Judged at its own limit there and
							// here: its decision there is q's.
							judged = append(judged, outerGuard{bit, afterHold(d, held)})
							merged |= bit
						}
						unguard[k] |= bit
						if !c.res.shadow {
							guardEnforced[k] |= bit
						}
					case !same:
						denied[k] |= bit
					}
				}
				if !same {
					// Another policy of the name: only its guards
					// may be counted further out already. Of its
					// Spec, it was folded there (see meets): decided
					// here, whether that middleware admitted the
					// request or denied it in shadow mode.
					if q.Spec() == p.Spec() {
						foldedOut |= bit
					}
					if past && (!m.shadow || c.res.shadow) {
						// Past its limit here, which is in force
						// (p's higher one is not, or is only a
						// shadow's): its member, refusing, replaces
						// p's, which reports room left at p's limit.
						foldedOut |= bit
					}
					break
				}
				switch {
				case !counted:
					uncounted |= bit
				case c.res.shadow:
					shadowed |= bit
				default:
					enforced |= bit
				}
				break
			}
		}
		return true
	})
	if apart != nil && !m.stats.nameTold.Load() && m.stats.nameTold.CompareAndSwap(false, true) {
		for i, n := range apart {
			apart[i] = strconv.Quote(n)
		}
		m.warn(r, fmt.Errorf("%w (policies %s, on a %s request): both are enforced, each counting apart, and the headers report only the more constraining under that name; name them apart",
			ErrSameNameNested, strings.Join(slices.Compact(apart), ", "), r.Method))
	}
	// A guard whose state holds more than its limit here is checked here
	// again: it refuses the request, counting nothing.
	for k := range unguard {
		unguard[k] &^= refused[k]
		guardEnforced[k] &^= refused[k]
	}
	// A policy whose state a middleware further out judged past its limit
	// here is decided here, refusing the request, though another one
	// counted it too, within its own limit (one raised further out,
	// that left that state to the first).
	enforced &^= pastOut
	shadowed &^= pastOut
	again = enforced | shadowed
	shadowed &^= enforced
	uncounted &^= again
	// A policy counted further out under its Spec but not under each of
	// its guards is decided here under those guards alone (its own check
	// left out, see nested.Ops.DropOwn): they still hold.
	for b := again; b != 0; b &= b - 1 {
		bit := b & -b
		for k := range set.Policy(bits.TrailingZeros64(b)).Guards() {
			if unguard[k]&bit == 0 {
				ownOnly |= bit
				break
			}
		}
	}
	again &^= ownOnly
	foldedOut &^= again | ownOnly
	merged &^= again | ownOnly
	// A policy decided here because a shadow middleware further out
	// denied it keeps its guards dropped: a middleware that counted
	// the request under one (further out still, say) counted it there.
	// (A policy of ownOnly keeps those counted further out dropped.)
	var deniedOnly uint64
	for k := range unguard {
		unguard[k] &^= again
		shadowedGuards |= unguard[k] &^ guardEnforced[k]
		deniedOnly |= denied[k] &^ unguard[k]
	}
	// A guard whose state only middlewares that denied counted under is
	// checked here: its policy is decided here again too.
	uncounted |= deniedOnly &^ again
	if again|uncounted != 0 && !m.stats.twiceTold.Load() && m.stats.twiceTold.CompareAndSwap(false, true) {
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
	// Only a policy left out here has its member further out restated,
	// once: the first judged is restated, every other member goes. It
	// is restated at the lowest of its decisions judged here: its
	// Spec's, and those of its guards counted further out (a reload's
	// replaced Spec, which holds the requests of before the reload).
	n := 0
	var shown uint64
	for _, rs := range restate {
		if again&rs.bit != 0 {
			if rs.judged && shown&rs.bit == 0 {
				shown |= rs.bit
				for _, g := range judged {
					if g.bit == rs.bit && lowest.Before(g.d, rs.d) {
						rs.d = g.d
					}
				}
			} else {
				rs.judged = false
			}
			restate[n] = rs
			n++
		}
	}
	// None of a policy judged (none here): its members stay.
	restate = slices.DeleteFunc(restate[:n], func(rs restated) bool { return shown&rs.bit == 0 })
	return again, shadowed, uncounted, unguard, shadowedGuards, ownOnly, foldedOut, merged, countedOut, judged, restate
}

// sameNameApart reports whether q, a policy of this middleware, and p,
// one of its name a middleware further out decided, are two policies
// that count apart (see ErrSameNameNested): neither is the other, nor
// runs the other's Spec, nor guards one of the other's states (a copy by
// SetLimit or a reload, which the middlewares report once).
func sameNameApart(q, p *policy.Policy) bool {
	if q == p || q.Spec() == p.Spec() || slices.Contains(q.Guards(), p.Spec()) || slices.Contains(p.Guards(), q.Spec()) {
		return false
	}
	for _, g := range q.Guards() {
		if slices.Contains(p.Guards(), g) {
			return false
		}
	}
	return true
}

// raisedOver reports whether p, a policy of a middleware further out
// whose state p counts q's k-th guard in (see meets), is a copy raised
// from that guard's Spec (SetLimit or a reload above it) that judges
// that state at a limit above the one q judges it at: the limit in
// force is q's, not p's.
func raisedOver(p, q *policy.Policy, k int) bool {
	g := q.Guards()[k]
	return p.Spec() != g && slices.Contains(p.Guards(), g) && p.GuardLimit(g) > q.GuardLimit(g)
}

// An outerGuard is the decision d, as judged here, of a guard of the
// policy of bit (a bit of the set's) that a middleware further out
// counted the request under at another limit (see judgeOuter).
type outerGuard struct {
	bit uint64
	d   algorithms.Decision
}

// judgeOuter judges, at the limit q judges it at (policy.Policy.GuardLimit),
// the state of the k-th guard of q that o, the Result of a middleware
// further out that counted the request, counted under its j-th policy:
// ok and d, o's decision moved to that limit (the state counts the units
// whatever the limit: Remaining lower or higher by the difference, the
// waits the same), unless the state holds more than that limit: then
// past. o may have judged that state at a higher limit (a window kind's
// guard of a copy lowered here, met further out as its configured Spec,
// say), or at a lower one (a copy lowered further still there): either
// way the guard holds the client here at q's limit, and its decision
// merged here reports it so (a client that used 41 of the 100 has 9
// left at a copy's 50, whatever the copy further out judged it at). It
// reports nothing for a guard judged at its own limit, or that o did not
// check (see nested.Ops.DecisionUnder).
func judgeOuter(q *policy.Policy, k int, o *policy.Result, j int) (d algorithms.Decision, past, ok bool) {
	gs := q.Guards()
	if k >= len(gs) {
		return d, false, false
	}
	g := gs[k]
	limit := q.GuardLimit(g)
	if limit == g.Limit {
		return d, false, false // judged at its own limit: none is higher
	}
	d, ok = nest.DecisionUnder(o, j, g)
	if !ok || !d.Allowed {
		return algorithms.Decision{}, false, false
	}
	if d = judgedAt(g, d, limit); d.Remaining < 0 {
		return algorithms.Decision{}, true, false
	}
	return d, false, true
}

// ownOuter returns, and ok, the decision of the k-th guard of q that o,
// the Result of a middleware further out that counted the request,
// counted under its j-th policy, where q judges that guard at its own
// limit (policy.Policy.GuardLimit: a token_bucket's or leaky_bucket's
// replaced Spec, or a window kind's of another shape), as o did: that
// decision is the one a check of the guard here would have given, had
// it not been counted there already. A leaky_queue guard reports
// nothing: its queue holds the request where it was counted, and its
// Delay is that queue's. So does a guard o did not check (see
// nested.Ops.DecisionUnder).
func ownOuter(q *policy.Policy, k int, o *policy.Result, j int) (algorithms.Decision, bool) {
	gs := q.Guards()
	if k >= len(gs) {
		return algorithms.Decision{}, false
	}
	g := gs[k]
	if q.GuardLimit(g) != g.Limit || g.Algorithm == algorithms.LeakyQueue {
		return algorithms.Decision{}, false
	}
	d, ok := nest.DecisionUnder(o, j, g)
	if !ok || !d.Allowed {
		return algorithms.Decision{}, false
	}
	return d, true
}

// afterHold returns d, a decision of a middleware further out made
// before the request was held for held (a leaky_queue Delay, there or in
// between: see eachOuter), as a decision taken now would report the
// same state: its waits counted from now, less held and never below 0,
// as retimeOuter counts the headers written with it. (Its Remaining
// stays as decided, as theirs do.)
func afterHold(d algorithms.Decision, held time.Duration) algorithms.Decision {
	if held > 0 {
		d.RetryAfter = max(since(d.RetryAfter, held), 0)
		d.ResetAfter = max(since(d.ResetAfter, held), 0)
		d.NextAfter = max(since(d.NextAfter, held), 0)
		d.Delay = max(since(d.Delay, held), 0)
	}
	return d
}

// ownBelow returns, and ok, o's decision under q's Spec, which o, the
// Result of a middleware further out that counted the request, counted
// it under as a guard of its j-th policy judged at a limit above q's
// (that policy raised by SetLimit or a reload: higher), judged at q's
// limit (judgedAt): its Remaining is below 0 when that state holds more
// than q's limit. It reports nothing for a guard judged at q's limit or
// below, and no decision for one o did not check (a middleware further
// out still counted it, see unrepeated).
func ownBelow(q *policy.Policy, o *policy.Result, j int) (d algorithms.Decision, higher, ok bool) {
	if o.Policy(j).GuardLimit(q.Spec()) <= q.Spec().Limit {
		return algorithms.Decision{}, false, false
	}
	d, ok = nest.DecisionUnder(o, j, q.Spec())
	if !ok || !d.Allowed {
		return algorithms.Decision{}, true, false
	}
	return judgedAt(q.Spec(), d, q.Spec().Limit), true, true
}

// A restated is the decision d, judged at the limit of the policy of bit
// (a bit of the set's) here, of the policy named name that the
// middleware of c, further out, counted the request under at a higher
// limit (see ownBelow), which this middleware left out as a repeat and
// enforces at its own, lower, limit (or which c's middleware, in shadow
// mode, does not enforce): see restateOuter.
//
// Where c's middleware left that state to one further out still (its
// copy raised too: see unrepeated), it has no decision of it (judged is
// false): its member of the policy goes, and the one of the middleware
// that judged it is restated.
type restated struct {
	bit    uint64
	c      *resultContext
	p, q   *policy.Policy // c's policy and ours
	d      algorithms.Decision
	judged bool
	ctx    context.Context // the request's, here (see replaceDraftMember)
}

// restateOuter reports in h, under profile p, the policies of rs (see
// unrepeated) as they are in force for the request: at the limit
// of this middleware, which left each out as a repeat of one a
// middleware further out counted the request under at a higher limit (a
// copy raised there), but holds the client at its own. A policy is
// reported once, at the lower of the two limits (of the middlewares that
// enforce it, and of both when neither does): the IETF member that
// middleware wrote of it keeps its place, its w and t (the same state,
// whose waits are the same at either limit) and its pk, with q and r
// those judged here; the draft -06/-07 RateLimit-Policy member of its
// quota value names this middleware's ("8;w=60" becomes "5;w=60", or
// the member a middleware in between restated it at: see
// standingMember), unless a middleware in between restated the IETF
// member at a lower remaining already (its lower limit is in force). The
// members of a middleware further out that left the state to one
// further out still (rs's entries not judged) are removed. A
// single-valued profile reports the policy so when it is, so judged,
// the one with the lowest remaining: res (not nil when this middleware
// decided policies of its own) holds the values written if it wrote
// them, else outer (those further out), and a restated decision before
// them (see lowest.Before) replaces them. A middleware further in
// compares its values with those of res or outer, as judged there.
// held is the hold of the request here since its decision (0 before
// one), which counts the member IETFMostConstraining brings in (see
// mostRestated).
func restateOuter(h http.Header, p Profile, res *Result, outer *policy.Result, now func() time.Time, held time.Duration, rs []restated) (shownAt algorithms.Decision, restated bool) {
	if len(rs) == 0 || p == NoHeaders {
		return
	}
	switch p {
	case IETF:
		for _, r := range rs {
			if r.c.res.wrote != uint8(IETF)+1 {
				continue // its line is not there
			}
			name := r.p.Name()
			if !r.judged {
				dropOuterMember(r.ctx, h, r.c, name, held)
				continue
			}
			q, rem := r.d.Limit, r.d.Remaining
			vals := &r.c.vals
			if _, ok := paramOf(vals[1], name, "r"); !ok {
				// A middleware in between replaced that member by its
				// own (see unlistOuter): that one reports the policy,
				// and is restated.
				if lines := memberLines(r.ctx, name); lines != nil {
					vals = lines
				} else {
					// c's line of one member (IETFMostConstraining)
					// reports another policy: its RateLimit-Policy
					// member is restated all the same.
					if cur, ok := paramOf(vals[0], name, "q"); ok && q < cur {
						editLine(h, keyPolicy, &vals[0], func(line string) string { return withParam(line, name, "q", sfCount(q)) })
					}
					if r.c.res.marks&markMost != 0 {
						mostRestated(h, r, held)
					}
					continue
				}
			}
			// A middleware in between (raised there too, below the one
			// further out) may have restated it at its own lower limit
			// already: that one is in force.
			if cur, ok := paramOf(vals[1], name, "r"); ok && cur < rem {
				continue
			}
			if cur, ok := paramOf(vals[0], name, "q"); ok && cur < q {
				q = cur
			}
			editLine(h, keyPolicy, &vals[0], func(line string) string { return withParam(line, name, "q", sfCount(q)) })
			editLine(h, keyRateLimit, &vals[1], func(line string) string { return withParam(line, name, "r", sfCount(rem)) })
		}
		return
	case Draft7, Draft6:
		for _, r := range rs {
			to := ""
			if r.judged {
				to = draftMember(r.q)
			}
			from := draftMember(r.p)
			if r.judged {
				from = standingMember(h, r.p, r.q)
			}
			replaceDraftMember(r.ctx, h, res, r.p, from, to)
		}
	}
	var shown algorithms.Decision
	switch {
	case res != nil && res.wrote == uint8(p)+1:
		shown = res.Decision(res.Lowest())
	case decided(outer):
		shown = outer.Decision(outer.Lowest())
		if d, ok := restatedOver(rs[0].ctx, outer); ok {
			shown = d
		}
	default:
		return // no values written
	}
	best, restate := shown, false
	for _, r := range rs {
		if r.judged && lowest.Before(r.d, best) {
			best, restate = r.d, true
		}
	}
	if restate {
		setValues(h, p, best, resetAfter(best), now, new([2]string), nil, "")
	}
	return best, restate
}

// memberLines returns the IETF lines of the innermost middleware further
// out in ctx whose RateLimit line holds a member of the policy named
// name, or nil.
func memberLines(ctx context.Context, name string) *[2]string {
	var vals *[2]string
	eachOuter(ctx, chainKey{}, 0, func(c *resultContext, _ time.Duration) bool {
		if c.res.wrote != uint8(IETF)+1 {
			return false
		}
		if _, ok := paramOf(c.vals[1], name, "r"); ok {
			vals = &c.vals
			return false
		}
		return true
	})
	return vals
}

// A restatedContext tells the middlewares further in that the
// single-valued values that over (the Result of the innermost middleware
// further out that wrote rate-limit headers) wrote were restated as d by
// a middleware that decided nothing of its own (see restateOuter): they
// compare their values with d, not with over's.
type restatedContext struct {
	context.Context
	over *policy.Result
	d    algorithms.Decision
}

type restatedKey struct{}

func (c *restatedContext) Value(key any) any {
	if _, ok := key.(restatedKey); ok {
		return c
	}
	return c.Context.Value(key)
}

// restatedOver returns the decision whose values a middleware further
// out in ctx restated those of outer as (see restatedContext), if one
// did.
func restatedOver(ctx context.Context, outer *policy.Result) (algorithms.Decision, bool) {
	if c, ok := ctx.Value(restatedKey{}).(*restatedContext); ok && c.over == outer {
		return c.d, true
	}
	return algorithms.Decision{}, false
}

// keepRestated writes back under the single-valued profile p, into h,
// the values a middleware further out in ctx restated those of outer as
// (see restatedContext), when res, which wrote its own over them, is
// allowed and reports no lower remaining: they are the values in force,
// and res's are then not the ones written (as keepsOuter keeps outer's).
func keepRestated(ctx context.Context, h http.Header, p Profile, res *Result, outer *policy.Result, now func() time.Time) {
	if p == IETF || p == NoHeaders || res.wrote != uint8(p)+1 || !decided(outer) {
		return
	}
	d, ok := restatedOver(ctx, outer)
	if !ok {
		return
	}
	if own := res.Decision(res.Lowest()); own.Allowed && !lowest.Before(own, d) {
		setValues(h, p, d, resetAfter(d), now, new([2]string), nil, "")
		res.wrote = 0
	}
}

// draftMember returns p's member of a draft -06/-07 RateLimit-Policy
// list ("5;w=60"): its IETF member (see policy.Policy.String) without
// the name.
func draftMember(p *policy.Policy) string {
	s, n := p.String(), len(p.Name())+len(`"";q=`)
	if len(s) < n {
		return s
	}
	return s[n:]
}

// replaceDraftMember replaces in h, among the members of the draft
// -06/-07 RateLimit-Policy lines (one list), the member from of p (its
// own, or the one a middleware in between restated it at, see
// standingMember), a policy of a middleware further out, by to, or removes it when to is "": the
// policy is reported by another member of this middleware's (to, or one
// of its line). The member is left as it is when it is to, and when a
// policy of another name, of res (this middleware's, nil when it
// decided none) or of a middleware further out in ctx, has that member
// too (those drafts name a policy by its quota value: one member stands
// for both): to is then added, as it is when from is not there (a
// middleware in between replaced it). A line left empty is removed; a
// member to repeats (of another line) is left out as addPolicies leaves
// it out.
func replaceDraftMember(ctx context.Context, h http.Header, res *Result, p *policy.Policy, from, to string) {
	if from == to {
		return
	}
	lines := h[keyPolicy]
	if sharedMember(ctx, res, p.Name(), from) {
		if to != "" {
			h[keyPolicy] = addPolicies(lines[:len(lines):len(lines)], to)
		}
		return
	}
	out := make([]string, 0, len(lines))
	found := false
	for _, l := range lines {
		var b strings.Builder
		for m := range strings.SplitSeq(l, ", ") {
			if m == from && !found {
				found = true
				if m = to; m == "" {
					continue
				}
			}
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			b.WriteString(m)
		}
		if b.Len() > 0 {
			out = append(out, b.String())
		}
	}
	switch {
	case !found:
		// A middleware in between replaced it already (by a member
		// that holds the client lower, see unlistDrafts): to reports
		// the policy beside it.
		if to != "" {
			h[keyPolicy] = addPolicies(lines[:len(lines):len(lines)], to)
		}
	case len(out) == 0:
		delete(h, keyPolicy)
	default:
		h[keyPolicy] = addPolicies(out[:len(out)-1:len(out)-1], out[len(out)-1])
	}
}

// standingMember returns the draft -06/-07 RateLimit-Policy member
// that stands in h for p, a policy of a middleware further out whose
// member q's replaces or restates: p's own, or, where a middleware in
// between restated it already at a limit above q's (its copy's Spec a
// guard of p, see ownBelow: a reload's replaced Spec, say), that
// guard's member ("8;w=60" for a p at 12 restated at 8 there, and at 5
// by q).
func standingMember(h http.Header, p, q *policy.Policy) string {
	from := draftMember(p)
	if hasDraftMember(h, from) {
		return from
	}
	w, ok := strings.CutPrefix(from, strconv.FormatInt(p.Spec().Limit, 10))
	if !ok {
		return from
	}
	for _, g := range p.Guards() {
		if !g.Algorithm.Windowed() || g.Window != p.Spec().Window || g.Limit <= q.Spec().Limit {
			continue
		}
		if m := strconv.FormatInt(g.Limit, 10) + w; hasDraftMember(h, m) {
			return m
		}
	}
	return from
}

// hasDraftMember reports whether the draft -06/-07 RateLimit-Policy
// lines of h hold the member m.
func hasDraftMember(h http.Header, m string) bool {
	for _, l := range h[keyPolicy] {
		for x := range strings.SplitSeq(l, ", ") {
			if x == m {
				return true
			}
		}
	}
	return false
}

// sharedMember reports whether a policy not named name, of res (when
// not nil) or of a middleware further out in ctx that decided the
// request, has the draft -06/-07 RateLimit-Policy member member.
func sharedMember(ctx context.Context, res *Result, name, member string) bool {
	shares := func(o *policy.Result) bool {
		for i := range o.Len() {
			if q := o.Policy(i); q.Name() != name && draftMember(q) == member {
				return true
			}
		}
		return false
	}
	if res != nil && decided(&res.pr) && shares(&res.pr) {
		return true
	}
	found := false
	eachOuter(ctx, outerKey{}, 0, func(c *resultContext, _ time.Duration) bool {
		found = decided(&c.res.pr) && shares(&c.res.pr)
		return !found
	})
	return found
}

// withParam returns line, an IETF list line, with the value of the
// parameter param of the member of the policy named name set to v. A
// line without that member, or a member without that parameter, is
// returned as it is.
func withParam(line, name, param string, v int64) string {
	at, stop, ok := paramAt(line, name, param)
	if !ok {
		return line
	}
	return line[:at] + strconv.FormatInt(v, 10) + line[stop:]
}

// paramOf returns the value of the parameter param of the member of the
// policy named name in line, an IETF list line, and whether it has one.
func paramOf(line, name, param string) (int64, bool) {
	at, stop, ok := paramAt(line, name, param)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(line[at:stop], 10, 64)
	return v, err == nil
}

// paramAt returns where in line, an IETF list line, the value of the
// parameter param of the member of the policy named name starts and
// stops, and whether it has one.
func paramAt(line, name, param string) (at, stop int, ok bool) {
	for off := 0; off < len(line); {
		m := line[off:]
		end := strings.Index(m, ", ")
		if end < 0 {
			end = len(m)
		}
		if !isMember(m, name) {
			off += end + 2
			continue
		}
		key := ";" + param + "="
		at := strings.Index(m[:end], key)
		if at < 0 {
			return 0, 0, false
		}
		at += len(key)
		stop := strings.IndexByte(m[at:end], ';')
		if stop < 0 {
			stop = end - at
		}
		return off + at, off + at + stop, true
	}
	return 0, 0, false
}

// mergeJudged merges into res, taken with the guards of judged dropped
// (counted further out at another limit, see unrepeated), their
// decisions as judged here (see nested.Ops.MergeGuard).
func mergeJudged(res *policy.Result, judged []outerGuard) {
	for _, og := range judged {
		if m := res.Mask(); m&og.bit != 0 {
			nest.MergeGuard(res, bits.OnesCount64(m&(og.bit-1)), og.d)
		}
	}
}

// meets reports how q, a policy of this middleware, meets p, one of its
// name that a middleware further out decided under the same key (see
// unrepeated): same when q counts in p's state, as p itself, a copy of
// its Spec, or the policy p was lowered from or the one a reload
// replaced, guarding p; and the guards of q ([policy.Policy.Guards])
// whose state p counts in, as its Spec or as one of its own guards: bit
// k for the k-th (of a q that is the same, those alone are counted
// further out: its others are not).
//
// pFolded says that p was checked on its first guard's state alone,
// judged at its limit (see nested.Ops.Folded: a window kind's copy
// lowered by SetLimit): nothing was counted under p's Spec there. A q of
// that Spec counts in p's state only when it is checked so too (qFolds,
// at the same limit: the same state judged alike); one that counts under
// that Spec itself (a policy built at that limit, by New or by a
// reload) is decided here, under it, and with
// the guards p counted left out.
func meets(q, p *policy.Policy, qFolds, pFolded bool) (same bool, guards uint8) {
	pgs := p.Guards()
	counted := func(s algorithms.Spec) bool {
		return s == p.Spec() && !pFolded || slices.Contains(pgs, s)
	}
	same = q == p || counted(q.Spec()) || qFolds && pFolded && q.Spec() == p.Spec()
	for k, qg := range q.Guards() {
		if counted(qg) {
			guards |= 1 << k
		}
	}
	return same, guards
}

// unlistOuter removes from h the members that the middlewares further out
// in ctx wrote, in their IETF RateLimit and RateLimit-Policy lines, of the
// policies of redecided (a mask over the set of res) under the keys res
// decided them under, matched as unrepeated matched them (by name, and
// Spec or guard: see meets), not by pointer: those middlewares denied the
// request in shadow mode, and counted nothing (see unrepeated), so res
// decided the policies again, and its members, which report what was
// counted and is enforced, replace theirs: the response reports each
// policy once. The members of a middleware that admitted the request
// stand, but for the policies of ownOnly, which res decided under their
// guards with the decision under their Spec of the one that counted it
// merged in (see mergeOuter), and for those ownOnly holds that res
// decided under a Spec a middleware further out folded into its guard's
// (unrepeated's foldedOut: the decision of such a middleware that
// enforces the policy and counted the request is merged in, see
// mergeFolded): res's members replace theirs too, whether that middleware
// admitted the request or, in shadow mode, denied it. So do res's members
// of the policies of merged (see unrepeated) over those of a middleware
// that counted the request whose every state res's decision holds at a
// limit in force (see supersedes). A line left empty is removed. A
// member removed of a middleware that counted the request and enforces
// the policy (or of any, when this one is in shadow mode, or of one in
// shadow mode whose member a middleware in between that enforces the
// policy restated or holds: see inForce) may hold the
// client lower than res's (a copy lowered there below the one here, or
// restated there at the limit of one in between): res's member then
// reports its lower q, and its lower r with its t (see bindMember), in
// vals, res's lines. Nothing is removed unless res wrote its IETF
// line (its store failed, say): theirs are then the only report of those
// policies. Under draft -06/-07 and the legacy profiles, the single
// values of a policy whose member goes are replaced by res's (see
// unlistDrafts), counted after held since res's decision (see
// setHeadersAt), a LegacyUnix reset from now.
func unlistOuter(ctx context.Context, h http.Header, res *Result, vals *[2]string, redecided, ownOnly, merged uint64, held time.Duration, now func() time.Time) {
	switch p := profileOf(ctx, res); {
	case p == Draft7 || p == Draft6 || p == Legacy || p == LegacyUnix:
		// The RateLimit-Policy list (none under the legacy profiles)
		// is one of every middleware's members, ours among them once
		// res decided a policy.
		if !decided(&res.pr) {
			return
		}
		unlistDrafts(ctx, h, p, res, vals, ownOnly, merged, held, now)
		return
	case res.wrote != uint8(IETF)+1:
		return
	}
	eachOuter(ctx, chainKey{}, 0, func(c *resultContext, _ time.Duration) bool {
		if c.res.wrote != uint8(IETF)+1 {
			return false
		}
		o := &c.res.pr
		replaced, over := redecided|ownOnly, uint64(0)
		if o.Allowed() {
			// It counted the request: its members stand, but of the
			// policies whose decision here merges its own, or is
			// taken under the Spec it folded (unrepeated's
			// foldedOut, which ownOnly then holds too), or holds
			// every state its member reports (see supersedes).
			if replaced, over = ownOnly, merged; replaced|over == 0 {
				return true
			}
		}
		for j := range o.Len() {
			p := o.Policy(j)
			// The i-th policy of res is the i-th of its mask, matched
			// to p as unrepeated matched them.
			for i, b := 0, res.Mask(); b != 0; i, b = i+1, b&(b-1) {
				q := res.Policy(i)
				if q != p && q.Name() != p.Name() {
					continue
				}
				if b&-b&(replaced|over) == 0 || res.Key(i) != o.Key(j) {
					break
				}
				if b&-b&replaced == 0 && !supersedes(res, i, c, j) {
					break
				}
				if same, gs := meets(q, p, nest.Folded(&res.pr, i), nest.Folded(o, j)); same || gs != 0 || q.Spec() == p.Spec() {
					name := p.Name()
					if oq, ok := paramOf(c.vals[0], name, "q"); o.Allowed() && ok && inForce(ctx, res, c, j, oq) {
						// Its member is in force: where it holds the
						// client lower than ours, ours reports it.
						bindMember(h, vals, &c.vals, name)
					}
					dropOuterMember(ctx, h, c, name, held)
				}
				break
			}
		}
		return true
	})
}

// inForce reports whether the member that c's middleware, further out in
// ctx, wrote of its j-th policy, of quota q as it stands, reports a limit
// in force for res, decided here: c's middleware enforces it, or res's
// is in shadow mode too, or a middleware in between that enforces it
// left the policy out as one that only middlewares in shadow mode
// counted (see adoptedFurtherOut) and holds it at a limit no higher than
// q: it restated that member at its own limit where the shadow one's was
// higher (see restateOuter), and one at the shadow one's Spec holds it
// there. A shadow member of a lower quota than that limit reports none
// in force.
func inForce(ctx context.Context, res *Result, c *resultContext, j int, q int64) bool {
	if !c.res.shadow || res.shadow {
		return true
	}
	o := &c.res.pr
	a := adoptedFurtherOut(ctx, o.Policy(j), nest.Folded(o, j))
	return a != nil && a.Spec().Limit <= q
}

// quotaOf returns the quota value of the draft -06/-07 RateLimit-Policy
// member m ("3;w=60"), or 0.
func quotaOf(m string) int64 {
	qs, _, _ := strings.Cut(m, ";w=")
	q, _ := strconv.ParseInt(qs, 10, 64)
	return q
}

// bindMember carries into the IETF member of the policy named name in
// the lines of vals (ours, in h) what the member of that policy in the
// lines of outer (a middleware's further out, which ours replaces: see
// unlistOuter) reports lower, where both count in windows of one length:
// the lower q, and the lower r with its t (of equal r, the longer t).
// That member reports the copy of the policy further out, which holds
// the client too: a copy lowered there (SetLimit, a reload) below ours
// (raised here, or configured higher), or restated there at the lower
// limit of a middleware in between. Our member, which merged only some
// of its states into ours (see mergeOuter, mergeFolded), must not report
// more than it admits: the policy is reported once, at the limit in
// force, with the room left there.
func bindMember(h http.Header, vals, outer *[2]string, name string) {
	oq, ok1 := paramOf(outer[0], name, "q")
	ow, ok2 := paramOf(outer[0], name, "w")
	or, ok3 := paramOf(outer[1], name, "r")
	q, ok4 := paramOf(vals[0], name, "q")
	w, ok5 := paramOf(vals[0], name, "w")
	r, ok6 := paramOf(vals[1], name, "r")
	if !ok1 || !ok2 || !ok4 || !ok5 || ow != w {
		return
	}
	if oq < q {
		editLine(h, keyPolicy, &vals[0], func(line string) string { return withParam(line, name, "q", oq) })
	}
	// A RateLimit line of IETFMostConstraining holds one member, perhaps
	// another policy's: the quota in RateLimit-Policy is bound all the
	// same, and the r and t only where both lines report the policy.
	if !ok3 || !ok6 {
		return
	}
	ot, _ := paramOf(outer[1], name, "t")
	t, _ := paramOf(vals[1], name, "t")
	switch {
	case or < r:
		editLine(h, keyRateLimit, &vals[1], func(line string) string {
			return withParam(withParam(line, name, "r", or), name, "t", ot)
		})
	case or == r && ot > t:
		editLine(h, keyRateLimit, &vals[1], func(line string) string { return withParam(line, name, "t", ot) })
	}
}

// profileOf returns the profile of the headers of res, decided by a
// middleware nested in those of ctx: that of the innermost of them that
// wrote headers, whose profile the headers of res follow (see
// WithHeaders), when res holds none of its own values (a single-valued
// profile that kept that middleware's, see keepsOuter); NoHeaders when
// none did.
func profileOf(ctx context.Context, res *Result) Profile {
	if res.wrote != 0 {
		return Profile(res.wrote - 1)
	}
	if o, ok := ctx.Value(wroteKey{}).(*Result); ok && o.wrote != 0 {
		return Profile(o.wrote - 1)
	}
	return NoHeaders
}

// unlistDrafts is unlistOuter under a draft -06/-07 or legacy profile
// (which lists no member: only its values are replaced), for the
// policies of ownOnly (those of unrepeated's foldedOut among them): the
// RateLimit-Policy members of those policies that the middlewares
// further out in ctx listed are removed, unless they are the member of
// res's policy (the same quota value: one member stands for both) or of
// a policy of another name (see replaceDraftMember); and so are those
// of the policies of merged that res's member supersedes (see
// supersedes). (The members of the policies a shadow middleware further
// out denied, and res decided again, stay.)
//
// Where the single values in h (the dictionary of -07, the fields of
// -06, profile prof) are still those a middleware further out wrote for
// a policy whose member so goes (res kept them: they reported no more
// than res's, see keepsOuter), they would name a limit the list no
// longer holds ("limit=5" beside "3;w=60", of a token bucket of 5 lowered
// to 3 further in): res's own values replace them, written with vals
// and counted after held as setHeadersAt counts them. res's decision of
// the policy holds that member's state (see supersedes and mergeOuter),
// so they report no more room. Under the legacy profiles, alike, the
// values further out would report a limit not in force
// (X-RateLimit-Limit 5 where the IETF profile says q=3).
func unlistDrafts(ctx context.Context, h http.Header, prof Profile, res *Result, vals *[2]string, ownOnly, merged uint64, held time.Duration, now func() time.Time) {
	eachOuter(ctx, outerKey{}, 0, func(c *resultContext, _ time.Duration) bool {
		o := &c.res.pr
		if !decided(o) {
			return true // it listed nothing
		}
		for j := range o.Len() {
			p := o.Policy(j)
			for i, b := 0, res.Mask(); b != 0; i, b = i+1, b&(b-1) {
				q := res.Policy(i)
				if q != p && q.Name() != p.Name() {
					continue
				}
				if b&-b&(ownOnly|merged) == 0 || res.Key(i) != o.Key(j) {
					break
				}
				if b&-b&ownOnly == 0 && !supersedes(res, i, c, j) {
					break
				}
				same, gs := meets(q, p, nest.Folded(&res.pr, i), nest.Folded(o, j))
				if (same || gs != 0 || q.Spec() == p.Spec()) && draftMember(p) != draftMember(q) {
					// The member standing for p may be q's own, where a
					// middleware in between restated it so.
					from := standingMember(h, p, q)
					switch {
					case from == draftMember(q):
					case o.Allowed() && inForce(ctx, res, c, j, quotaOf(from)) && holdsLower(from, draftMember(q)):
						// p's member is in force and holds the client
						// lower than q's (see bindMember): it stands
						// for the policy, in place of q's.
						replaceDraftMember(ctx, h, res, q, draftMember(q), "")
					default:
						replaceDraftMember(ctx, h, res, p, from, "")
						if res.wrote == 0 && o.Lowest() == j && holdsValuesOf(h, prof, &c.vals) {
							if vals == nil {
								vals = new([2]string)
							}
							lo := res.Lowest()
							d := res.Decision(lo)
							setValues(h, prof, d, since(resetAfter(d), sinceDecision(&res.pr, lo, held)), now, vals, nil, "")
							res.wrote = uint8(prof) + 1
						}
					}
				}
				break
			}
		}
		return true
	})
}

// holdsValuesOf reports whether the single values of profile p in h are
// those written with vals (the same string, not only the same text), as
// retimeValues finds them.
func holdsValuesOf(h http.Header, p Profile, vals *[2]string) bool {
	key := keyXLimit
	switch p {
	case Draft7:
		key = keyRateLimit
	case Draft6:
		key = keyLimit
	}
	vs := h[key]
	return len(vs) == 1 && vals[0] != "" && unsafe.StringData(vs[0]) == unsafe.StringData(vals[0])
}

// holdsLower reports whether the draft -06/-07 RateLimit-Policy member
// m ("3;w=60") has a lower quota value than own ("8;w=60") and the same
// window.
func holdsLower(m, own string) bool {
	mq, mw, ok1 := strings.Cut(m, ";w=")
	q, w, ok2 := strings.Cut(own, ";w=")
	if !ok1 || !ok2 || mw != w {
		return false
	}
	a, err1 := strconv.ParseInt(mq, 10, 64)
	b, err2 := strconv.ParseInt(q, 10, 64)
	return err1 == nil && err2 == nil && a < b
}

// supersedes reports whether the decision of res's i-th policy q, which
// this middleware took with its guards counted further out judged or
// checked again here (unrepeated's merged), is the one in force for the
// policy that p, the j-th policy of the middleware of c further out, is
// a copy of (one name, one key), so that q's member replaces p's in the
// response: c's middleware counted the request (its Take admitted it),
// and every state p's decision holds (its Spec's, unless it checked it
// on its first guard's state alone, and its guards') is a guard of q
// whose decision there q judged here or checked again, at a limit no
// higher than p judges it at, nor than the guard's own (q a copy
// tightened from it, by a reload or SetLimit). That decision, merged
// into q's, is then as low as p's: p reports the same state at a limit
// not in force (the 20 a minute further out of a policy a reload
// tightened to 4 here: its r=15 on the 429 of the 4). Where p holds a
// state q does not (a copy reloaded there too), or judges one at a
// lower limit (lowered there by SetLimit), p's member stands beside
// q's. A copy raised here over the guard is left to the restating of
// raised copies (see restateOuter), which a middleware further in that
// repeats it may do. Nor does a member of a middleware that enforces
// the policy give way to one in shadow mode here.
func supersedes(res *Result, i int, c *resultContext, j int) bool {
	o := &c.res.pr
	if !o.Taken() || !o.Allowed() || res.shadow && !c.res.shadow {
		return false
	}
	q, p := res.Policy(i), o.Policy(j)
	qgs := q.Guards()
	holds := func(s algorithms.Spec, limit int64) bool {
		k := slices.Index(qgs, s)
		if k < 0 || q.GuardLimit(s) > s.Limit || !c.res.shadow && q.GuardLimit(s) > limit {
			return false
		}
		if _, past, ok := judgeOuter(q, k, o, j); past || ok {
			return true
		}
		_, ok := ownOuter(q, k, o, j)
		return ok
	}
	if !nest.Folded(o, j) && !holds(p.Spec(), p.Spec().Limit) {
		return false
	}
	for _, g := range p.Guards() {
		if !holds(g, p.GuardLimit(g)) {
			return false
		}
	}
	return true
}

// mergeFolded merges into res, taken, the decisions of the middlewares
// further out in ctx, not in shadow mode, that counted the request under
// a policy of the name and key of each policy of folded (a mask over
// res's set: unrepeated's foldedOut) that they checked on its guard's
// state alone, at the limit of the policy's Spec here (a copy lowered by
// SetLimit there, see meets). The policy is decided here, under its own
// Spec, and its member replaces theirs (see unlistOuter): merged
// (nested.Ops.MergeGuard: the lower Remaining, the longer waits; their
// admission, which only lowers what is left), it reports no more left
// than they will admit, as their member did before the fold, when their
// copy counted under that Spec too. A middleware in shadow mode admits
// whatever its state holds: the state decided here alone is enforced.
func mergeFolded(ctx context.Context, res *policy.Result, folded uint64) {
	for i, b := 0, res.Mask(); b != 0; i, b = i+1, b&(b-1) {
		if b&-b&folded == 0 {
			continue
		}
		q := res.Policy(i)
		eachCounted(ctx, res, i, func(c *resultContext, j int, held time.Duration) bool {
			o := &c.res.pr
			if !c.res.shadow && nest.Folded(o, j) && o.Policy(j).Spec() == q.Spec() {
				nest.MergeGuard(res, i, afterHold(o.Decision(j), held))
			}
			return true // a shadow one enforces nothing
		})
	}
}

// eachCounted calls f with each middleware further out in ctx that
// counted the request (its Take admitted it) under a policy of the name
// and key of res's i-th, that policy's index there, and how long the
// request was held since (see eachOuter), from the nearest out, while f
// returns true. A Set holds one policy of a name.
func eachCounted(ctx context.Context, res *policy.Result, i int, f func(c *resultContext, j int, held time.Duration) bool) {
	q := res.Policy(i)
	eachOuter(ctx, outerKey{}, 0, func(c *resultContext, held time.Duration) bool {
		o := &c.res.pr
		if !o.Taken() || !o.Allowed() {
			return true // it counted nothing
		}
		for j := range o.Len() {
			if p := o.Policy(j); (p == q || p.Name() == q.Name()) && o.Key(j) == res.Key(i) {
				return f(c, j, held)
			}
		}
		return true
	})
}

// mergeOuter merges into res, taken with the own checks of the policies of
// ownOnly (a mask over its set) dropped (see unrepeated), the decision
// under each one's Spec of the middleware further out in ctx that counted
// the request under it (see nested.Ops.MergeOwn): the policy's
// decision here is then the one its states, counted here and there, give
// together, which the response reports once (see unlistOuter). That
// middleware may have judged the state at a lower limit than the
// policy's (a window kind's guard of a copy it runs lowered): its
// decision then stands as the limit it enforces, or, in shadow mode,
// where it enforces nothing, is read at the policy's limit (judgedAt),
// as it is where it was judged at a higher limit (a copy raised there).
func mergeOuter(ctx context.Context, res *policy.Result, ownOnly uint64) {
	for i, b := 0, res.Mask(); b != 0; i, b = i+1, b&(b-1) {
		if b&-b&ownOnly == 0 {
			continue
		}
		q := res.Policy(i)
		eachCounted(ctx, res, i, func(c *resultContext, j int, held time.Duration) bool {
			d, ok := nest.DecisionUnder(&c.res.pr, j, q.Spec())
			if !ok {
				return true
			}
			// Judged there, perhaps, at a limit below q's (a guard of a
			// copy lowered there, see policy.Policy.GuardLimit): a
			// middleware that enforces it holds the client to that, but
			// one in shadow mode does not, and q's own is the limit
			// enforced. Judged there at a limit above q's (a copy
			// raised there), it is read at q's, the one in force.
			if c.res.shadow || d.Limit > q.Spec().Limit {
				d = judgedAt(q.Spec(), d, q.Spec().Limit)
			}
			nest.MergeOwn(res, i, afterHold(d, held))
			return false
		})
	}
}
