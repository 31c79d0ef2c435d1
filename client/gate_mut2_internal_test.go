package client

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"
)

// A hold set as a request's turn at the gate comes (a response read by
// another request just then) holds it to its last nanosecond, like any
// other. B meets no hold but finds a request ahead of it at the gate, and
// waits there; as the one ahead leaves, making B ready, a hold of 1ns is
// set (B, ready, is not told: it looks at the holds itself). B sleeps that
// 1ns and is sent at 1ns. With pace.go's remaining(...) <= 0 as <= 1 it
// took the 1ns as passed and was sent at 0, inside the hold.
func TestHoldSetAsGateTurnComes(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	c := &stepClock{now: start}
	var sent []time.Duration
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent = append(sent, c.peek().Sub(start))
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	tr, err := New(next, WithClock(c), WithRate(5, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	const key = "api.example"
	ahead := tr.gate.enter(key, 0)
	looked := make(chan struct{})
	onLook := func() { close(looked) }
	enter := func() { c.next.Store(&onLook) } // B looks again once in the gate
	gateEnterHook.Store(&enter)
	defer gateEnterHook.Store(nil)
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, "http://"+key+"/", nil)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	noHang(t, "B taking its place at the gate", func() { <-looked })
	hold := func() {
		now := c.peek()
		tr.holds.extend(key, now.Add(time.Nanosecond), now)
		tr.gate.held(key)
	}
	c.next.Store(&hold) // B reads the clock next as its turn comes
	ahead.leave()
	noHang(t, "B", func() { err = <-done })
	if err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{time.Nanosecond}; !slices.Equal(sent, want) {
		t.Errorf("sent at %v, want %v: when the hold ends", sent, want)
	}
	if got, want := c.slept(), []time.Duration{time.Nanosecond}; !slices.Equal(got, want) {
		t.Errorf("slept %v, want %v", got, want)
	}
}

// A ticket's holder is told of a hold once: having been told, it waits at
// the gate again (it sleeps, not looks again at once) until it is ready, has
// news or its context ends. B behind A is told of a hold, and its next wait
// ends only with its context. With gate.go's tk.news = false deleted, every
// wait after the news returned it again at once, and a request waiting at
// the gate behind one sleeping on the hold spun, reading the clock and the
// holds over and over, until the one ahead left.
func TestTicketNewsToldOnce(t *testing.T) {
	var g gate
	a := g.enter("k", 1)
	defer a.leave()
	b := g.enter("k", 2)
	defer b.leave()
	g.held("k")
	var ready bool
	var err error
	noHang(t, "B's wait after the news", func() { ready, err = b.wait(context.Background()) })
	if ready || err != nil {
		t.Fatalf("B's wait after the news = %v, %v; want false, nil", ready, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ready, err := b.wait(ctx); ready || !errors.Is(err, context.Canceled) {
		t.Errorf("B's next wait = %v, %v; want false, context.Canceled (no news since)", ready, err)
	}
	if ready, err := a.wait(ctx); !ready || err != nil {
		t.Errorf("A's wait = %v, %v; want true, nil (first, not told)", ready, err)
	}
}
