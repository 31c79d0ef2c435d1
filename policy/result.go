package policy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"net/http"
	"reflect"
	"slices"
	"time"
	"unsafe"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/lowest"
	"github.com/ratekeeper/ratekeeper/internal/reqcopy"
	"github.com/ratekeeper/ratekeeper/internal/resultroom"
	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// inline is the number of policies whose checks, decisions and reports
// Refund, GiveBack and Reset gather on the stack.
const inline = 4

// A Result is the evaluation of a Set for one request: the policies that
// applied and, once taken, their decisions. Fill it with [Set.Prepare] and
// then [Result.Take]. The zero Result is empty and ready for Prepare; a
// Result is reused by calling Prepare again.
//
// Most of its methods only read it: [Result.Len], [Result.Policy],
// [Result.Key], [Result.Decision], [Result.Allowed], [Result.RetryAfter],
// [Result.Delay], [Result.Lowest], [Result.Cost], [Result.Taken] and the
// other reports are all that a handler reading the middleware's decision
// (middleware.FromContext, a deny handler) needs. The methods that change
// it, [Result.Take], [Result.Peek], [Result.Refund], [Result.GiveBack] and
// [Result.Reset], are for the code that prepared the Result: called on
// the Result of a request a middleware decided, they would count the
// request again or change what the middleware reports and gives back.
// (What package middleware does to decide a policy nested in another
// middleware, leaving out the checks a middleware further out counted and
// merging in its decisions, is not in this API: no handler can do it to
// the request's Result.)
//
// A Result keeps its checks and decisions in a room of its own, which
// Prepare allocates for as many policies as apply and later Prepares
// reuse while it is large enough, so that a reused Result costs no
// allocation per request: Take passes its buffers to the store as they
// are. (Package middleware gives its Results room in the allocation that
// holds them.)
//
// A Result is not to be copied once prepared: the copy would share its
// room with the original (go vet reports copies).
//
// A guarded policy ([Policy.Guards]: the Spec it was lowered from, the
// Specs reloads replaced) adds a check per guard to each store call of its
// Result (the same key and cost under the guard's Spec, judged at the
// limit [Policy.GuardLimit] reports: the policy's own for a guard of its
// window kind and shape), and its decision is its own merged with its
// guards': allowed when all are, the lowest Remaining (with the wait for
// it to grow), the longest RetryAfter, ResetAfter and Delay, the policy's
// Limit.
// Its Result then keeps that store call in an allocation of its own,
// which a reused Result keeps too. A copy made by [Policy.WithLimit] of a
// window kind, whose guard is its Spec at the higher limit it was made
// from (or at a lower one, for fixed_window, sliding_window and
// sliding_buckets), is the exception: that guard's state counts every request its own
// Spec's would, and more, so that judged at its limit it alone decides
// what both would. Such a policy is checked once, under the guard's Spec
// judged at its limit (no allocation of its own when it has no other
// guard), and nothing counts under its own Spec.
//
// A Result is not safe for concurrent mutation; once taken it is read-only
// and may be read from any goroutine, until a [Result.Refund], which
// writes the decisions as they stand after it.
type Result struct {
	_       noCopy
	set     *Set
	mask    uint64 // applicable and not skipped
	skipped uint64 // applicable, skipped for want of a key
	given   uint64 // after a Refund, the checks whose place came back
	n       int8   // at most MaxPolicies; with the rooms and the bools, in one word
	room    int8   // the checks and decisions chks and decs have room for
	keyRoom uint16 // the bytes keys has room for
	taken   bool
	// refunded: a Refund succeeded, and the decisions are its reports.
	refunded bool
	gaveBack bool // a GiveBack succeeded; given holds what came back
	peeked   bool // the decisions are a Peek's: nothing was consumed
	// chks and decs point at the room of the checks and decisions: the
	// first of room elements each, in an allocation of Prepare's or in
	// the owner's (see internal/resultroom). The policies are those of
	// mask, in Set order (see Policy).
	chks *algorithms.Check
	decs *algorithms.Decision
	// keys (keyRoom bytes) backs the namespaced keys when they fit; only
	// the next Prepare writes it again (see Prepare).
	keys *byte
	// gr holds the store calls of a Result with guarded policies (see
	// guardRoom); nil until one is prepared.
	gr *guardRoom
}

// noCopy makes go vet's copylocks check report a Result copied by value:
// the copy would share the original's room.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

func init() {
	resultroom.Give = func(r any, room resultroom.Room) {
		if one, ok := room.(*resultroom.One); ok {
			// The room of a request with one policy, the most common:
			// its parts without a call through the interface.
			r.(*Result).give(one.Checks[:], one.Decisions[:], one.Keys[:])
			return
		}
		r.(*Result).give(room.Parts())
	}
	resultroom.Decisions = func(r any) []algorithms.Decision { return r.(*Result).decisions() }
	resultroom.Copy = func(dst, src any) { dst.(*Result).copyOf(src.(*Result)) }
}

// copyOf makes res, a Result not in use, a copy of src (see
// resultroom.Copy): its checks and decisions, and the store calls of its
// guards, in room of its own; its keys src's.
func (res *Result) copyOf(src *Result) {
	res.set, res.mask, res.skipped, res.given = src.set, src.mask, src.skipped, src.given
	res.taken, res.refunded, res.gaveBack, res.peeked = src.taken, src.refunded, src.gaveBack, src.peeked
	res.gr = nil
	res.n = 0
	if n := int(src.n); n > 0 {
		res.grow(n)
		res.n = src.n
		chks, decs := res.parts()
		schks, sdecs := src.parts()
		copy(chks, schks)
		copy(decs, sdecs)
	}
	// The checks' keys are in src's key bytes (or allocated): shared.
	res.keys, res.keyRoom = src.keys, src.keyRoom
	if g := src.gr; g != nil {
		res.gr = &guardRoom{checks: slices.Clone(g.checks), decs: slices.Clone(g.decs), idx: slices.Clone(g.idx), off: g.off, own: g.own}
	}
}

// decisions returns the decisions of res in place: none before Take.
func (res *Result) decisions() []algorithms.Decision {
	if !res.taken {
		return nil
	}
	return unsafe.Slice(res.decs, uint8(res.n)) // n, never negative, as a uint8: no check of it
}

// give makes res keep its checks and decisions in checks and decs, and
// its keys in keys while they fit.
func (res *Result) give(checks []algorithms.Check, decs []algorithms.Decision, keys []byte) {
	res.chks, res.decs, res.room = nil, nil, 0
	if n := min(len(checks), len(decs), MaxPolicies); n > 0 {
		res.chks, res.decs, res.room = &checks[0], &decs[0], int8(n)
	}
	res.keys, res.keyRoom = nil, 0
	if n := min(len(keys), math.MaxUint16); n > 0 {
		res.keys, res.keyRoom = &keys[0], uint16(n)
	}
}

// grow gives res room of its own for k policies, in one allocation.
func (res *Result) grow(k int) {
	switch k {
	case 1:
		res.give(new(resultroom.One).Parts())
	case 2:
		res.give(new(resultroom.Two).Parts())
	case 3:
		res.give(new(resultroom.Three).Parts())
	case 4:
		res.give(new(resultroom.Four).Parts())
	default:
		res.give(make([]algorithms.Check, k), make([]algorithms.Decision, k), make([]byte, 32*k))
	}
}

// parts returns the checks and decisions of the evaluated policies.
func (res *Result) parts() ([]algorithms.Check, []algorithms.Decision) {
	n := uint8(res.n) // never negative: as a uint8, unsafe.Slice needs no check of it
	return unsafe.Slice(res.chks, n), unsafe.Slice(res.decs, n)
}

// Prepare resets res and fills it with one check per policy of s in mask
// (from [Set.Match]) that applies to r: its namespaced key ("name:key") and
// its cost. Nothing is consumed. Policies sharing one key function (the
// same func value) call it once when it finds a key; when it fails, the
// next of them calls it again (a policy skipped for want of a key leaves
// no key to reuse).
//
// A key longer than keyfunc.MaxKeyLen bytes (a client's header, say) is
// written as its digest, "#" and keyfunc.HashLen characters, so that no
// request makes a store key of the client's choosing length; so is a key
// starting with '#', so that no key meets another's digest.
//
// A key function reading the route (keyfunc.Route) sees the pattern the
// Set's pattern function finds, as Match did, when the router has not set
// one, and also, with a pattern function set by [WithPatternFunc], when
// the request already carries one: that is an outer router's (the "/api/"
// of a ServeMux mounted in another, chi's "/api/*" in a sub-router's
// r.Use), not the route of this request. Before routing, the pattern is
// handed over when the key function reports keyfunc.ErrNoRoute, which
// keyfunc.FirstOf returns rather than fall back past it (a configuration's
// key with a route part and a fallback gets it up front). Without a
// pattern function, that error stands: the key action decides. The route
// is handed over on a copy of r; a form the key function parses there
// (r.PostFormValue, reading the body), or a body it puts back after
// reading it, is r's too, as if it had been handed r.
//
// A policy whose key function fails, or returns an empty key, is left out
// if its action is [SkipPolicy]; otherwise Prepare returns a *KeyError
// (the caller rejects the request with the action's status). A cost out of
// range returns a *CostError naming every policy whose capacity the cost is
// out of, in Set order: once one is found, the policies after it are still
// looked over (their keys extracted, to leave out those SkipPolicy leaves
// out; a policy without a key is then passed over, the request refused for
// its cost already). A panic of a key or cost function called then, only
// to name its policy, does not undo the refusal: the policy is passed over
// too (before the refusal, panics of those functions go through to the
// caller). Whichever error Prepare returns, the Result holds no checks.
// A cost above the capacity of a policy at a lowered limit that its
// configured capacity holds ([Policy.Configured]) is not out of range:
// the policy's check is prepared with that cost, and Take denies it
// ([Result.AboveLimit]).
//
// The keys of a Result are only valid until the next Prepare on it: a
// caller that reuses a Result must not keep its keys (the stores of this
// module do not keep them).
func (s *Set) Prepare(r *http.Request, mask uint64, res *Result) error {
	res.set = s
	res.mask, res.skipped, res.n, res.taken = 0, 0, 0, false
	res.refunded, res.given, res.gaveBack, res.peeked = false, 0, false, false
	if res.gr != nil {
		res.gr.off, res.gr.own = [MaxGuards]uint64{}, 0 // every check counts again (see dropGuard, dropOwn)
	}
	if k := bits.OnesCount64(mask); k > int(res.room) {
		res.grow(k)
	}
	checks := unsafe.Slice(res.chks, res.room)
	if m := mask & s.all; m != 0 && m&(m-1) == 0 {
		if i := bits.TrailingZeros64(m); s.policies[i].cost == nil && s.folds&m == 0 {
			return s.prepareOne(r, i, res, &checks[0])
		}
	}
	var at [MaxPolicies]int8 // index in keys of each policy's raw key
	total, n := 0, 0
	kr, asked := r, false // the request the key functions see; the pattern asked for it
	// Once a policy's cost is out of range (ce), the request is refused:
	// the policies after it are only looked over for a cost out of range
	// too (collected in ce), their keys extracted only to pass over those
	// without one. keyed has the policies whose key was found, which the
	// policies sharing their key function reuse.
	var ce *CostError
	var keyed uint64
	// The policies of mask, in Set order: the walk visits only them (a
	// bit past the Set's policies names none).
	for m := mask & s.all; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		p := s.policies[i]
		var key string
		j := s.keySrc[i]
		for j >= 0 && keyed&(1<<j) == 0 {
			j = s.keySrc[j]
		}
		if j >= 0 {
			if ce == nil {
				key = checks[at[j]].Key // same key function, already called
			}
		} else {
			var err error
			key, err = s.policyKey(r, &kr, &asked, p, ce != nil)
			if err != nil {
				if p.onKey == SkipPolicy {
					res.skipped |= 1 << i
					continue
				}
				if ce != nil {
					// The request is refused for its cost already; a
					// policy without a key did not evaluate it.
					continue
				}
				res.n, res.mask = 0, 0
				return &KeyError{Policy: p, Action: p.onKey, Err: err}
			}
		}
		keyed |= 1 << i
		cost, ok := int64(1), true
		if p.cost != nil {
			if ce == nil {
				cost = p.cost(r)
			} else if cost, ok = costOnceRefused(p.cost, r); !ok {
				continue // it panicked: not named (see costOnceRefused)
			}
			// A cost above a lowered limit that the configured one
			// holds is admissible once the limit is back: not out of
			// range (nor named in a CostError). Its check's cost,
			// above the policy's capacity, tells Take to deny it (see
			// AboveLimit).
			if cost < 1 || cost > p.capacity && cost > p.Configured().Capacity() {
				if ce == nil {
					ce = &CostError{Policy: p, Cost: cost}
				} else {
					ce.Others = append(ce.Others, PolicyCost{Policy: p, Cost: cost})
				}
				continue
			}
		}
		if ce != nil {
			continue
		}
		res.mask |= 1 << i
		at[i] = int8(n)
		checks[n] = algorithms.Check{Spec: p.spec, Key: key, Cost: cost}
		if s.folds&(1<<i) != 0 {
			// Its guard's state, judged at its limit, alone decides it
			// (see Policy.folds): that one check is its own.
			checks[n].Spec, checks[n].Limit = p.guard, p.spec.Limit
		}
		total += len(p.name) + 1 + len(key)
		n++
	}
	if ce != nil {
		res.n, res.mask = 0, 0
		return ce
	}
	res.n = int8(n)
	// Namespace every key with its policy's name ("name:key"; names
	// contain no ':', so the result is unambiguous), all in one buffer:
	// res.keys when they fit, else one allocation.
	var b []byte
	if total <= int(res.keyRoom) {
		b = unsafe.Slice(res.keys, res.keyRoom)[:0]
	} else {
		b = make([]byte, 0, total)
	}
	for i, m := 0, res.mask; m != 0; i, m = i+1, m&(m-1) {
		off := len(b)
		b = append(b, s.policies[bits.TrailingZeros64(m)].name...)
		b = append(b, ':')
		b = append(b, checks[i].Key...)
		// b has room for total bytes: the appends never move it. The
		// bytes are never written again while the string lives: a
		// reused Result writes them again only in the next Prepare,
		// whose documented contract ends the life of these keys.
		checks[i].Key = unsafe.String(&b[off], len(b)-off)
	}
	return nil
}

// prepareOne is Prepare for one policy of s, the i-th, whose cost is 1
// (no cost function) and whose check is its own (not folded), once res
// is reset: what the general walk does for it, without the bookkeeping
// of several policies (keys shared, costs out of range). c is the room
// of its check.
func (s *Set) prepareOne(r *http.Request, i int, res *Result, c *algorithms.Check) error {
	p := s.policies[i]
	kr, asked := r, false
	key, err := s.policyKey(r, &kr, &asked, p, false)
	if err != nil {
		if p.onKey == SkipPolicy {
			res.skipped = 1 << i
			return nil
		}
		return &KeyError{Policy: p, Action: p.onKey, Err: err}
	}
	// The namespaced key, as Prepare writes it: in res.keys when it
	// fits, else in an allocation of its own; never written again while
	// the string lives (see Prepare).
	total := len(p.name) + 1 + len(key)
	var b []byte
	if total <= int(res.keyRoom) {
		b = unsafe.Slice(res.keys, res.keyRoom)[:0]
	} else {
		b = make([]byte, 0, total)
	}
	b = append(b, p.name...)
	b = append(b, ':')
	b = append(b, key...)
	// Written in place, field by field after zeroing: a composite
	// literal with p.spec in it is built in a temporary and copied,
	// twice the stores (c may, for all the compiler knows, be p.spec).
	*c = algorithms.Check{}
	c.Spec = p.spec
	c.Key = unsafe.String(&b[0], len(b))
	c.Cost = 1
	res.mask, res.n = 1<<i, 1
	return nil
}

// policyKey finds the key of p, a policy of s, for r, as Prepare does:
// its key function's, handed the route on kr (r, or the copy of r that
// hands the key functions the route, made once the first of them needs
// it: asked), a long key or one starting with '#' written as its digest,
// an empty key an error. refused: the request is refused for its cost
// already (see keyOnceRefused).
func (s *Set) policyKey(r *http.Request, kr **http.Request, asked *bool, p *Policy, refused bool) (key string, err error) {
	if !*asked && s.ownPattern && (r.Pattern != "" || p.routeFallback && RoutePattern(r) == "") {
		// A pattern set before the Set's own pattern function
		// answers is an outer router's ("/api/" of a mux mounted
		// in another, "/api/*" of a chi mount), not the route
		// Match found: a route key part reads the one Match did.
		// So does one behind a fallback before routing, up
		// front: its ErrNoRoute would cost a second call of the
		// key function (the retry below).
		*asked = true
		*kr = r.WithContext(keyfunc.WithRoute(r.Context(), s.keyRoute(r)))
	}
	key, err = keyOf(p.key, r, *kr, refused)
	if err != nil && errors.Is(err, keyfunc.ErrNoRoute) && *kr == r {
		// No route known to the key function (the router has
		// not run): the one the Set's pattern function found,
		// if any, as Match found it.
		if pat := s.keyRoute(r); pat != "" {
			key, err = keyOf(p.key, r, r.WithContext(keyfunc.WithRoute(r.Context(), pat)), refused)
		}
	}
	if len(key) > keyfunc.MaxKeyLen || len(key) > 0 && key[0] == '#' {
		// A value of any length the client may have chosen (a
		// lone header): bounded, as keyfunc.Namespace and the
		// config's keys bound theirs. A key starting with '#'
		// is written as a digest too, so that no key sent as
		// it is meets another's digest.
		key = digestKey(key)
	}
	if err == nil && key == "" {
		// An empty key is no key (as keyfunc's combinators read
		// it), never the one bucket "name:" every such request
		// would share.
		err = errEmptyKey
	}
	return key, err
}

// errPanicked is the key error of a key function that panicked once the
// request was refused for its cost (see keyOnceRefused).
var errPanicked = errors.New("policy: the key function panicked")

// keyOnceRefused returns f's key for r, for a Prepare that has refused
// the request for its cost already and calls f only to tell whether its
// policy is named in the *CostError: a panic of f is errPanicked, so that
// a bug of a later key function does not turn the refusal into a panic
// (before the refusal, Prepare lets f's panics through).
func keyOnceRefused(f keyfunc.Func, r *http.Request) (key string, err error) {
	defer func() {
		if v := recover(); v != nil {
			key, err = "", errPanicked
		}
	}()
	return f(r)
}

// costOnceRefused returns f's cost for r, as keyOnceRefused its key: ok
// is false when f panicked, and its policy is not named.
func costOnceRefused(f func(*http.Request) int64, r *http.Request) (cost int64, ok bool) {
	defer func() {
		if v := recover(); v != nil {
			cost, ok = 0, false
		}
	}()
	return f(r), true
}

// keyOf returns f's key for kr, r or a copy of r that hands f the route,
// and gives r what f left on that copy (keepBody), even when f panics, for
// a caller that recovers: a key function that parsed a multipart form and
// then panicked would otherwise leave the form's files on disk. Once the
// request is refused (see keyOnceRefused), f's panic is its key error.
func keyOf(f keyfunc.Func, r, kr *http.Request, refused bool) (string, error) {
	if kr == r && !refused {
		return f(r) // the common case, in line: nothing to give back
	}
	return keyOfCopy(f, r, kr, refused)
}

// keyOfCopy is keyOf for a copy of r or a refused request.
func keyOfCopy(f keyfunc.Func, r, kr *http.Request, refused bool) (string, error) {
	if kr != r {
		defer keepBody(r, kr)
	}
	if refused {
		return keyOnceRefused(f, kr)
	}
	return f(kr)
}

// keepBody gives r what a key function left on kr, a copy of r that hands
// it the route: the form it parsed and the body it put back after reading
// it. The copy shares r's body, which it read, so that without them the
// handler r goes on to would find neither the body nor the form (a login
// handler, no user name).
//
// It writes r's Body only when the key function put another on kr, and
// its forms only when it parsed one: a goroutine of r's caller may be
// reading r (a logger of its body, a watcher of its client) while the
// handler serves it, and no router serving r writes them.
func keepBody(r, kr *http.Request) {
	if !same(r.Body, kr.Body) {
		r.Body = kr.Body
	}
	reqcopy.Forms(r, kr) // writes only the forms kr has and r lacks
}

// same reports whether a and b, two values of an interface type (bodies,
// routers), are equal by ==, and false where == would panic: a and b of
// one type it cannot compare (a struct holding a slice, put back by
// value), or of a comparable type whose interface field holds such a
// value. a's value is checked: b, of another dynamic type in that field,
// is told apart by == without a panic.
func same(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return reflect.TypeOf(a) == reflect.TypeOf(b) && reflect.ValueOf(a).Comparable() && a == b
}

// keyRoute returns the route a route key part reads for r, from the Set's
// pattern function: the pattern it finds, or NoRoute when the function is
// the Set's own ([WithPatternFunc]), which knows the router's routes, and
// says none matches (a 404); "" when the default function does not know.
func (s *Set) keyRoute(r *http.Request) string {
	pat := s.pattern(r)
	if pat == "" && s.ownPattern {
		pat = NoRoute
	}
	return pat
}

// errEmptyKey is the key error of a key function that returned "".
var errEmptyKey = fmt.Errorf("key function returned an empty key: %w", keyfunc.ErrNoKey)

// oneStore is implemented by stores that decide a single check without a
// slice ([algorithms.MemoryStore.TakeOne]).
type oneStore interface {
	TakeOne(ctx context.Context, c algorithms.Check) (algorithms.Decision, error)
}

// Take decides every prepared check in one call to store, all or nothing:
// with an [algorithms.IntoStore] it writes into res's buffers without
// allocating. The error is the store's, wrapped; res is then not taken.
// Taking a Result with no checks does not call the store.
//
// A Result whose cost is above the limit in force of some of its policies
// but within their configured one ([Result.AboveLimit]) is denied by
// them without consuming anything: Take peeks at the store instead (see
// [Result.AboveLimit] for the decisions), and [Result.Peeked] reports
// true. The store must then be an [algorithms.Peeker] (both of this
// module's are); with one that is not, Take returns a *CostError naming
// those policies, and res is not taken.
func (res *Result) Take(ctx context.Context, store algorithms.Store) error {
	res.taken, res.refunded, res.given, res.gaveBack, res.peeked = false, false, 0, false, false
	if res.above() != 0 {
		pk, ok := store.(algorithms.Peeker)
		if !ok {
			return res.aboveError()
		}
		return res.denyAbove(ctx, pk, true)
	}
	checks, ds := res.parts()
	if res.guarded() {
		gr := res.guardChecks(checks)
		if err := take(ctx, store, gr.decs, gr.checks); err != nil {
			return err
		}
		gr.merge(ds, gr.decs)
		res.taken = true
		return nil
	}
	switch len(checks) {
	case 0:
		res.taken = true
		return nil
	case 1:
		var (
			d   algorithms.Decision
			err error
		)
		// The in-memory store asked by its type, a comparison, where
		// the assertion to oneStore looks its method up.
		if ms, ok := store.(*algorithms.MemoryStore); ok {
			d, err = ms.TakeOne(ctx, checks[0])
		} else if one, ok := store.(oneStore); ok {
			d, err = one.TakeOne(ctx, checks[0])
		} else {
			break
		}
		if err != nil {
			return fmt.Errorf("policy: store: %w", err)
		}
		ds[0], res.taken = d, true
		return nil
	}
	if err := take(ctx, store, ds, checks); err != nil {
		return err
	}
	res.taken = true
	return nil
}

func take(ctx context.Context, store algorithms.Store, dst []algorithms.Decision, checks []algorithms.Check) error {
	if is, ok := store.(algorithms.IntoStore); ok {
		if err := is.TakeInto(ctx, dst, checks); err != nil {
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
	copy(dst, ds)
	return nil
}

// Refund gives back, through store (the one whose Take decided res), the
// leaky_queue places res took, for a request that will not go ahead: its
// client went away while it was held. waited is how long the request was
// held after Take returned. Which places come back is
// [algorithms.Refunder]'s rule (the last place of a queue, exactly).
//
// When the store's Refund succeeds, res holds what it reported of each
// check ([algorithms.Refunded]) in place of the Take's decisions, and
// [Result.Refunded] reports true: each leaky_queue decision is then its
// queue as it stands at the refund's instant (which may deny, a queue
// filled by later requests; Delay 0), whether or not its place came back
// ([Result.Given]), and the decisions of other kinds are the Take's. So
// Decision, Allowed, Delay, RetryAfter and Lowest read the queues after
// the refund. When it fails, res keeps the Take's decisions.
//
// A store that is not a Refunder keeps the places, and Refund returns nil,
// as it does for a Result not taken, peeked, already refunded or given
// back.
func (res *Result) Refund(ctx context.Context, store algorithms.Store, waited time.Duration) error {
	rf, ok := store.(algorithms.Refunder)
	if !ok || !res.taken || res.peeked || res.refunded || res.gaveBack {
		return nil
	}
	checks, ds := res.parts()
	sc, sd := checks, ds
	if res.guarded() {
		sc, sd = res.gr.checks, res.gr.decs // the Take's checks and decisions
	}
	var buf [2 * inline]algorithms.Refunded
	out := buf[:0]
	if len(sc) > len(buf) {
		out = make([]algorithms.Refunded, 0, len(sc))
	}
	out = out[:len(sc)]
	if err := rf.Refund(ctx, out, sc, sd, waited); err != nil {
		return fmt.Errorf("policy: store: refund: %w", err)
	}
	for i := range sd { // ds itself when no policy is guarded
		sd[i] = out[i].Decision
	}
	for i := range ds {
		if out[i].Given {
			res.given |= 1 << i
		}
	}
	if res.guarded() {
		gr := res.gr
		gr.merge(ds, sd)
		for j, i := range gr.idx {
			if out[len(ds)+j].Given {
				res.given |= 1 << i
			}
		}
	}
	res.refunded = true
	return nil
}

// GiveBack gives back, through store (the one whose Take decided res), the
// units that the policies of res in mask took (bit i: the i-th evaluated
// policy, [Result.Policy](i)), for a request that went ahead but is not to
// count under them ([CountIf]); waited is the time since res's Take was
// sent. The store gives back what still counts, by the rules of
// [algorithms.GiveBacker]: for the window kinds the Take's window or
// bucket is told from the decision's ResetAfter and waited, so waited
// measured from before the Take (never shorter than the store's own
// reckoning) errs, if at all, towards giving back less. The other
// policies keep their units: the Take was all or nothing, the give-back
// is per policy.
//
// When the store's GiveBack succeeds, res holds, for each policy of mask,
// what the store reported of its key after the give-back (see
// [algorithms.GiveBacker]: its allowance as it stands at the give-back's
// instant, the times counted from then) in place of the Take's decision,
// as after a Refund; the other policies keep the Take's decisions.
// [Result.Given] reports, for each policy, whether units came back. When
// it fails, res keeps the Take's decisions. GiveBack does nothing and returns nil with a store that is not a
// GiveBacker, for a Result not taken, peeked or denied (it consumed
// nothing), refunded or already given back, and for an empty mask.
func (res *Result) GiveBack(ctx context.Context, store algorithms.Store, waited time.Duration, mask uint64) error {
	gb, ok := store.(algorithms.GiveBacker)
	if !ok || !res.taken || res.peeked || res.refunded || res.gaveBack || !res.Allowed() {
		return nil
	}
	checks, ds := res.parts()
	all, alld := checks, ds
	var gr *guardRoom
	if res.guarded() {
		gr = res.gr
		all, alld = gr.checks, gr.decs // the Take's checks and decisions
	}
	var cbuf [2 * inline]algorithms.Check
	var dbuf [2 * inline]algorithms.Decision
	var obuf [2 * inline]algorithms.Refunded
	var idx [3 * MaxPolicies]uint8 // the position in all of each check given back (up to 3·64)
	sc, sd, out := cbuf[:0], dbuf[:0], obuf[:0]
	for i := range checks {
		if mask&(1<<i) != 0 {
			idx[len(sc)] = uint8(i)
			sc, sd = append(sc, all[i]), append(sd, alld[i])
			if gr != nil {
				for j, g := range gr.idx { // its guards
					if int(g) == i {
						k := len(checks) + j
						idx[len(sc)] = uint8(k)
						sc, sd = append(sc, all[k]), append(sd, alld[k])
					}
				}
			}
		}
	}
	if len(sc) == 0 {
		return nil
	}
	if len(sc) > len(obuf) {
		out = make([]algorithms.Refunded, 0, len(sc))
	}
	out = out[:len(sc)]
	if err := gb.GiveBack(ctx, out, sc, sd, waited); err != nil {
		return fmt.Errorf("policy: store: give-back: %w", err)
	}
	for k := range out {
		at := int(idx[k])
		alld[at] = out[k].Decision // ds itself when no policy is guarded
		i := at
		if at >= len(checks) {
			i = int(gr.idx[at-len(checks)]) // a guard: its policy's
		}
		if out[k].Given {
			res.given |= 1 << i
		}
	}
	if gr != nil {
		gr.merge(ds, alld)
	}
	res.gaveBack = true
	return nil
}

// GaveBack reports whether a [Result.GiveBack] succeeded.
func (res *Result) GaveBack() bool { return res.gaveBack }

// Refunded reports whether a [Result.Refund] succeeded: the decisions are
// then the store's reports after the refund.
func (res *Result) Refunded() bool { return res.refunded }

// Given reports whether the i-th policy's place came back in a
// [Result.Refund] (false for a policy of a kind other than leaky_queue),
// or some of its units in a [Result.GiveBack].
func (res *Result) Given(i int) bool { return res.given&(1<<i) != 0 }

// Taken reports whether res holds decisions (Take succeeded, or Peek:
// see [Result.Peeked]).
func (res *Result) Taken() bool { return res.taken }

// Len returns the number of policies evaluated (applicable, with a key).
func (res *Result) Len() int { return int(res.n) }

// Policy returns the i-th evaluated policy, in Set order.
func (res *Result) Policy(i int) *Policy {
	if uint(i) >= uint(res.n) {
		panic(fmt.Sprintf("policy: Result.Policy(%d) of %d policies", i, res.n))
	}
	m := res.mask
	for ; i > 0; i-- {
		m &= m - 1
	}
	return res.set.policies[bits.TrailingZeros64(m)]
}

// Key returns the key the i-th policy was checked under, namespaced by the
// policy's name ("per-ip:192.0.2.1").
func (res *Result) Key(i int) string {
	checks, _ := res.parts()
	return checks[i].Key
}

// Cost returns the cost the i-th policy was charged (if allowed).
func (res *Result) Cost(i int) int64 {
	checks, _ := res.parts()
	return checks[i].Cost
}

// Decision returns the i-th policy's decision; the zero Decision before Take.
func (res *Result) Decision(i int) algorithms.Decision {
	if !res.taken {
		return algorithms.Decision{}
	}
	_, ds := res.parts()
	return ds[i]
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
	_, ds := res.parts()
	for i := range ds {
		if !ds[i].Allowed {
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
	_, ds := res.parts()
	for i := range ds {
		d = max(d, ds[i].Delay)
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
	_, ds := res.parts()
	for i := range ds {
		if dec := ds[i]; !dec.Allowed {
			d = max(d, dec.RetryAfter, dec.NextAfter)
		}
	}
	return d
}

// Lowest returns the index of the decision that single-valued headers
// report: among the denied decisions if any (else all), the one with the
// lowest Remaining; on a tie between denied ones the longest wait (the
// larger of RetryAfter and NextAfter, so that the reported reset is the
// response's Retry-After), then the longest ResetAfter. It returns -1 when
// res holds no decisions.
func (res *Result) Lowest() int {
	if !res.taken || res.n == 0 {
		return -1
	}
	_, ds := res.parts()
	best := 0
	for i := 1; i < len(ds); i++ {
		if lowest.Before(ds[i], ds[best]) {
			best = i
		}
	}
	return best
}
