package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/deadline"
	"github.com/redis/go-redis/v9"
)

// WithCircuitBreaker stops sending to a failing Redis: after failures
// consecutive failed calls, every call returns [ErrCircuitOpen] at once for
// cooldown; then one call is let through as a probe, and its success closes
// the circuit (its failure opens it for another cooldown). The breaker
// reads the injected clock when there is one ([WithClock]). On a
// standalone or Sentinel client it is one breaker.
//
// On a *redis.ClusterClient it is one breaker per master node, known by
// its address: a call goes through the breaker of the master that the
// client's slot map names for its slot (one lookup, one per slot for a
// call whose keys span slots, with no round trip once the client has its
// map), so a master that fails with no replica
// to take over opens its own circuit only: the calls of its slots then
// return ErrCircuitOpen at once (an error that matches it and
// algorithms.ErrCircuitOpen with errors.Is, and names the master's
// address: "redisstore: circuit open: the Redis Cluster master at
// 10.0.0.7:6379 is failing"), and after the cooldown one of them
// probes that node, while the calls of the slots the other masters serve
// go on to Redis and are decided (TestClusterBreakerIsPerNode), as long
// as those masters serve them: a cluster that requires full coverage
// (cluster-require-full-coverage, yes by default) answers CLUSTERDOWN to
// every call once it marks the master failed (after cluster-node-timeout),
// an error that counts as a failure of the node that answers it, as OOM
// does. A call
// whose keys span slots (see Cluster in the package doc) asks the breaker
// of every node it will touch before it sends anything: when one of them
// is open it returns ErrCircuitOpen whole, nothing reserved or counted
// anywhere, and a probe it was given on another node is handed on; else
// each node counts the outcome of the call's parts it served, the worst
// of them (a failure of Redis over a reply, a reply over an end that
// says nothing, as below). A Refund or GiveBack of keys across slots,
// which has no all-or-nothing to keep (each key is given back on its
// own), sends the keys of the nodes whose breaker lets it through and
// fails the others' with ErrCircuitOpen, unsent (the first error
// returned, as ever). A replica that takes a master's slots over
// has a breaker of its own, closed: once the client's slot map names it,
// the calls of those slots go to it at once, whatever the old master's
// cooldown. A call refused by an open circuit sends nothing, so nothing
// tells the client of the change: such calls have it reload its map, at
// most once a second (TestClusterBreakerFailoverResumesOnNewMaster). A
// client that has no slot map and cannot load one (no node answers)
// names no node: its calls fail and count in a breaker of their own,
// which, open, refuses them without the client's attempt to load the map
// (TestClusterBreakerWithoutSlotMap). The store keeps at most 1024 node
// breakers: past that, it drops first those closed with no failure
// counted (a new one is the same), then one counting failures while
// closed, else the one whose cooldown ended longest ago. A Peek that a client with ReadOnly (or RouteByLatency,
// RouteRandomly) sends to a replica counts for the master of its slot,
// as does a call the client follows to another node on a redirection
// (MOVED, ASK).
//
// A failed call is one Redis did not answer in the time the store gives
// it: an error of the client (a refused connection, its read timeout, a
// full pool) or of the server, or no reply within the store's timeout
// ([DefaultTimeout], or [WithTimeout]'s). Calls
// whose caller ended them are told apart, since in the middleware every
// call runs on a request's context, which its client ends:
//
//   - A call its caller cancelled (context.Canceled: the client went away)
//     never counts, whatever Redis was doing.
//   - A call that reached its caller's deadline, not the store's timeout,
//     counts only when Redis had a fair chance to answer it: the call began
//     at least 50 ms before that deadline, and no call of the store got a
//     reply from Redis (on a Cluster, from the call's node) while it
//     waited. A deadline already near when the
//     call began would have passed with a healthy Redis too, and a reply to
//     another call shows Redis answering (the caller's deadline was short
//     for the load, as in a burst). A Redis that answers nothing for that
//     long is failing, whoever's deadline ends the calls.
//
// Such calls count neither as failures nor as successes; a half-open probe
// that ends so lets the next call probe. Nor does the failure of a call let
// through before the circuit last opened count once a success closed it
// again (a call whose outage outlasted the cooldown): it is old news of a
// Redis that has answered since. So callers leaving, or short
// deadlines in a burst, never open the circuit while Redis answers, and a
// Redis that stops answering opens it whether the store's timeout or the
// callers' deadlines end its calls. An error Redis replied about one key's
// value (of another type, or not written by the store: see Failures in the
// package doc) counts as the reply it is, Redis being up: one bad key does
// not open the circuit for every client. So does Redis's refusal of a call
// while its slot migrates (TRYAGAIN, or ASK to a client that follows no
// redirection), and the failure of a cross-slot undo that must note a
// give-back then (see Cluster in the package doc): a reshard does not
// open the circuit for the slots it leaves alone
// (TestClusterBreakerClosedWhileSlotMigrates). A call that meets a closed store
// ([Store.Close]) does not count, nor does one that panics (in a hook of
// the client's, say): a probe that ends so lets the next call probe.
func WithCircuitBreaker(failures int, cooldown time.Duration) Option {
	return func(s *Store) error {
		if failures < 1 {
			return fmt.Errorf("redisstore: WithCircuitBreaker: Failures must be at least 1, got %d", failures)
		}
		if cooldown <= 0 {
			return fmt.Errorf("redisstore: WithCircuitBreaker: Cooldown must be positive, got %s", cooldown)
		}
		if s.cluster != nil {
			s.nodes = &nodeBreakers{client: s.cluster, threshold: failures, cooldown: cooldown,
				none: breaker{threshold: failures, cooldown: cooldown}}
		} else {
			s.breaker = &breaker{threshold: failures, cooldown: cooldown}
		}
		return nil
	}
}

// minDeadlineBudget is the least time before its caller's deadline that a
// call must begin with for the deadline, if it passes, to count as a
// failure of Redis (see WithCircuitBreaker).
const minDeadlineBudget = deadline.Budget

// breaker is a consecutive-failure circuit breaker.
type breaker struct {
	mu        sync.Mutex
	threshold int
	cooldown  time.Duration
	failures  int             // consecutive failures while closed
	open      bool            // open or half-open
	until     time.Time       // open: when the next probe may go
	probing   bool            // half-open: a probe is in flight
	probe     deadline.Ticket // the ticket of the last probe let through
	// opens counts the times the circuit opened: a call's ticket holds
	// its value when the call was let through, by which record knows the
	// calls let through before the circuit last opened.
	opens uint64
	// calls gives each call let through its ticket, by which record knows
	// the probe and tells whether its caller's deadline counts.
	calls deadline.Calls
	// refusal is the error of a call the open circuit refuses: nil for
	// ErrCircuitOpen, a circuitOpenError naming its node for a Cluster
	// master's breaker (made once, with the breaker).
	refusal error
}

// A ticket is what the breaker gives each call it lets through, and takes
// back with the call's outcome: the call's place among the calls
// (deadline.Calls), and how many times the circuit had opened by then.
type ticket struct {
	call  deadline.Ticket
	opens uint64
}

// allow is allowCtx for a call without a deadline.
func (b *breaker) allow(now time.Time) (ticket, error) {
	return b.allowCtx(now, context.Background())
}

// refused returns the error of a call b's open circuit refuses.
func (b *breaker) refused() error {
	if b.refusal != nil {
		return b.refusal
	}
	return ErrCircuitOpen
}

// allowCtx returns ErrCircuitOpen when the call on ctx must not go to
// Redis, and otherwise the call's ticket, which record takes back.
func (b *breaker) allowCtx(now time.Time, ctx context.Context) (ticket, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open {
		if now.Before(b.until) || b.probing {
			return ticket{}, b.refused()
		}
		b.probing = true // this call is the probe
		b.probe = b.calls.Begin(ctx)
		return ticket{b.probe, b.opens}, nil
	}
	return ticket{b.calls.Begin(ctx), b.opens}, nil
}

// record counts the outcome err of the call whose ticket is tk (see
// WithCircuitBreaker). A bare context error is the caller's context ending
// (the store's own timeout is wrapped: see Store.ownDeadline). While the
// circuit is open only the probe's failure counts: a call let through
// before the circuit opened that fails now says nothing new, and must not
// end the probe still in flight (which would let a second one through).
// Nor, once a success closed the circuit again, does such a call's
// failure count (its outage can outlast the cooldown: a store timeout
// longer than it, go-redis redialing): Redis answered since, and the
// circuit must not open again for another cooldown on old news.
func (b *breaker) record(err error, now time.Time, tk ticket) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := tk.call
	isProbe := b.probing && t == b.probe
	if err == nil || keyError(err) || errors.Is(err, algorithms.ErrTryAgain) { // marked by markKeyState
		b.calls.Replied()
		b.failures, b.open, b.probing = 0, false, false
		return
	}
	if errors.Is(err, algorithms.ErrClosed) || b.calls.Ignores(t, err) {
		if isProbe {
			b.probing = false
		}
		return
	}
	if b.open {
		if isProbe {
			b.probing = false
			b.until = now.Add(b.cooldown)
		}
		return
	}
	if tk.opens != b.opens {
		return // let through before the circuit last opened
	}
	b.failures++
	if b.failures >= b.threshold {
		b.open, b.until, b.probing = true, now.Add(b.cooldown), false
		b.opens++
	}
}

// unwound hands the probe on, as record does for a call that says nothing
// of Redis, when the call of tk ends without record having its outcome
// (recorded false: a panic, or runtime.Goexit, on the caller's
// goroutine). Deferred by each call the breaker lets through, it keeps
// such a probe from standing in flight for good, which kept the circuit
// open for every later call.
func (b *breaker) unwound(tk ticket, recorded *bool) {
	if *recorded {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.probing && tk.call == b.probe {
		b.probing = false
	}
}

// foreignMark is in the error the store's scripts raise on a value they did
// not write (lua/fastlib.lua); a key cannot spell it, its spaces escaped.
const foreignMark = " holds a value the store did not write"

// keyError reports whether err is an error Redis replied about the value
// of one key: WRONGTYPE, or a value the store did not write. Redis
// answered; the key is at fault, not the server. For a cross-slot Take
// whose undo failed too (leftError), the Take's own error decides.
func keyError(err error) bool {
	if le, ok := err.(*leftError); ok {
		err = le.err
	}
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	msg := re.Error()
	return strings.HasPrefix(msg, "WRONGTYPE") || strings.Contains(msg, foreignMark)
}

// notelessMark is in the error of a cross-slot undo that must note a
// give-back while its slot migrates, its call naming no note key
// (lua/cluster.lua's NOTELESS).
const notelessMark = "its call names no note key (the slot migrating)"

// migrating reports whether err is Redis's answer to a call while its
// slot migrates: a refusal to run it there (slotMigrating), or a
// cross-slot undo's failure for want of its note key (notelessMark).
// Redis answered. For a cross-slot Take whose undo failed too
// (leftError), the Take's own error decides, as for keyError; for one
// whose undos failed (errors.Join), each of theirs must be such.
func migrating(err error) bool {
	if le, ok := err.(*leftError); ok {
		err = le.err
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !migrating(e) {
				return false
			}
		}
		return true
	}
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	return slotMigrating(err) || strings.Contains(re.Error(), notelessMark)
}

// keyStateError is an error Redis replied about the value of one key (see
// keyError), matching algorithms.ErrKeyState as well as the error it holds:
// a caller's own circuit breaker, which cannot read Redis's replies, tells
// it from a failure of Redis by it.
type keyStateError struct{ err error }

func (e *keyStateError) Error() string   { return e.err.Error() }
func (e *keyStateError) Unwrap() []error { return []error{e.err, algorithms.ErrKeyState} }

// tryAgainError is Redis's answer to a call while its slot migrates (see
// migrating), matching algorithms.ErrTryAgain as well as the error it
// holds: a caller's own circuit breaker tells it from a failure of Redis
// by it, as the store's does.
type tryAgainError struct{ err error }

func (e *tryAgainError) Error() string   { return e.err.Error() }
func (e *tryAgainError) Unwrap() []error { return []error{e.err, algorithms.ErrTryAgain} }

// markKeyState returns err, marked as matching algorithms.ErrKeyState when
// it is an error Redis replied about the value of one key, or
// algorithms.ErrTryAgain when it is Redis's answer while a slot migrates.
func markKeyState(err error) error {
	switch {
	case err == nil:
		return nil
	case keyError(err):
		return &keyStateError{err}
	case migrating(err):
		return &tryAgainError{err}
	}
	return err
}

// maxNodeBreakers bounds the node breakers a Cluster store keeps: above
// the thousand nodes Redis Cluster is meant to scale to, so that it is
// reached only by the addresses of nodes gone (failovers, a cluster
// rebuilt) piling up (see nodeBreakers.of).
const maxNodeBreakers = 1024

// nodeBreakers is the circuit breaker of a store on a Cluster: one breaker
// per master node, by its address, which the client's slot map gives for
// a call's slot (see WithCircuitBreaker).
type nodeBreakers struct {
	client    *redis.ClusterClient
	threshold int
	cooldown  time.Duration
	// byAddr maps a node's address to its breaker. It is copied on
	// write under mu (a node new to the store), read without a lock.
	byAddr atomic.Pointer[map[string]*breaker]
	mu     sync.Mutex
	// none is the breaker of the calls whose node the client could not
	// name: it has no slot map, and could not load one (every node
	// unreachable). While it is open, calls fail at once instead of each
	// waiting for the client's attempt to load the map; noneFailed is set
	// from a failed lookup until one succeeds, and only then is none read.
	none       breaker
	noneFailed atomic.Bool
	// reloaded is when (since procStart; 0: never) a call refused by an
	// open circuit last had the client reload its slot map (see
	// refusedReload).
	reloaded atomic.Int64
}

// refusedReload is the least time between two reloads of the client's
// slot map that calls refused by a node's open circuit have the store
// ask for: such calls send nothing, so no reply of Redis (MOVED) or lack
// of one tells the client that a replica took the node's slots over,
// and its periodic reload (ClusterStateReloadInterval, 60 s by default)
// or the cooldown's probe would be the first to find the new master.
const refusedReload = time.Second

// reloadDue reports whether a call refused by an open circuit is to have
// the client reload its slot map: none has for refusedReload.
func (nb *nodeBreakers) reloadDue() bool {
	now := int64(max(time.Since(procStart), 1))
	last := nb.reloaded.Load()
	return (last == 0 || time.Duration(now-last) >= refusedReload) && nb.reloaded.CompareAndSwap(last, now)
}

// breakerFor returns the breaker of the master node the client's slot map
// gives for key's slot, looked up on ctx (the client loads its slot map
// first when it has none). When the client cannot name the node it
// returns none and the lookup's error, which is the call's outcome: the
// call itself would fail so. While none is open it returns none at once,
// whose allowCtx refuses the call.
func (nb *nodeBreakers) breakerFor(ctx context.Context, key string, now time.Time) (*breaker, error) {
	if nb.noneFailed.Load() && nb.none.refuses(now) {
		return &nb.none, nil
	}
	c, err := nb.client.MasterForKey(ctx, key)
	if err != nil {
		nb.noneFailed.Store(true)
		return &nb.none, err
	}
	if nb.noneFailed.Load() {
		nb.noneFailed.Store(false)
		nb.none.record(nil, now, ticket{}) // the map loaded: closed
	}
	return nb.of(c.Options().Addr), nil
}

// of returns the breaker of the node at addr, adding a closed one when
// there is none; at maxNodeBreakers it first drops others (evictBreaker).
func (nb *nodeBreakers) of(addr string) *breaker {
	if m := nb.byAddr.Load(); m != nil {
		if b, ok := (*m)[addr]; ok {
			return b
		}
	}
	nb.mu.Lock()
	defer nb.mu.Unlock()
	old := nb.byAddr.Load()
	var m map[string]*breaker
	if old != nil {
		if b, ok := (*old)[addr]; ok {
			return b
		}
		m = make(map[string]*breaker, len(*old)+1)
		for a, b := range *old {
			m[a] = b
		}
	} else {
		m = make(map[string]*breaker, 4)
	}
	if len(m) >= maxNodeBreakers {
		evictBreaker(m)
	}
	b := &breaker{threshold: nb.threshold, cooldown: nb.cooldown, refusal: circuitOpenError{addr: addr}}
	m[addr] = b
	nb.byAddr.Store(&m)
	return b
}

// evictBreaker drops from m, full, every breaker closed with no failure
// counted (a new one is the same), or, if none is, one that counts
// failures while closed, else the one whose cooldown ended longest ago (a
// node gone: the calls of a live node's slots probe it every cooldown,
// moving its end on).
func evictBreaker(m map[string]*breaker) {
	var victim string
	var vOpen bool
	var vUntil time.Time
	for a, b := range m {
		b.mu.Lock()
		open, until, idle := b.open, b.until, !b.open && b.failures == 0
		b.mu.Unlock()
		switch {
		case idle:
			delete(m, a)
		case victim == "" || vOpen && (!open || until.Before(vUntil)):
			victim, vOpen, vUntil = a, open, until
		}
	}
	if len(m) >= maxNodeBreakers {
		delete(m, victim)
	}
}

// refuses reports whether allowCtx refuses a call at now.
func (b *breaker) refuses(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.open && (now.Before(b.until) || b.probing)
}

// A pass is the way of one call of several slots (split) through a
// Cluster store's node breakers: the breaker of each master node its
// slots map to, with the ticket it gave, and the outcomes of the call's
// parts on that node (note), which record takes back.
type pass struct {
	nodes []passNode
	slots []slotNode
	// failed is the error of the lookup of a node that failed: the
	// call's outcome, recorded by none (see breakerFor).
	failed error
	mu     sync.Mutex // guards the notes and sealed
	sealed bool       // recorded: later notes are dropped
}

// A passNode is one node breaker of a pass: its ticket, and the outcomes
// noted of the call's parts on the node: whether any succeeded
// (answered), and the errors of the others.
type passNode struct {
	b        *breaker
	tk       ticket
	notes    []error
	noted    bool
	answered bool
	refused  bool // the breaker refused the call (allowAll without whole): no ticket
}

// A slotNode names the node (its index in pass.nodes) of a slot of a pass.

type slotNode struct {
	slot uint16
	node int // index in pass.nodes
}

// allowAll returns the pass of r, a call of several slots, having every
// node breaker it touches allow it before anything is sent. With whole
// (a Take, Peek or Reset), when one refuses it, it returns ErrCircuitOpen,
// the tickets the others gave handed back, so that the call fails whole;
// else (a refund, a give-back: every key tried) the nodes that refuse it
// are marked so (pass.refuses), and it returns ErrCircuitOpen only when
// every one does. Lookups run on ctx; the tickets are of the caller's
// context parent.
func (nb *nodeBreakers) allowAll(ctx, parent context.Context, r *request, now time.Time, whole bool) (*pass, error) {
	p := &pass{}
	for i, tag := range r.tags {
		sl := slot(tag)
		if p.nodeOf(sl) >= 0 {
			continue
		}
		b, err := nb.breakerFor(ctx, r.keys[r.first[i]], now)
		if err != nil {
			p.nodes, p.slots, p.failed = []passNode{{b: b}}, nil, err
			break
		}
		n := -1
		for k := range p.nodes {
			if p.nodes[k].b == b {
				n = k
			}
		}
		if n < 0 {
			n = len(p.nodes)
			p.nodes = append(p.nodes, passNode{b: b})
		}
		p.slots = append(p.slots, slotNode{sl, n})
	}
	refused := 0
	for k := range p.nodes {
		tk, err := p.nodes[k].b.allowCtx(now, parent)
		if err != nil && whole {
			unrecorded := false
			for _, pn := range p.nodes[:k] {
				pn.b.unwound(pn.tk, &unrecorded)
			}
			return nil, err
		}
		if err != nil {
			p.nodes[k].refused = true
			refused++
		}
		p.nodes[k].tk = tk
	}
	if refused == len(p.nodes) {
		return nil, p.nodes[0].b.refused()
	}
	return p, nil
}

// refuses returns the refusal of the breaker of slot sl's node when it
// refused the call (allowAll without whole): its parts there are not to
// be sent. It returns nil otherwise.
func (p *pass) refuses(sl uint16) error {
	if n := p.nodeOf(sl); n >= 0 && p.nodes[n].refused {
		return p.nodes[n].b.refused()
	}
	return nil
}

// nodeOf returns the index in p.nodes of the node of slot sl, or -1.
func (p *pass) nodeOf(sl uint16) int {
	for _, sn := range p.slots {
		if sn.slot == sl {
			return sn.node
		}
	}
	return -1
}

// note adds err, the outcome of a part of the call on slot sl, to its
// node's. Safe for concurrent use; dropped once the pass is recorded.
func (p *pass) note(sl uint16, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := p.nodeOf(sl); n >= 0 && !p.sealed {
		p.nodes[n].noted = true
		if err == nil {
			p.nodes[n].answered = true
		} else {
			p.nodes[n].notes = append(p.nodes[n].notes, err)
		}
	}
}

// record hands each node breaker of p its outcome of the call: the worst
// of its parts' outcomes (a failure of Redis over an answer of it, an
// answer over an end that says nothing of it: see weight), each read
// through conv (the store's own deadline, a key's error: as the call's
// error is); a node none of whose parts was noted takes err, the call's.
func (p *pass) record(err error, conv func(error) error, now time.Time) {
	p.mu.Lock()
	p.sealed = true
	p.mu.Unlock()
	for _, pn := range p.nodes {
		if pn.refused {
			continue
		}
		e := err
		if pn.noted {
			e = nil
			w := -1
			if pn.answered {
				w = weight(nil)
			}
			for _, n := range pn.notes {
				if n = conv(n); weight(n) > w {
					e, w = n, weight(n)
				}
			}
		}
		pn.b.record(e, now, pn.tk)
	}
}

// unwound hands back, as breaker.unwound does, the tickets of a call that
// ended without record (a panic).
func (p *pass) unwound(recorded *bool) {
	for _, pn := range p.nodes {
		if !pn.refused {
			pn.b.unwound(pn.tk, recorded)
		}
	}
}

// weight ranks the outcome err of one part of a call on its node, for
// pass.record: 2 a failure of Redis, 1 an answer of Redis (a success, an
// error about a key's value, a refusal while its slot migrates), 0 an
// end that says nothing of Redis by itself (the store closed, the
// caller's context ended: the breaker tells whether its deadline counts).
func weight(err error) int {
	switch {
	case err == nil || keyError(err) || errors.Is(err, algorithms.ErrTryAgain):
		return 1
	case errors.Is(err, algorithms.ErrClosed) || err == context.Canceled || err == context.DeadlineExceeded:
		return 0
	}
	return 2
}
