package client

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// stepClock is a Clock whose Sleep moves it on by d at once (for tests
// with one goroutine asleep in it), which records the sleeps, and which
// runs the function armed in next, once, as Now is next read, before it
// answers.
type stepClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
	next   atomic.Pointer[func()]
}

func (c *stepClock) Now() time.Time {
	if f := c.next.Swap(nil); f != nil {
		(*f)()
	}
	return c.peek()
}

// peek reads the time without running the armed function.
func (c *stepClock) peek() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return ctx.Err()
}

func (c *stepClock) slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.sleeps)
}

// A request that waited in its key's line lets the line go when it is
// sent: once no request waits, no request counts as in a line (the next
// one whose turn is now needs none), and the lines of the keys no request
// uses are swept as the map grows. Two requests to each of 200 hosts, the
// second waiting its turn in its line, leave no request counted in a line
// and at most 64 lines. Kills line.go:269's deleted release (every line was
// kept, and counted in use, for ever).
func TestLinesReleasedAfterUse(t *testing.T) {
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	tr, err := New(next, WithClock(&stepClock{now: time.Unix(1_700_000_000, 0)}), WithRate(1, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		for range 2 {
			req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://host-%d.example/", i), nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
	}
	if n := tr.lines.in.Load(); n != 0 {
		t.Errorf("%d requests counted in a line after all were sent, want 0", n)
	}
	tr.lines.mu.Lock()
	defer tr.lines.mu.Unlock()
	if n := len(tr.lines.m); n > 64 {
		t.Errorf("%d lines kept, want at most 64", n)
	}
	for key, l := range tr.lines.m {
		if l.refs != 0 {
			t.Errorf("line %s: %d users after all requests were sent, want 0", key, l.refs)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
