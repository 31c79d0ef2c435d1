package client

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// A line is the queue of the requests of one key waiting in this Transport
// for their turns, in the order they arrived. Every turn is a departure the
// store gave out, so the line never sends faster than the store's queue,
// but the line decides which of its requests takes which: when a
// Retry-After makes some turns unusable, the requests keep their order
// (see [Transport.settle]).
type line struct {
	// sem is the line's lock, a token in a channel so that a caller can
	// stop waiting for it when its context ends (see [line.lock]). It
	// guards the turns and is held across the store calls that take turns
	// for the line, so that they are taken in its order.
	sem chan struct{}
	queue[turn, *turn]
	refs int // goroutines using the line; guarded by lines.mu
	// gmu guards gone: the turns whose callers left while another held
	// the line, for the holder to give on before it lets the line go (see
	// [Transport.unlock]).
	gmu  sync.Mutex
	gone []goneTurn
}

// A goneTurn is a turn whose caller left, with the caller's context. A
// turn taken from the store before its caller got the line joins it first
// (see [Transport.queue]).
type goneTurn struct {
	ctx  context.Context
	tn   *turn
	join bool
}

// lock takes the line, or returns false when ctx ends first (a line free
// is taken even then).
func (l *line) lock(ctx context.Context) bool {
	select {
	case l.sem <- struct{}{}:
		return true
	default:
	}
	select {
	case l.sem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// unlock lets key's line l go, once it has given on the turns whose callers
// left meanwhile.
func (t *Transport) unlock(key string, l *line) {
	for {
		l.gmu.Lock()
		gone := l.gone
		l.gone = nil
		if len(gone) == 0 {
			if check := lineCheck.Load(); check != nil {
				(*check)(l)
			}
			<-l.sem
			l.gmu.Unlock()
			return
		}
		l.gmu.Unlock()
		for _, g := range gone {
			t.drop(key, l, g)
		}
	}
}

// lineCheck, set by tests, looks at each line as its holder lets it go.
var lineCheck atomic.Pointer[func(*line)]

// abandon takes g's turn out of l for its caller, whose context ended
// while it waited for the line: at once when the line is free, or else by
// the holder, before it lets the line go. The caller returns at once
// either way.
func (t *Transport) abandon(key string, l *line, g goneTurn) {
	l.gmu.Lock()
	select {
	case l.sem <- struct{}{}:
		l.gmu.Unlock()
		t.drop(key, l, g)
		t.unlock(key, l)
	default:
		l.gone = append(l.gone, g)
		l.gmu.Unlock()
	}
}

// drop takes g's turn, whose caller has gone, out of l unless it is out
// already (failed), joining it first when it is not in l yet. The line
// must be held.
func (t *Transport) drop(key string, l *line, g goneTurn) {
	tn := g.tn
	tn.wake = nil
	if g.join {
		l.insert(tn)
	}
	if tn.err == nil {
		t.leave(g.ctx, key, l, tn)
	}
}

// A turn is a request waiting in a line.
type turn struct {
	links[turn]
	at     time.Time          // its departure; zero while it has none
	queued time.Time          // when it joined the line: its wait is bounded from then
	seq    uint64             // when its request arrived (see [Transport.RoundTrip])
	err    error              // why it must fail, once it has left the line
	wake   context.CancelFunc // ends its current sleep; nil when it is not asleep
}

// insert puts tn, which has a turn, in its place: after the turns no later
// than its own, before any request without a turn.
func (l *line) insert(tn *turn) {
	x := l.tail
	for x != nil && (x.at.IsZero() || x.at.After(tn.at)) {
		x = x.prev
	}
	l.insertAfter(tn, x)
}

// place returns tn's links in its line.
func (tn *turn) place() *links[turn] { return &tn.links }

// fail takes tn out of l and wakes its request, which returns err.
func (l *line) fail(tn *turn, err error) {
	tn.err = err
	l.remove(tn)
	if tn.wake != nil {
		tn.wake()
	}
}

// lines keeps a line per key. Lines nobody uses are swept each time the map
// doubles, so it stays as small as the set of keys in use.
type lines struct {
	mu      sync.Mutex
	m       map[string]*line
	sweepAt int
	// in counts the requests between acquire and release, in every line:
	// while it is 0 no request waits, and a turn that comes at once needs
	// no line (see [Transport.queue]).
	in atomic.Int64
}

// acquire returns key's line, for the caller to release when done with it.
func (ls *lines) acquire(key string) *line {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l := ls.m[key]
	if l == nil {
		if len(ls.m) >= ls.sweepAt {
			for k, x := range ls.m {
				if x.refs == 0 {
					delete(ls.m, k)
				}
			}
			ls.sweepAt = max(64, 2*len(ls.m))
		}
		l = &line{sem: make(chan struct{}, 1)}
		ls.m[key] = l
	}
	l.refs++
	ls.in.Add(1)
	return l
}

func (ls *lines) release(l *line) {
	ls.mu.Lock()
	l.refs--
	ls.in.Add(-1)
	ls.mu.Unlock()
}

// queue takes the request's turn in key's line and waits for it, and
// returns how long it waited.
//
// While no request of this Transport is in a line, the request asks the
// store for its turn without taking the line: the store orders it among
// its peers, and a turn that comes at once (the common case, the rate not
// reached) needs no line. A turn later on joins the line, in its place
// among the turns there (a request may have joined meanwhile).
//
// A request holding a ticket at the gate takes its turn in the line, and
// gives the ticket up once it has its place there: a turn taken without the
// line is on its way to it for a while, and the requests behind at the gate
// would pass it meanwhile (when one ahead leaves the line, its turn goes to
// the first of them there).
//
// A request that takes a new turn (again, see [Transport.wait]: its turn
// passed while it waited for a probe's answer or a hold) joins the line in
// its place by arrival, seq, ahead of the requests that arrived after it,
// and takes the first of their turns (see [Transport.reorder]).
func (t *Transport) queue(ctx context.Context, key string, seq uint64, again bool, tk *ticket, spent time.Duration) (time.Duration, error) {
	if tk != nil || again || t.lines.in.Load() != 0 {
		start := t.clock.Now()
		if err := t.queueLine(ctx, key, nil, tk, spent, seq, again); err != nil {
			return 0, err
		}
		return t.clock.Now().Sub(start), nil
	}
	// The clock is read only for a turn to come: a turn that comes at once
	// is no wait, and the wait for a later one runs from the store's
	// answer, as the turn's own bound does (see queueLine).
	delay, now, err := t.take(ctx, key)
	if err != nil || delay <= 0 {
		return 0, err
	}
	if hook := turnTakenHook.Load(); hook != nil {
		(*hook)()
	}
	if err := t.queueLine(ctx, key, &turn{at: now.Add(delay), queued: now.Add(-spent), seq: seq}, nil, spent, seq, false); err != nil {
		return 0, err
	}
	return t.clock.Now().Sub(now), nil
}

// turnTakenHook, set by tests, runs as a request that took a later turn
// from the store without its line is about to join the line.
var turnTakenHook atomic.Pointer[func()]

// take asks the store for key's next turn, and returns how long until it
// comes, from now, read after the store call (the delay runs from the
// store's now); 0 when it is now. A store that fails or denies the turn is
// the error the request fails with: [storeError], or a [*WaitError].
func (t *Transport) take(ctx context.Context, key string) (time.Duration, time.Time, error) {
	d, err := t.limiter.Allow(ctx, key)
	if err != nil {
		return 0, time.Time{}, storeError(ctx, err)
	}
	if !d.Allowed {
		// For a denied leaky_queue request ResetAfter is the wait it
		// would have had: until the queue drains to now.
		return 0, time.Time{}, &WaitError{Key: key, Wait: d.ResetAfter, MaxWait: t.maxWait}
	}
	if d.Delay <= 0 {
		return 0, time.Time{}, nil
	}
	return d.Delay, t.clock.Now(), nil
}

// queueLine waits in key's line: with tn, a turn already taken from the
// store, or else for a turn it takes in the line's order. It gives up tk
// once the request has its place in the line. spent is the time the
// request has waited for earlier turns (see [Transport.wait]): its turn
// counts as queued that long before it was taken, so that the maximum wait
// bounds all its turns together. seq is when the request arrived; again,
// that it joins the line in its place by that (see [Transport.queue]).
func (t *Transport) queueLine(ctx context.Context, key string, tn *turn, tk *ticket, spent time.Duration, seq uint64, again bool) error {
	l := t.lines.acquire(key)
	defer t.lines.release(l)
	if !l.lock(ctx) {
		if tn != nil {
			// The turn taken is given up like any other, by the line's
			// holder (see abandon): the requests behind it move up.
			t.abandon(key, l, goneTurn{ctx: ctx, tn: tn, join: true})
		}
		return ctx.Err()
	}
	if tn != nil {
		l.insert(tn)
	} else if again && l.tail != nil && l.tail.seq > seq {
		// Requests that arrived after this one are in the line: it goes
		// ahead of them, and takes the first of their turns.
		now := t.clock.Now()
		tn = &turn{queued: now.Add(-spent), seq: seq}
		x := l.tail
		for x != nil && x.seq > seq {
			x = x.prev
		}
		l.insertAfter(tn, x)
		t.reorder(ctx, key, l, now)
	} else if l.tail == nil || !l.tail.at.IsZero() {
		// Every request of the line has its turn: take the next one.
		delay, now, err := t.take(ctx, key)
		if err != nil || delay <= 0 {
			t.unlock(key, l)
			return err
		}
		tn = &turn{at: now.Add(delay), queued: now.Add(-spent), seq: seq}
		l.pushBack(tn)
	} else {
		// Requests that arrived earlier wait for a turn (a Retry-After
		// took theirs): they take theirs first.
		now := t.clock.Now()
		tn = &turn{queued: now.Add(-spent), seq: seq}
		l.pushBack(tn)
		t.settle(ctx, key, l, now)
	}
	tk.leave()
	for {
		if tn.err != nil {
			t.unlock(key, l)
			return tn.err
		}
		if err := ctx.Err(); err != nil {
			t.leave(ctx, key, l, tn)
			t.unlock(key, l)
			return err
		}
		now := t.clock.Now()
		hold := t.firm.remaining(key, now)
		var d time.Duration
		switch {
		case tn.at.IsZero():
			t.settle(ctx, key, l, now)
			if tn.err != nil || !tn.at.IsZero() || ctx.Err() != nil {
				continue
			}
			// No turn can be had before the hold has passed.
			d = t.firm.remaining(key, now)
		case tn.at.After(now) && (hold <= 0 || !tn.at.Before(now.Add(hold))):
			d = tn.at.Sub(now)
		case tn.at.After(now):
			// The turn is still to come, but within a Retry-After that
			// began after it was taken: it is lost already. The
			// requests get their turns after the hold now, and one for
			// which that is too late (its maximum wait, its deadline)
			// fails now, not at the turn it cannot use.
			t.settle(ctx, key, l, now)
			continue
		case hold > 0:
			// The turn has come during a Retry-After: the server asked for
			// nothing before the hold has passed, and this request would
			// only earn another refusal.
			t.settle(ctx, key, l, now)
			continue
		default:
			l.remove(tn)
			t.unlock(key, l)
			return nil
		}
		if d <= 0 {
			continue
		}
		if !tn.at.IsZero() && tn.at.Sub(tn.queued) > t.maxWait {
			// A new turn after earlier ones (see [Transport.wait]) that
			// comes later than the maximum wait allows them all: fail
			// now, and give the turn on. (A first turn is within it: the
			// store gives none later, and settle fails the requests whose
			// turns it pushes beyond.)
			wait := tn.at.Sub(tn.queued)
			t.leave(ctx, key, l, tn)
			t.unlock(key, l)
			return &WaitError{Key: key, Wait: wait, MaxWait: t.maxWait}
		}
		if pastDeadline(ctx, d) {
			// Its turn, or the hold before it, would come only after the
			// deadline: fail now, and give the turn on.
			held := tn.at.IsZero()
			t.leave(ctx, key, l, tn)
			t.unlock(key, l)
			return &WaitError{Key: key, Wait: now.Add(d).Sub(tn.queued), MaxWait: t.maxWait, Held: held, Deadline: true}
		}
		sctx, cancel := context.WithCancel(ctx)
		tn.wake = cancel
		t.unlock(key, l)
		_ = t.clock.Sleep(sctx, d) // ctx or tn.err tell why it ended early
		cancel()
		if !l.lock(ctx) {
			// The line is busy (a store call, perhaps slow): leave
			// without waiting for it.
			t.abandon(key, l, goneTurn{ctx: ctx, tn: tn})
			return ctx.Err()
		}
		tn.wake = nil
	}
}

// refundTimeout bounds giving a turn back to the store, which runs after
// the caller's context has ended.
const refundTimeout = time.Second

// leave takes tn, whose caller has gone, out of l. The requests behind it
// that have turns move up one each (woken, to sleep less), so the line
// keeps its pace; the last of those turns, which no request of this
// Transport needs now, goes back to the store, which takes it when no
// other request queued there behind it ([algorithms.Refunder]). A store
// that cannot take it keeps it, as before refunds: the next request then
// waits one turn more. A turn that lies within a Retry-After hold (or has
// gone by) moves nobody up: the request behind would trade a turn it can
// use for one it cannot, and its own might not come back from the store
// (in a fleet, another Transport's turn may follow it there). Such a turn
// goes back to the store only when no request behind has a turn. The line
// must be held.
func (t *Transport) leave(ctx context.Context, key string, l *line, tn *turn) {
	freed := tn.at
	now := t.clock.Now()
	if until := now.Add(t.firm.remaining(key, now)); freed.Before(until) {
		if tn.next != nil && !tn.next.at.IsZero() {
			freed = time.Time{} // the turns behind it stay the line's
		}
	} else {
		for x := tn.next; x != nil && !freed.IsZero() && !x.at.IsZero(); x = x.next {
			x.at, freed = freed, x.at
			if x.wake != nil {
				x.wake()
			}
		}
	}
	l.remove(tn)
	if !freed.IsZero() {
		t.giveBack(ctx, key, freed, now)
	}
}

// giveBack returns the turn at to the store, which takes it when it is
// still the last of its queue ([algorithms.Refunder]), within
// refundTimeout, even when ctx has ended.
func (t *Transport) giveBack(ctx context.Context, key string, at, now time.Time) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refundTimeout)
	defer cancel()
	_, _ = t.limiter.RefundN(rctx, key, 1, at.Sub(now))
}

// settle gives the requests of l their turns, in the order they arrived,
// at now. While a Retry-After holds key, the turns before its end are lost
// (the server asked for nothing then): the requests keep their order, the
// first taking the turns at or after the end, and the last, left without,
// take new turns from the store once those come after the hold (at once when
// the store's queue already reaches past it). A request whose turn would come
// later than the maximum wait after it queued fails at once with a
// [*WaitError]; the turn goes to the next. Turns only ever move later, so a
// request asleep until its old turn has nothing to miss. The line must be
// held.
func (t *Transport) settle(ctx context.Context, key string, l *line, now time.Time) {
	until := now.Add(t.firm.remaining(key, now))
	held := until.After(now)
	tooLate := func(tn *turn, at time.Time) bool { return at.Sub(tn.queued) > t.maxWait }
	late := func(tn *turn, at time.Time, hold bool) {
		l.fail(tn, &WaitError{Key: key, Wait: at.Sub(tn.queued), MaxWait: t.maxWait, Held: hold})
	}
	tn := l.head
	var last time.Time // the latest turn given out
	if held {
		var live []time.Time
		for x := l.head; x != nil; x = x.next {
			if !x.at.IsZero() && !x.at.Before(until) {
				live = append(live, x.at)
			}
		}
		for tn != nil && len(live) > 0 {
			next := tn.next
			if tooLate(tn, live[0]) {
				late(tn, live[0], false)
			} else {
				tn.at, last, live = live[0], live[0], live[1:]
			}
			tn = next
		}
		for x := tn; x != nil; x = x.next {
			x.at = time.Time{}
		}
	} else {
		for ; tn != nil && !tn.at.IsZero(); tn = tn.next {
			last = tn.at
		}
	}
	// tn and the requests behind it have no turn.
	var spare time.Time // a new turn too late for the request it was taken for
	for tn != nil {
		next := tn.next
		switch {
		case held && last.IsZero():
			// The store may give out turns within the hold: wait for it
			// to pass, unless that is too late.
			if tooLate(tn, until) {
				late(tn, until, true)
			}
			tn = next
			continue
		case spare.IsZero() && !last.IsZero() && tooLate(tn, last.Add(t.interval)):
			// The store's next turn comes an interval after the last at
			// the earliest: too late, without asking the store.
			late(tn, last.Add(t.interval), false)
			tn = next
			continue
		}
		if spare.IsZero() {
			d, err := t.limiter.Allow(ctx, key)
			switch {
			case err != nil && ctx.Err() != nil:
				// The caller taking the turns has gone: wake those still
				// without one to take theirs.
				for x := tn; x != nil; x = x.next {
					if x.wake != nil {
						x.wake()
					}
				}
				return
			case err != nil:
				l.fail(tn, storeError(ctx, err))
				tn = next
				continue
			case !d.Allowed:
				// ResetAfter is the wait it would have had from now.
				late(tn, now.Add(d.ResetAfter), false)
				tn = next
				continue
			}
			spare = t.clock.Now().Add(d.Delay)
		}
		if tooLate(tn, spare) {
			late(tn, spare, false)
		} else {
			tn.at, last, spare = spare, spare, time.Time{}
		}
		tn = next
	}
	if !spare.IsZero() {
		// Too late for the last request: nobody takes it.
		t.giveBack(ctx, key, spare, t.clock.Now())
	}
}

// reorder gives the turns of l's requests to them in the order they stand,
// once a request without a turn has joined l ahead of some that have one
// (see [Transport.queueLine]): the requests behind it each move back a
// turn, and the last, left without, takes a new turn from the store, as
// after a Retry-After (see [Transport.settle], which does this itself while
// a Retry-After holds key). A request whose turn would then come later than
// the maximum wait after it queued fails at once with a [*WaitError]; the
// turn goes to the next. Turns only ever move later, but for the request
// that joined, which is awake. The line must be held.
func (t *Transport) reorder(ctx context.Context, key string, l *line, now time.Time) {
	if t.firm.remaining(key, now) <= 0 {
		var ats []time.Time
		for x := l.head; x != nil; x = x.next {
			if !x.at.IsZero() {
				ats = append(ats, x.at)
			}
		}
		for x := l.head; x != nil; {
			next := x.next
			switch {
			case len(ats) == 0:
				x.at = time.Time{}
			case ats[0].Sub(x.queued) > t.maxWait:
				l.fail(x, &WaitError{Key: key, Wait: ats[0].Sub(x.queued), MaxWait: t.maxWait})
			default:
				x.at, ats = ats[0], ats[1:]
			}
			x = next
		}
	}
	t.settle(ctx, key, l, now)
}

// storeError is the error of a failed store call: the context's error when
// it ended, else the store's, wrapped.
func storeError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return fmt.Errorf("client: pacing store: %w", err)
}
