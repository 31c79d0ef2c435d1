package redisstore

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"
)

// openBreaker opens b (threshold 1) at now with one failed call.
func openBreaker(t *testing.T, b *breaker, now time.Time) {
	t.Helper()
	tk := mustAllow(t, b, now)
	b.record(io.EOF, now, tk)
	if !b.refuses(now) {
		t.Fatal("the breaker did not open on a failure at threshold 1")
	}
}

// TestNodeBreakersBounded: a Cluster store keeps at most maxNodeBreakers
// node breakers, however many node addresses its calls meet (nodes gone
// in failovers, a cluster rebuilt). At the bound it drops the closed ones
// with no failure counted, which a new breaker stands for exactly, and
// keeps the open ones; when every one is open, it drops the one whose
// cooldown ended longest ago (a node no call's slot maps to any more).
func TestNodeBreakersBounded(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	nb := &nodeBreakers{threshold: 1, cooldown: time.Minute}
	open := map[string]*breaker{}
	for i := range 10 {
		a := fmt.Sprintf("open-%d", i)
		open[a] = nb.of(a)
		openBreaker(t, open[a], t0.Add(time.Duration(i)*time.Second))
	}
	for i := range 3 * maxNodeBreakers {
		nb.of(fmt.Sprintf("idle-%d", i))
		if n := len(*nb.byAddr.Load()); n > maxNodeBreakers {
			t.Fatalf("%d node breakers after %d addresses; want at most %d", n, i+11, maxNodeBreakers)
		}
	}
	for a, b := range open {
		if got := nb.of(a); got != b {
			t.Fatalf("the open breaker of %s was dropped for closed ones", a)
		}
	}
	// Every breaker open: the one whose cooldown ended first goes.
	for a, b := range *nb.byAddr.Load() {
		if open[a] == nil {
			openBreaker(t, b, t0.Add(time.Hour))
		}
	}
	for i := 0; len(*nb.byAddr.Load()) < maxNodeBreakers; i++ {
		openBreaker(t, nb.of(fmt.Sprintf("more-%d", i)), t0.Add(time.Hour))
	}
	nb.of("new")
	m := *nb.byAddr.Load()
	if len(m) != maxNodeBreakers {
		t.Fatalf("%d node breakers; want %d", len(m), maxNodeBreakers)
	}
	if _, ok := m["open-0"]; ok {
		t.Fatal("open-0, whose cooldown ended first, was kept at the bound")
	}
	for i := 1; i < 10; i++ {
		if _, ok := m[fmt.Sprintf("open-%d", i)]; !ok {
			t.Fatalf("open-%d dropped; want only open-0 (its cooldown ended first)", i)
		}
	}
}

// TestPassRecordsEachNodesWorst: a call of several slots records, on each
// node, the worst of its parts there (a failure of Redis over an answer,
// an answer over an end that says nothing), and on a node none of whose
// parts was noted, the call's error.
func TestPassRecordsEachNodesWorst(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	nodes := make([]*breaker, 4)
	p := &pass{}
	for i := range nodes {
		nodes[i] = &breaker{threshold: 1, cooldown: time.Minute}
		p.nodes = append(p.nodes, passNode{b: nodes[i], tk: mustAllow(t, nodes[i], now)})
		p.slots = append(p.slots, slotNode{uint16(2 * i), i}, slotNode{uint16(2*i + 1), i})
	}
	keyErr := &keyStateError{redisError("WRONGTYPE Operation against a key holding the wrong kind of value")}
	p.note(0, nil) // node 0: an answer and a failure
	p.note(1, io.EOF)
	p.note(2, keyErr) // node 1: an answer about a key, and a caller's cancel
	p.note(3, context.Canceled)
	p.note(4, context.Canceled) // node 2: a caller's cancel only
	// node 3: nothing noted: the call's error.
	p.record(io.ErrUnexpectedEOF, func(e error) error { return e }, now)
	p.note(6, nil) // after record: dropped
	for i, want := range []bool{true, false, false, true} {
		if got := nodes[i].refuses(now); got != want {
			t.Errorf("node %d open: %v; want %v", i, got, want)
		}
	}
}
