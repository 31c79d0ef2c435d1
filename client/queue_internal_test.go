package client

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// The gate serves its tickets in arrival order whatever leaves meanwhile:
// random traces enter tickets for two keys, have random ones leave (the
// first, the last, any in between: a request whose context ended) and
// serve the first (it is ready, it leaves). After each step the first
// ticket of each key is the first still there in arrival order and is
// ready, told so (its wait returns at once, even with its context ended),
// and no other is ready. At the end no key and no ticket is left at the
// gate.
func TestGateOrderWithLeaves(t *testing.T) {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for seed := range uint64(50) {
		rnd := rand.New(rand.NewPCG(seed, 1))
		var g gate
		model := map[string][]*ticket{} // the tickets there, in arrival order
		keys := []string{"a", "b"}
		check := func(step int) {
			t.Helper()
			for _, k := range keys {
				q := model[k]
				x := g.m[k].head
				for i := range q {
					if x != q[i] {
						t.Fatalf("seed %d step %d: key %s ticket %d of %d out of its place by arrival", seed, step, k, i, len(q))
					}
					x = x.next
				}
				for i, tk := range q {
					if tk.ready != (i == 0) {
						t.Fatalf("seed %d step %d: key %s ticket %d of %d ready = %v", seed, step, k, i, len(q), tk.ready)
					}
				}
				if len(q) > 0 {
					if ready, err := q[0].wait(ended); !ready || err != nil {
						t.Fatalf("seed %d step %d: key %s first ticket's wait = %v, %v; want ready", seed, step, k, ready, err)
					}
				}
				if g.busy(k) != (len(q) > 0) {
					t.Fatalf("seed %d step %d: key %s busy = %v with %d tickets", seed, step, k, g.busy(k), len(q))
				}
			}
		}
		for step := range 400 {
			k := keys[rnd.IntN(len(keys))]
			q := model[k]
			switch r := rnd.IntN(10); {
			case r < 5 || len(q) == 0:
				// Most arrive last; some came before (a retry, a request
				// the probe's answer let go): in their place by arrival,
				// ahead of the first too, which then waits.
				seq := uint64(10 * step)
				if rnd.IntN(4) == 0 {
					seq = rnd.Uint64N(seq + 1)
				}
				i := len(q)
				for i > 0 && q[i-1].seq > seq {
					i--
				}
				model[k] = slices.Insert(q, i, g.enter(k, seq))
			case r < 8:
				i := rnd.IntN(len(q))
				q[i].leave()
				q[i].leave() // a second leave does nothing
				model[k] = append(q[:i:i], q[i+1:]...)
			default:
				q[0].leave()
				model[k] = q[1:]
			}
			check(step)
		}
		for _, k := range keys {
			for _, tk := range model[k] {
				tk.leave()
			}
		}
		if len(g.m) != 0 || g.out.Load() != 0 {
			t.Fatalf("seed %d: %d keys, %d tickets left at the gate", seed, len(g.m), g.out.Load())
		}
	}
}

// Many requests at the gate at once, a random third of them giving up
// (their contexts end before or while they wait): every one returns (no
// wakeup is lost), those served are served in arrival order, each whose
// context did not end is served, and none is left at the gate.
func TestGateConcurrentLeaves(t *testing.T) {
	const n = 600
	rnd := rand.New(rand.NewPCG(7, 7))
	var g gate
	var mu sync.Mutex
	var served []int
	tickets := make([]*ticket, n)
	cancels := make([]context.CancelFunc, n)
	ctxs := make([]context.Context, n)
	for i := range n {
		tickets[i] = g.enter("k", uint64(i))
		ctxs[i], cancels[i] = context.WithCancel(context.Background())
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			tk := tickets[i]
			ready, err := tk.wait(ctxs[i])
			if ready && err == nil {
				mu.Lock()
				served = append(served, i)
				mu.Unlock()
			}
			tk.leave()
		})
	}
	gone := map[int]bool{}
	for _, i := range rnd.Perm(n)[:n/3] {
		gone[i] = true
		cancels[i]()
	}
	// Only a lost wakeup makes this wait end unfinished.
	hangguard.Run(t, time.Minute, "a wakeup was lost: the requests at the gate did not all return", wg.Wait)
	for i := 1; i < len(served); i++ {
		if served[i] <= served[i-1] {
			t.Fatalf("served %d after %d: out of arrival order", served[i], served[i-1])
		}
	}
	got := map[int]bool{}
	for _, i := range served {
		got[i] = true
	}
	for i := range n {
		if !gone[i] && !got[i] {
			t.Errorf("ticket %d, its context live, was never served", i)
		}
		cancels[i]()
	}
	if len(g.m) != 0 || g.out.Load() != 0 {
		t.Fatalf("%d keys, %d tickets left at the gate", len(g.m), g.out.Load())
	}
}

// The requests waiting for a probe's answer keep their order by arrival
// whatever leaves meanwhile, and whenever they come to wait: random traces
// have requests wait for the answer (most arrived after those waiting, some
// before, released by an earlier answer), leave (a context ended), or take
// the role of a probe that ended without an answer (abort: the first
// waiting takes it, woken once); an answer that renews the cut hands the
// role to the first waiting and wakes all. None is woken twice or left
// behind, and none is skipped.
func TestProbeWaitersOrderWithLeaves(t *testing.T) {
	for seed := range uint64(50) {
		rnd := rand.New(rand.NewPCG(seed, 2))
		var cs cuts
		hs := holds{m: map[string]time.Time{}}
		cs.extend("k", now.Add(time.Hour), now, now, &hs)
		c, role, _ := cs.enter("k", now, &hs)
		if role != roleProbe {
			t.Fatalf("role %d, want the probe", role)
		}
		woken := map[*probeWaiter]int{}
		var model []*probeWaiter // waiting, in arrival order
		var seq uint64
		newWaiter := func() *probeWaiter {
			seq += 10
			w := &probeWaiter{seq: seq}
			if rnd.IntN(4) == 0 {
				w.seq = rnd.Uint64N(seq) // arrived before some waiting
			}
			w.wake = func() { woken[w]++ }
			return w
		}
		for step := range 400 {
			switch r := rnd.IntN(10); {
			case r < 5 || len(model) == 0:
				w := newWaiter()
				if !cs.await("k", c, w) {
					t.Fatalf("seed %d step %d: await refused with the probe out", seed, step)
				}
				i := slices.IndexFunc(model, func(x *probeWaiter) bool { return x.seq > w.seq })
				if i < 0 {
					i = len(model)
				}
				model = slices.Insert(model, i, w)
			case r < 8:
				i := rnd.IntN(len(model))
				w := model[i]
				if cs.leave(c, w) {
					t.Fatalf("seed %d step %d: a waiter leaving was handed the role", seed, step)
				}
				model = append(model[:i:i], model[i+1:]...)
			default:
				// The probe ends without an answer: the first waiting
				// takes the role, and goes as the probe.
				cs.abort(c)
				w := model[0]
				if !w.probe || woken[w] != 1 {
					t.Fatalf("seed %d step %d: the first waiting: probe %v, woken %d times; want the role, woken once", seed, step, w.probe, woken[w])
				}
				if !cs.leave(c, w) {
					t.Fatalf("seed %d step %d: leave did not report the role handed on", seed, step)
				}
				model = model[1:]
			}
			for _, w := range model {
				if woken[w] != 0 || w.probe {
					t.Fatalf("seed %d step %d: a request still waiting was woken or handed the role", seed, step)
				}
			}
		}
		for x, i := c.waiters.head, 0; x != nil || i < len(model); x, i = x.next, i+1 {
			if x == nil || i >= len(model) || x != model[i] {
				t.Fatalf("seed %d: waiter %d is not the %d-th to arrive of those waiting", seed, i, i)
			}
		}
		cs.answer("k", c, true) // renewed: the cut stands, the first waiting is the next probe, all go on
		for i, w := range model {
			if woken[w] != 1 || w.probe != (i == 0) {
				t.Fatalf("seed %d: the answer woke waiter %d %d times (probe %v), want once (the probe if first)", seed, i, woken[w], w.probe)
			}
			if cs.leave(c, w) != (i == 0) {
				t.Fatalf("seed %d: waiter %d woken by the answer reports the role %v", seed, i, i != 0)
			}
		}
		if len(model) > 0 {
			cs.abort(c) // the next probe gives its role up
		}
		cs.abort(c) // nobody waiting: the next request goes as the probe
		if c.out {
			t.Fatalf("seed %d: a probe out with nobody to take the role", seed)
		}
		for _, n := range woken {
			if n > 1 {
				t.Fatalf("seed %d: a waiter woken %d times", seed, n)
			}
		}
	}
}

// A request woken by a probe's answer that leaves after the next probe's
// waiters have joined the cut (the answer renewed it, and handed the role
// to the first waiting) takes none of them with it: it is no longer among
// the waiters, and the next one to wait is still handed the role when that
// probe ends without an answer.
func TestProbeWaiterLeavesAfterAnswer(t *testing.T) {
	var cs cuts
	hs := holds{m: map[string]time.Time{}}
	cs.extend("k", now.Add(time.Hour), now, now, &hs)
	woken := map[*probeWaiter]int{}
	var seq uint64
	newWaiter := func() *probeWaiter {
		seq++
		w := &probeWaiter{seq: seq}
		w.wake = func() { woken[w]++ }
		return w
	}
	c, role, _ := cs.enter("k", now, &hs)
	if role != roleProbe {
		t.Fatalf("role %d, want the probe", role)
	}
	next, first := newWaiter(), newWaiter()
	if !cs.await("k", c, next) || !cs.await("k", c, first) {
		t.Fatal("await refused with the probe out")
	}
	cs.answer("k", c, true) // renewed: the cut stands, next has the role, first is woken
	if !cs.leave(c, next) {
		t.Fatal("the first waiting was not handed the role by the answer")
	}
	if c2, role, _ := cs.enter("k", now, &hs); c2 != c || role != roleWait {
		t.Fatalf("after the answer: cut %p role %d, want the same cut %p and a wait for the probe handed the role", c2, role, c)
	}
	second := newWaiter()
	if !cs.await("k", c, second) {
		t.Fatal("await refused with the next probe out")
	}
	if cs.leave(c, first) {
		t.Fatal("the request woken by the answer reports the role")
	}
	cs.abort(c) // the next probe ends without an answer
	if !second.probe || woken[second] != 1 || woken[first] != 1 {
		t.Errorf("second: probe %v, woken %d times; first woken %d times; want the role handed to second, each woken once",
			second.probe, woken[second], woken[first])
	}
}
