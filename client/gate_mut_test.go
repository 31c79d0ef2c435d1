package client_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// A request waiting at the gate that was told of a hold, and has waited
// for it, waits for the one ahead of it as before: blocked, its context
// heard. A holds the first place at the gate through a store call that
// answers at 4s; B waits behind it from 1.5s; a hold from 2s to 3s tells B,
// which sleeps through it and goes back to waiting for A; cancelled then,
// at 3s, B returns at once. With the news not cleared once read (gate.go's
// tk.news = false deleted, or = true) B's wait returned "news" again and
// again: B spun, deaf to its context, until A left.
func TestGateNewsReadOnce(t *testing.T) {
	g := newSlowGate(t, 3*time.Second, 10*time.Second)
	defer g.fc.Advance(time.Hour) // after a failure, lets every request finish
	entered, woke := make(chan struct{}), make(chan struct{})
	var once sync.Once
	defer client.BeforeGateEnter(func() { once.Do(func() { g.clock.next.Store(&entered) }) })()
	doneA := g.first(t)
	g.fc.Advance(500 * time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	doneB := make(chan error, 1)
	go func() { doneB <- roundTrip(ctx, g.tr, "http://api.example/", "B") }()
	guard(t, "B waits at the gate from 1.5s", func() { <-entered })
	g.fc.Advance(500 * time.Millisecond)
	g.tr.Observe("api.example", http.Header{"Ratelimit": {`"p";r=0;t=1`}}, g.fc.Now())
	guard(t, "B sleeps through the hold", func() { g.fc.waitSleepers(2) })
	g.clock.next.Store(&woke)
	g.fc.Advance(time.Second)
	guard(t, "B looks again at 3s", func() { <-woke })
	cancel()
	var errB error
	guard(t, "B returns at once when cancelled (it spins, deaf to its context, while the news stays)", func() { errB = <-doneB })
	if !errors.Is(errB, context.Canceled) {
		t.Errorf("B: %v, want context.Canceled", errB)
	}
	g.fc.Advance(time.Second)
	var errA error
	guard(t, "A returns", func() { errA = <-doneA })
	if callers, at := g.order(); errA != nil || !slices.Equal(callers, []string{"A"}) || !slices.Equal(at, []time.Duration{4 * time.Second}) {
		t.Errorf("A: %v; sent %v at %v, want A alone at 4s", errA, callers, at)
	}
}
