package client_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/ratekeeper/ratekeeper/client"
)

// startRedis starts a redis-server for the test (see redistest.New) and
// returns its address.
func startRedis(t *testing.T) string {
	t.Helper()
	return redistest.New(t).Addr
}

// newFleet returns n Transports, each with its own connection to the Redis
// at addr and its own redisstore (as n processes would have), all built
// with opts and pacing through the keys under prefix.
func newFleet(t *testing.T, addr, prefix string, clock *fakeClock, n int, opts ...client.Option) []*client.Transport {
	t.Helper()
	var fleet []*client.Transport
	for range n {
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { rdb.Close() })
		store, err := redisstore.New(rdb, redisstore.WithPrefix(prefix), redisstore.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		_, tr := newClient(t, clock, append([]client.Option{client.WithStore(store)}, opts...)...)
		fleet = append(fleet, tr)
	}
	return fleet
}

// The Done-when test through Redis: 50 callers spread over 5 instances of a
// fleet, all pacing at 5 per second through one redis-server. The stub sees
// at most 5 in any second of its own receive instants, one every 200ms, and
// every caller is served.
func TestFleetFiftyCallersThroughRedis(t *testing.T) {
	addr := startRedis(t)
	clock := newFakeClock()
	srv := newStub(t, clock, nil)
	fleet := newFleet(t, addr, "fleet50", clock, 5, client.WithRate(5, time.Second), client.WithMaxWait(10*time.Second))
	const n = 50
	clock.drive(t, n, func(i int) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		resp, err := fleet[i%len(fleet)].RoundTrip(req)
		if err != nil {
			t.Errorf("caller %d: %v", i, err)
			return
		}
		resp.Body.Close()
	})
	at := srv.arrivals()
	if len(at) != n {
		t.Fatalf("stub received %d requests, want %d", len(at), n)
	}
	if got, from := maxInWindow(at, time.Second); got > 5 {
		t.Errorf("%d requests arrived within the second from %v: %v", got, from, at)
	}
	for i, a := range at {
		if want := time.Duration(i) * 200 * time.Millisecond; a != want {
			t.Fatalf("arrivals %v, want one every 200ms", at)
		}
	}
}

// Through Redis too, a request whose turn is beyond the maximum wait fails
// at once with a *WaitError giving the wait it would have had, and takes
// nothing from the fleet's queue.
func TestFleetMaxWaitThroughRedis(t *testing.T) {
	addr := startRedis(t)
	clock := newFakeClock()
	srv := newStub(t, clock, nil)
	fleet := newFleet(t, addr, "fleetmax", clock, 2, client.WithRate(5, time.Second), client.WithMaxWait(time.Second))
	var mu sync.Mutex
	var waits []time.Duration
	clock.drive(t, 8, func(i int) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		resp, err := fleet[i%2].RoundTrip(req)
		var we *client.WaitError
		switch {
		case err == nil:
			resp.Body.Close()
		case errors.As(err, &we) && !we.Held:
			mu.Lock()
			waits = append(waits, we.Wait)
			mu.Unlock()
		default:
			t.Errorf("caller %d: %v", i, err)
		}
	})
	if want := []time.Duration{1200 * time.Millisecond, 1200 * time.Millisecond}; !slices.Equal(waits, want) {
		t.Errorf("refused with waits %v, want %v", waits, want)
	}
	// Six sent, 0 to 1s; the refusals took nothing: the next turn is 1.2s.
	clock.drive(t, 1, func(int) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		resp, err := fleet[1].RoundTrip(req)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
	})
	want := []time.Duration{0, 200 * time.Millisecond, 400 * time.Millisecond, 600 * time.Millisecond,
		800 * time.Millisecond, time.Second, 1200 * time.Millisecond}
	if at := srv.arrivals(); !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
}

// A fleet of instances, each with its own Transport and its own connection
// to one Redis, paces together: their requests to one host leave from one
// queue, one every 250ms at 4 per second, as if from a single process.
func TestFleetPacesThroughRedis(t *testing.T) {
	addr := startRedis(t)
	clock := newFakeClock()
	srv := newStub(t, clock, nil)
	const instances = 3
	var fleet []*client.Transport
	for range instances {
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { rdb.Close() })
		store, err := redisstore.New(rdb, redisstore.WithPrefix("client-test"), redisstore.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		_, tr := newClient(t, clock, client.WithRate(4, time.Second), client.WithStore(store))
		fleet = append(fleet, tr)
	}
	clock.drive(t, 12, func(i int) {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL, nil)
		resp, err := fleet[i%instances].RoundTrip(req)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
	})
	at := srv.arrivals()
	if len(at) != 12 {
		t.Fatalf("arrivals %v", at)
	}
	for i, a := range at {
		if want := time.Duration(i) * 250 * time.Millisecond; a != want {
			t.Fatalf("arrivals %v, want one every 250ms", at)
		}
	}
}

// Through Redis too, a Retry-After that one instance of a fleet received
// keeps the order of that instance's requests without breaking the fleet's
// pace: the scenario of TestSharedStoreRetryAfterKeepsRate, each instance
// with its own connection and redisstore.
func TestFleetRetryAfterKeepsRateThroughRedis(t *testing.T) {
	sharedRetryAfter(t, redisFleet(t, startRedis(t), "fleetra"))
}

// Through Redis, the fleet cases of leave and settle: a turn given up
// within a hold moves nobody up (TestLeaveWithinHoldKeepsTurnsBehind), and
// a turn too late for the last request goes back (TestSpareTurnGoesBack).
func TestFleetGiveBackThroughRedis(t *testing.T) {
	addr := startRedis(t)
	leaveWithinHold(t, redisFleet(t, addr, "leavehold"))
	spareTurn(t, redisFleet(t, addr, "spare"))
}

// redisFleet builds two clients over Transports sharing the Redis at addr,
// each with its own connection, under prefix.
func redisFleet(t *testing.T, addr, prefix string) fleetOf2 {
	return func(clock *fakeClock, opts ...client.Option) (x, y *http.Client) {
		f := newFleet(t, addr, prefix, clock, 2, opts...)
		return &http.Client{Transport: f[0]}, &http.Client{Transport: f[1]}
	}
}
