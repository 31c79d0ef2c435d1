package client

import (
	"fmt"
	"net/http"
	"time"
)

// CheckLines has every line checked each time its holder lets it go, until
// the function it returns is called: its links agree both ways, its turns
// increase along it and the requests without a turn come last. A break is
// reported to fail, once per line state.
func CheckLines(fail func(string)) (stop func()) {
	check := func(l *line) {
		var prev *turn
		for x := l.head; x != nil; prev, x = x, x.next {
			switch {
			case x.prev != prev:
				fail("a turn's prev is not the turn before it")
				return
			case prev == nil:
			case prev.at.IsZero() && !x.at.IsZero():
				fail(fmt.Sprintf("a turn at %v behind a request without one", x.at))
				return
			case !x.at.IsZero() && !x.at.After(prev.at):
				fail(fmt.Sprintf("a turn at %v behind one at %v", x.at, prev.at))
				return
			}
		}
		if l.tail != prev {
			fail("the line's tail is not its last turn")
		}
	}
	lineCheck.Store(&check)
	return func() { lineCheck.Store(nil) }
}

// BeforeGateEnter has f run each time a request that met no hold is about
// to enter a gate that others of its key are at, until the function it
// returns is called.
func BeforeGateEnter(f func()) (stop func()) {
	gateEnterHook.Store(&f)
	return func() { gateEnterHook.Store(nil) }
}

// BeforeProbeEnter has f run each time a request of a key whose hold was
// cut short is about to take its role there (go, go as the probe, or wait
// for its answer), until the function it returns is called.
func BeforeProbeEnter(f func()) (stop func()) {
	probeEnterHook.Store(&f)
	return func() { probeEnterHook.Store(nil) }
}

// ProbesOut returns the keys whose hold was cut short with a probe out or
// requests waiting for its answer; none once every request has returned.
func (t *Transport) ProbesOut() []string {
	t.cuts.mu.Lock()
	defer t.cuts.mu.Unlock()
	var keys []string
	for k, c := range t.cuts.m {
		if c.out || c.waiters.head != nil {
			keys = append(keys, k)
		}
	}
	return keys
}

// Cuts returns the number of keys recorded as cut short, and the count
// the fast path reads (they must agree).
func (t *Transport) Cuts() (keys int, n int64) {
	t.cuts.mu.Lock()
	defer t.cuts.mu.Unlock()
	return len(t.cuts.m), t.cuts.n.Load()
}

// AfterTurnTaken has f run each time a request that took a later turn from
// the store without its line (none of the Transport's requests was in a
// line) is about to join the line, until the function it returns is called.
func AfterTurnTaken(f func()) (stop func()) {
	turnTakenHook.Store(&f)
	return func() { turnTakenHook.Store(nil) }
}

// Observe has t read h, a response's header for key at now, as RoundTrip
// does that of a success: a Retry-After or a RateLimit field with no quota
// left holds key (only a Retry-After, the requests already queued too).
func (t *Transport) Observe(key string, h http.Header, now time.Time) {
	ra, hasRA := parseRetryAfter(h, now)
	t.observe(key, h, now, ra, hasRA, false)
}

// AtGate returns the number of requests holding a place at a gate (waiting
// for a hold to pass, or for those ahead of them to take their turns).
func (t *Transport) AtGate() int64 { return t.gate.out.Load() }

// GateChurn has n requests of one key take their places at a gate, then
// give them up, from the last to arrive to the first (each before those
// ahead of it: a request whose context ended).
func GateChurn(n int) {
	var g gate
	tks := make([]*ticket, n)
	for i := range tks {
		tks[i] = g.enter("k", uint64(i))
	}
	for i := n - 1; i >= 0; i-- {
		tks[i].leave()
	}
}

// MaxIdleCuts is maxIdleCuts, for tests.
const MaxIdleCuts = maxIdleCuts
