package client

import (
	"context"
	"sync"
	"sync/atomic"
)

// A gate keeps in arrival order the requests of a key that wait for a
// server's hold to pass before they take their turns in the queue (without
// pacing, while the key is cut, their roles there: see [Transport.probe]):
// they all wake at the instant the hold ends and would otherwise take
// their turns in whatever order the scheduler runs them. A request that meets a
// hold, or finds requests of its key still at the gate, takes a ticket; it
// takes its turn once every request ahead of it has taken theirs or left.
// It is safe for concurrent use.
type gate struct {
	mu sync.Mutex
	m  map[string]tickets // a key's, in arrival order; the first may go on
	// out counts the tickets out, in every key: while it is 0 a request
	// need not look at the gate.
	out atomic.Int64
}

// tickets is the queue of a key's tickets (see queue): the gate keeps no
// key without tickets.
type tickets = queue[ticket, *ticket]

// A ticket is a request's place at the gate. Its fields but sig are
// guarded by g.mu.
type ticket struct {
	g             *gate
	key           string
	links[ticket]               // its place among its key's tickets
	seq           uint64        // when its request arrived
	ready         bool          // every ticket ahead has left
	news          bool          // a hold was set since its holder last looked
	left          bool          // the ticket has left the gate
	sig           chan struct{} // tells its holder of ready or news (buffered: none is lost)
}

// busy reports whether requests of key hold tickets.
func (g *gate) busy(key string) bool {
	if g.out.Load() == 0 {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.m[key]
	return ok
}

// enter gives the caller, whose request arrived seq-th (see
// [Transport.RoundTrip]), a ticket in its place by arrival among those of
// key already out: behind those of the requests that arrived before it,
// ahead of those that arrived after it. It is most often last, found in
// constant time; a request that comes to wait again (a retry, or one a
// probe's answer let go) may go ahead of requests that arrived after it,
// even of the first, which then waits for it (the first is most often
// asleep on the hold still; one already on its way may take its turn
// first).
func (g *gate) enter(key string, seq uint64) *ticket {
	tk := &ticket{g: g, key: key, seq: seq, sig: make(chan struct{}, 1)}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[string]tickets{}
	}
	q := g.m[key]
	x := q.tail
	for x != nil && x.seq > seq {
		x = x.prev
	}
	if h := q.head; x == nil && h != nil {
		// The first waits for the caller now: told, it looks at the
		// hold again (the caller may be a retry asleep on one set since
		// the first looked), rather than wait off the clock.
		h.ready, h.news = false, true
		h.signal()
	}
	q.insertAfter(tk, x)
	tk.ready = q.head == tk
	g.m[key] = q
	g.out.Add(1)
	return tk
}

// wait returns true once every ticket ahead of tk has left, false when a
// hold was set for the key meanwhile (see [gate.held]: the caller looks at
// it before it waits on), or ctx.Err() when ctx ends first. It does not
// sleep on the clock, as no time need pass: the request ahead is at work,
// taking its turn (perhaps waiting for the store), since one that would
// wait for a new hold tells the others to wait for it on the clock too.
func (tk *ticket) wait(ctx context.Context) (bool, error) {
	g := tk.g
	for {
		g.mu.Lock()
		ready, news := tk.ready, tk.news
		tk.news = false
		g.mu.Unlock()
		switch {
		case ready:
			return true, nil
		case news:
			return false, nil
		}
		select {
		case <-tk.sig:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// signal tells tk's holder that it is ready or has news.
func (tk *ticket) signal() {
	select {
	case tk.sig <- struct{}{}:
	default:
	}
}

// held tells the requests of key waiting at the gate that a hold was set
// or extended: they wait for it on the clock, counting it against their
// maximum wait.
func (g *gate) held(key string) {
	if g.out.Load() == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for tk := g.m[key].head; tk != nil; tk = tk.next {
		if !tk.ready {
			tk.news = true
			tk.signal()
		}
	}
}

// place returns tk's links among its key's tickets.
func (tk *ticket) place() *links[ticket] { return &tk.links }

// leave gives up tk's place, to the ticket behind it when tk was first, in
// constant time wherever tk stands. It does nothing on a nil ticket or one
// that has left.
func (tk *ticket) leave() {
	if tk == nil {
		return
	}
	g := tk.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if tk.left {
		return
	}
	tk.left = true
	g.out.Add(-1)
	q := g.m[tk.key]
	first := tk.prev == nil
	q.remove(tk)
	if q.head == nil {
		delete(g.m, tk.key)
		return
	}
	g.m[tk.key] = q
	if first {
		q.head.ready = true
		q.head.signal()
	}
}
