package algorithms

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A Store keeps the state of every key and decides checks. The in-memory
// [MemoryStore] and the Redis store implement it; both are safe for
// concurrent use.
type Store interface {
	// Take decides all checks at one instant, all or nothing: if any is
	// denied, none consumes. It returns one Decision per check, in order.
	// Denial is a Decision, not an error; errors are for a failing backend
	// or an invalid check (a *SpecError or *CostError), including checks of
	// one key under one Spec that it could never admit at once (a
	// *CostError: see [ValidateChecks]). A Take refused as invalid
	// consumes nothing; one that fails on its backend may have consumed
	// (a reply lost after Redis decided: see the redisstore package).
	Take(ctx context.Context, checks ...Check) ([]Decision, error)
}

// An IntoStore is a Store that can write its decisions into a slice the
// caller provides, so a caller that reuses its slices decides without
// allocating. Both stores of this module implement it.
type IntoStore interface {
	Store
	// TakeInto is Take writing into dst, which must have len(checks) elements.
	TakeInto(ctx context.Context, dst []Decision, checks []Check) error
}

// A Refunder is a Store that can give back the place a leaky_queue check
// took in its queue, for a request that will not go ahead: its client went
// away while the request waited for its Delay. Both stores of this module
// implement it.
type Refunder interface {
	Store
	// Refund gives back the queue places that checks, admitted by one Take
	// whose decisions were ds, still hold, waited after that Take returned,
	// and writes into dst (len(checks) elements) each check's key as it
	// stands after the refund and whether its place came back (see
	// [Refunded]).
	//
	// Only leaky_queue checks are refunded (the other kinds counted a
	// request that did arrive), and only a place no later request queued
	// behind: the queue's next free departure moves back by the check's
	// cost, or to now when the place had partly gone by. A place with
	// requests queued behind it stays taken, since moving the queue back
	// would send two requests at once (the rule of x/time/rate's
	// Reservation.Cancel). The checks are refunded last first, so that a
	// Take holding several places in one queue gives them all back. A
	// denied Take (one of ds not Allowed) consumed nothing: nothing comes
	// back, and dst still reports the keys as they stand. Refund each
	// admitted Take at most once. A negative waited (a wall clock stepped
	// back) is an error: the store would reckon the departure later than
	// it is. So is an invalid leaky_queue check, or leaky_queue checks of
	// one key that no Take admits together (see [ValidateChecks]); then
	// nothing is given back. After an error dst's contents are unspecified
	// (a store may have given back some places: a Cluster whose keys span
	// slots).
	//
	// The store tells the last place from the caller's remaining wait
	// (Delay - waited; a caller may state it in Delay with waited 0, a
	// negative Delay once the departure has passed, as [Limiter.RefundN]
	// does): the place is the last when its departure is within half a
	// queue spacing W/(2L) of the caller's reckoning, since a later
	// request's place departs at least W/L after it. So the rule is exact
	// when the store's clock and the caller's disagree about the wait by
	// less than W/(2L) (in one process, the time between the store's and
	// the caller's readings of their clocks, plus Delay's rounding up to
	// the nanosecond; a network round trip for a remote store); at finer
	// spacings a refund may give back a place with a request queued behind
	// it, which then departs together with the next arrival.
	Refund(ctx context.Context, dst []Refunded, checks []Check, ds []Decision, waited time.Duration) error
}

// A GiveBacker is a Refunder that can also give back the units a Take of
// any kind consumed, for a request that went ahead but is not to count.
// Both stores of this module implement it. (It is an interface of its own
// so that a wrapper of a Refunder written before it stays a Refunder.)
type GiveBacker interface {
	Refunder
	// GiveBack gives back the units that checks, admitted by one Take
	// whose decisions were ds, consumed, waited after that Take returned,
	// for a request that went ahead but is not to count (express-rate-
	// limit's skipSuccessfulRequests: a successful login under a policy
	// that counts failures). It is Refund for every kind: a leaky_queue
	// check gives back its place by Refund's rule (a request that was
	// passed on has left the queue, so usually nothing comes back), and a
	// check of another kind the units of its cost that still count, by
	// the rules below. It writes into dst what a Take of the same checks
	// at the give-back's instant would report without consuming (as for a
	// denied Take: a check that would pass as decided alone on its key),
	// with Given set for each check that got some of its units back. The
	// checks are given back last first. A denied Take gives nothing back;
	// a negative waited, or an invalid check (Take's error, checks of one
	// key that no Take admits together included: see [ValidateChecks]),
	// is an error, and nothing is given back. Give back each admitted Take
	// at most once, and not after a Refund of it.
	//
	// The store reckons each check's Take from its ResetAfter: the key was
	// to be back to its full allowance at E = now + ResetAfter - waited
	// (now being the store's clock at the give-back).
	//
	//   - fixed_window: the Take's window is the one whose end is nearest
	//     to E (a tie goes to the later); if it is still the key's current
	//     window, its count drops by the cost (never below 0). Once that
	//     window has ended its count no longer counts: nothing comes back.
	//   - sliding_window: the Take's window is the one whose start is
	//     nearest to E - 2W; the counter that holds it, the current
	//     window's or the previous one's, drops by the cost. An older
	//     window no longer weighs in: nothing comes back.
	//   - sliding_buckets: the Take's bucket is the sub-window j nearest to
	//     E/S - Buckets (S = W/Buckets, the instant E being the end of the
	//     bucket's last window); if it is still in the ring it drops by the
	//     cost.
	//   - sliding_log: the Take's instant is E - W - 1 ns; if it is still
	//     in the window, the logged instant nearest it (a tie to the
	//     older) loses up to the cost. Once it has left the window the
	//     Take's units no longer count: nothing comes back (the instants
	//     left are other requests').
	//   - token_bucket, leaky_bucket: the bucket gets back (the meter's
	//     level drops by) the cost, but no more than what the Take's own
	//     deficit has not refilled (leaked) by now, nor than the bucket
	//     lacks to be full (empty). The Take's deficit D, at its instant
	//     T = E - ResetAfter = now - waited, is known to the ns by its
	//     ResetAfter (rounded up) and to the unit by its Remaining:
	//     (ResetAfter - 1 ns)·L/W and C - Remaining - 1 < D·L/W <=
	//     ResetAfter·L/W and C - Remaining. The bucket's deficit at that
	//     instant, as the state now has it, is D plus the whole costs of
	//     the requests that came after the Take; D is taken to be the one
	//     value of it less whole units in that range, or where there is
	//     none (a reckoning that is off) the least deficit a state can
	//     hold in it. That D counts the units of the Takes admitted before
	//     this one as they stood then; a give-back of one of them since
	//     (or, on Redis, an undo of a cross-slot reservation made before
	//     it) has moved this Take's units up by what came back, and D no
	//     longer stands. So the store keeps, per key, a note of the key's
	//     latest give-back that gave units back (or undo): its instant G,
	//     the instant H the bucket was full right after it, and Γ, the
	//     units the give-backs at G gave back together; and takes D
	//     lowered to what still stands of it:
	//       - a Take decided after G: D. Every give-back came before it,
	//         and its decision counts them.
	//       - a Take decided before G: no more than n·W/L, its own units
	//         (n its cost) alone, had they been the whole deficit: a
	//         give-back since may have moved them up by any amount, but
	//         not before its own instant.
	//       - a Take decided at G itself, which the store cannot order
	//         against the give-backs at G (a fake clock, a clock's
	//         resolution: the request after a handler's give-back is
	//         decided at the give-back's instant): D when the bucket was
	//         short of less than n·W/L right after them (H - G < n·W/L),
	//         for a Take decided before them would still have its n units,
	//         unrefilled, there: it came after them. Else max(n·W/L, D -
	//         Γ), no more than D: at most what came back at G can have been
	//         ahead of it.
	//     The give-backs of one call to the later checks of its Take on
	//     the same key (given back first) do not count there: their units
	//     were counted after the check's, and moved none of its units up
	//     (conformance: GiveBack/stacked_bucket). The MemoryStore, whose
	//     call does not hold its lock throughout, counts them when another
	//     give-back to the key came between.
	//     What has not refilled by now is that less waited·L/W. So a Take
	//     whose units were the last of the deficit comes back whole for as
	//     long as the deficit ahead of it has not refilled: the units of a
	//     request that does not count (CountIf) do not hold up the refill
	//     of those that do (one client's requests one after the other:
	//     each given back before the next Take, or at its very instant,
	//     with what was given back there less than the deficit ahead of
	//     the next one or more than the bucket lacked after it). A Take
	//     given back after an older Take of its key was (overlapping
	//     requests finishing out of order) gets back only what its own
	//     units have not refilled, had they been the whole deficit: the
	//     refill of the deficit ahead of it is lost to the key while that
	//     request ran. The note counts for ceil(C·W/L) after G (the time
	//     an empty bucket takes to refill: a Take at or before G has
	//     nothing left to give back after that), and is forgotten then,
	//     and by Reset; the MemoryStore keeps it in a map beside its
	//     key's slot (a key with a live note is not idle: see
	//     [MemoryStore], "Memory"), the Redis store in a key of its own
	//     (see the redisstore package).
	//
	// With that reckoning exact (the caller's clock and the store's agree)
	// and the Take's decision as it returned, on a clock that does not go
	// back (every call on the key at an instant no earlier than those
	// before it), the key is afterwards in the state it would be in had the
	// Take never consumed, the other requests having been admitted as they
	// were, or in one that admits less: never one that admits more,
	// whatever other Takes of the key were given back before or since, in
	// any order (or, on Redis, cross-slot reservations undone). The
	// counting kinds return exactly to that state (they only add). The
	// buckets return exactly to it when no request came after the Take
	// but at the give-back's instant and no give-back since makes the
	// store lower D (above); after others, the state without the Take is
	// max(F - nW/L, the largest s + (the cost after s)·W/L over the later
	// arrivals s), F being the instant the bucket is full, and that is at
	// most F - min(nW/L, E' - now), what GiveBack leaves, E' being the
	// instant the Take's deficit would have refilled, exactly: the one D
	// above finds (ResetAfter alone, E, is up to 1 ns later when a unit is
	// no whole number of ns, and giving back to it could admit a unit
	// more). (A later request that found the bucket fuller in the world
	// without the Take, and lost the tokens above capacity, is why giving
	// back the whole cost could over-admit.) Worked example, out of order
	// (the conformance suite's GiveBack/out_of_order_world): token_bucket
	// 5 a minute, burst 7, Takes A and B of 2 at 0 s, A given back at
	// once, a Take of 3 at 20 s and B given back at 30 s. Without A and B
	// the bucket holds 4.83 tokens at 30 s. B's D (48 s) counts A's units
	// ahead of its own; given back by it, 18 s of B's would come back (6
	// tokens). B was decided at the instant of A's give-back, and the
	// bucket lacked B's 2 units (24 s) right after it: B's units may have
	// moved up by the 24 s that came back there, to 0-24 s, refilled by
	// 30 s. Nothing comes back: 4.5 tokens.
	//
	// Left, known to admit more than that world:
	//
	// A clock that goes back. A request at an instant before the key's
	// latest (a clock stepped back, app hosts whose clocks disagree), or a
	// give-back whose instant is, can find the key admitting what both the
	// world without the Take and the world in which it was never given
	// back deny, in every kind but leaky_queue
	// (TestGiveBacksInAnyOrderNeverAdmitMore finds such traces of each when
	// run with RATEKEEPER_KNOWN_DEFECTS=1). The window kinds: the Take
	// moved the key on, to a later window or sub-window or log instant,
	// and forgot what had left it; given back, its units go but the move
	// stays, so a request behind it is decided where the forgotten units
	// no longer count (sliding_log, 4 a minute: 1 at 0 s, 10 s and 62 s,
	// which forgets the one at 0 s; the one at 62 s given back at 70 s;
	// then 3 at 40 s is admitted, on 10 s alone, where the log with 62 s
	// standing decides it at 62 s, on 10 s and 62 s, and the log without
	// it at 40 s, on 0 s and 10 s: both deny). The buckets: the Take's
	// deficit refills up to the latest instant the key was decided at, not
	// only up to now, and the state does not keep that instant. Exact
	// give-backs there need state per key that the stores do not keep: a
	// sliding_log would need the events the Take forgot (a rule that gave
	// nothing back whenever the Take forgot one would give nothing back to
	// a client whose requests come more than a window apart). And no
	// give-back can always meet the world without the Take there: with a
	// clock behind, a sliding_log Take that stands may itself admit more
	// than that world (4 a minute: 1 at 0 s, 1 s, 10 s and 62 s, then 2 at
	// 40 s is admitted at 62 s, on 10 s and 62 s, and denied at 40 s, on
	// 0 s, 1 s and 10 s, without the Take at 62 s).
	//
	// Where the store's clock and the caller's disagree (a remote store,
	// or the time between the Take's reading of the clock and the caller's),
	// the window kinds tell the Take's window or bucket by the nearest
	// boundary, so they are exact while the disagreement is under half a
	// window (half a sub-window for sliding_buckets). A caller's reckoning δ
	// late lets a bucket give back up to (δ + 1 ns)·L/W more (δ early, up to
	// that much less), and lets sliding_log take the units of a request
	// logged less than 2δ after the Take's, which then leave the window that
	// much early (or, for a Take less than δ from leaving the window, those
	// of the request logged next after it); a reckoning δ early gives back
	// less (a bucket, or a log whose Take is less than δ from leaving the
	// window) or older units (a log), erring towards denying. A caller that
	// measures waited from before its Take was sent is early by the Take's
	// latency and late by the GiveBack call's (the store reads its clock
	// after the caller): both are microseconds in one process, so a bucket
	// may keep (or get) that much refill more, which a clock that stands
	// still in a test shows as one unit short of whole.
	GiveBack(ctx context.Context, dst []Refunded, checks []Check, ds []Decision, waited time.Duration) error
}

// A Peeker is a Store that can tell what a Take would decide without
// consuming anything: for a status endpoint, a dashboard, or a handler that
// reports a client's standing on a response that is not to count (ulule's
// Peek, go-limiter's Get). Both stores of this module implement it.
type Peeker interface {
	Store
	// Peek writes into dst (len(checks) elements) what a Take of each
	// check alone would decide at one instant (the store's clock), and
	// consumes nothing: no key's state changes and no key is created. A
	// Take of several checks is all or nothing; Peek decides each check on
	// its own, so that a caller sees which of its policies would deny (as
	// the decisions of a denied Take report the checks that would pass).
	// Two checks of one key under one Spec are each decided as if alone.
	// Allowed says whether a Take would admit the check; the rest
	// describes the key as it stands, the check's units not taken (as a
	// denied Take reports a check that would pass): Remaining is the
	// units left now (a Take admitted at that instant reports its cost
	// fewer), RetryAfter, when denied, the wait a Take would report, and
	// ResetAfter and NextAfter count from the peek's instant. A
	// leaky_queue check that would be admitted reports the Delay its
	// request would wait. An invalid check is an error, as for Take, and
	// then dst's contents are unspecified: so are checks of one key that a
	// Take refuses as asking together for more than the key can ever admit
	// at once (see [ValidateChecks]), although Peek decides them each alone,
	// so that a Peek of a Take's checks fails exactly when the Take would.
	Peek(ctx context.Context, dst []Decision, checks []Check) error
}

// A Resetter is a Store that can forget keys: an operator lifting the
// limit of a client, or an application clearing a login policy's count
// of failures once the user has signed in (express-rate-limit's resetKey,
// ulule's and redis_rate's Reset). Both stores of this module implement
// it.
type Resetter interface {
	Store
	// Reset forgets the state of each check's key under the check's Spec
	// (its Cost and Limit are ignored: a check judged at a limit of its
	// own, see [Check.Limit], has its Spec's state): the key's next Take
	// finds it as a key never
	// seen, with its whole allowance, and its state under other Specs is
	// untouched. A key the store does not hold is no error. An invalid
	// Spec is an error, and then nothing is reset. A reset leaky_queue key
	// lets a new request depart at once, although requests it admitted
	// earlier may still be waiting for their Delay. A store that answers
	// denials from a local cache (the Redis store's deny cache) forgets
	// the key there too; the caches of other processes may go on denying
	// it until their cached RetryAfter, never longer.
	Reset(ctx context.Context, checks ...Check) error
}

// A Refunded is what [Refunder.Refund] reports of one check: its key as it
// stands after the refund, and whether its place came back. A GiveBack
// reports, for a check of every kind, what a Take of the same checks at
// its instant would report without consuming, and whether some of the
// check's units came back (see [GiveBacker.GiveBack]).
type Refunded struct {
	// Decision describes the check's key after the refund.
	//
	// For a leaky_queue check it is a fresh look at the queue at the
	// refund's instant (the store's clock), once every place the Refund
	// gives back is given back, whether or not this check's came back: what
	// a Take of the check alone at that instant would report without
	// consuming. Allowed says whether the check would be admitted then
	// (RetryAfter its wait when not), Remaining how many unit requests the
	// queue admits then, ResetAfter and NextAfter count from that instant,
	// and Delay is 0. A key the store does not hold reports a fresh queue.
	// (A Take of another caller between the refund and the look, on a
	// store that does not make them one step, is counted.)
	//
	// For a check of any other kind it is the Take's decision, ds[i],
	// unchanged: the store does not look at those keys, whose units stay
	// spent, and its durations count from the Take's instant.
	Decision
	// Given reports whether the check's place came back: always false for
	// a check of another kind, or of a denied Take.
	Given bool
}

// A Clock tells the time. Stores read it once per call.
type Clock interface{ Now() time.Time }

// ClockFunc adapts a function to a Clock.
type ClockFunc func() time.Time

// Now returns f().
func (f ClockFunc) Now() time.Time { return f() }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// SystemClock is the Clock that returns time.Now.
var SystemClock Clock = systemClock{}

// Errors.
var (
	// ErrInvalidSpec is matched (errors.Is) by every *SpecError.
	ErrInvalidSpec = errors.New("algorithms: invalid spec")
	// ErrInvalidCost is matched by every *CostError.
	ErrInvalidCost = errors.New("algorithms: invalid cost")
	// ErrClosed is returned by a store used after Close.
	ErrClosed = errors.New("algorithms: store closed")
	// ErrKeyState is matched by a store's error about the state one key
	// holds: a value the store cannot use (of another type, or one it did
	// not write, such as an application's own key under a colliding
	// prefix). The backend answered and the key is at fault, not the
	// backend: a circuit breaker counts it as the backend's answer, never
	// as its failure, so that one client's key cannot open the circuit for
	// every client.
	ErrKeyState = errors.New("algorithms: a key holds state the store cannot use")
	// ErrTryAgain is matched by a store's error that its backend answered,
	// refusing the call for now for a reason of its own that passes: a
	// Redis Cluster slot migrating (TRYAGAIN, or ASK to a client that
	// follows no redirection; see the redisstore package, "Failures").
	// The backend is up: a circuit breaker counts it as the backend's
	// answer, never as its failure, so that a routine resharding does not
	// open the circuit for every client.
	ErrTryAgain = errors.New("algorithms: the backend refused the call for now; try again")
	// ErrCircuitOpen is matched by a store's error that it refused a call
	// without sending it, its own circuit breaker open for the backend
	// the call needed: on a Redis Cluster, the master of the call's slot
	// (see the redisstore package's WithCircuitBreaker). It says nothing
	// of the rest of the backend, and cost no wait: a circuit breaker
	// further out (the middleware's) counts it neither as a failure nor as
	// an answer, so that one failing node does not open the circuit for
	// the keys the other nodes serve.
	ErrCircuitOpen = errors.New("algorithms: the store's circuit breaker is open")
)

// A SpecError reports a Spec that fails validation: which field, and why.
type SpecError struct {
	Spec   Spec   // the Spec that failed
	Field  string // the Spec field at fault, e.g. "Limit"
	Reason string // the rule it breaks, e.g. "must be positive, got 0"
}

// Error formats e as "algorithms: invalid spec: Field reason".
func (e *SpecError) Error() string {
	return fmt.Sprintf("algorithms: invalid spec: %s %s", e.Field, e.Reason)
}

// Is reports whether target is ErrInvalidSpec.
func (e *SpecError) Is(target error) bool { return target == ErrInvalidSpec }

// A CostError reports a check whose cost is negative or above the capacity
// of its Spec, or checks of one call on one key under one Spec whose costs
// together are more than that key can ever admit at once: such a request
// could never be admitted, so it is an error rather than a silent denial
// (whose RetryAfter no wait would honour). See [ValidateChecks].
type CostError struct {
	// Spec is the check's Spec, or for a check judged at a limit of its
	// own ([Check.Limit]) the Spec [Check.Judged] returns: the check's
	// Spec with that limit in place of its own, whose capacity the cost
	// passes.
	Spec Spec
	Cost int64 // the check's cost, as given
	// Combined is 0 when the check's own cost is out of range. Otherwise
	// the check's cost is in range, but it follows others of its call on
	// the same Key under Spec, and Combined is the total cost of those
	// checks up to and including it (a cost of 0 counted as 1): more than
	// the capacity, or for leaky_queue, whose queue takes a request while
	// the requests ahead of it hold at most the capacity less one places,
	// a total whose part before this check is more than the capacity less
	// one.
	Combined int64
}

// Error names the cost and why it is refused: negative, 0, above the
// capacity of the Spec, or, for checks of one key, their combined cost and
// the capacity it passes. It does not name the key, which may be personal
// data (an address, a user).
func (e *CostError) Error() string {
	switch {
	case e.Combined > 0 && e.Spec.Algorithm == LeakyQueue:
		ahead := e.Combined - Check{Cost: e.Cost}.cost()
		return fmt.Sprintf("algorithms: invalid cost: checks of one key under %s cost %d together, %d of it queued ahead of the last, above the capacity %d less one", e.Spec, e.Combined, ahead, e.Spec.Capacity())
	case e.Combined > 0:
		return fmt.Sprintf("algorithms: invalid cost: checks of one key under %s cost %d together, above the capacity %d", e.Spec, e.Combined, e.Spec.Capacity())
	case e.Cost < 0:
		return fmt.Sprintf("algorithms: invalid cost %d: must not be negative", e.Cost)
	case e.Cost == 0:
		return "algorithms: invalid cost 0: must be at least 1"
	}
	return fmt.Sprintf("algorithms: invalid cost %d: exceeds the capacity %d of %s", e.Cost, e.Spec.Capacity(), e.Spec)
}

// Is reports whether target is ErrInvalidCost.
func (e *CostError) Is(target error) bool { return target == ErrInvalidCost }
