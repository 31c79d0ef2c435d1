package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestDenyCacheClockSetBack: a denial cached at an instant says nothing of
// an earlier one. With an injected clock stepped back (algorithms, "Time
// that goes back"), a bucket is further from full at the earlier instant
// (a larger deficit), so a check the cached Take passed may now be denied
// too, and every wait is longer. x (token_bucket, 2 a second) passes and y
// (fixed_window, 1 an hour) denies at T; a second before T, x is denied
// as well. The store must decide the Take as Redis (and the memory store)
// does, not from the entry learnt at T. Found by TestStoreDifferentialHTTP
// (a leaky_queue reported with its full capacity, and not named violated,
// after the clock went back 5 s).
func TestDenyCacheClockSetBack(t *testing.T) {
	s, clk, mem, hook := denyCacheBesideMemory(t)
	ctx := context.Background()
	x := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 2, Window: time.Second}, Key: "x"}
	y := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}, Key: "y"}
	both := func(what string) []algorithms.Decision {
		t.Helper()
		got, err := s.Take(ctx, x, y)
		if err != nil {
			t.Fatal(err)
		}
		want, err := mem.Take(ctx, x, y)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: check %d: redis %+v, memory %+v", what, i, got[i], want[i])
			}
		}
		return got
	}
	if d := both("the first Take"); !d[0].Allowed || !d[1].Allowed {
		t.Fatalf("the first Take = %+v, want admitted", d)
	}
	if d := both("the second Take, cached"); d[0].Allowed != true || d[1].Allowed {
		t.Fatalf("the second Take = %+v, want x passed and y denied", d)
	}
	clk.t = clk.t.Add(-time.Second)
	hook.reset()
	if d := both("a second before"); d[0].Allowed || d[1].Allowed {
		t.Fatalf("a second before = %+v, want both denied", d)
	}
	if cmds, _ := hook.snapshot(); len(cmds) != 1 {
		t.Fatalf("the Take a second before sent %v, want one call (the cache knows nothing of an earlier instant)", cmds)
	}
}

// TestDenyCacheClockBackAndForth: the clock steps back, then forward again
// past the instant the first denial was learnt, in steps, to beyond the
// waits: every Take is decided as the memory store decides it, the cache
// answering or not. x (token_bucket, 2 a second) and y (fixed_window, 1 a
// minute) with costs that make x deny at some instants and pass at others.
func TestDenyCacheClockBackAndForth(t *testing.T) {
	s, clk, mem, hook := denyCacheBesideMemory(t)
	ctx := context.Background()
	x := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 2, Window: time.Second}, Key: "x"}
	y := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Minute}, Key: "y"}
	var cached []string // the Takes the cache answered
	t0 := clk.t
	steps := []time.Duration{0, 0, 0, -time.Second, -time.Second, 0, 500 * time.Millisecond, -2 * time.Second,
		250 * time.Millisecond, time.Second, -500 * time.Millisecond, 2 * time.Second, 30 * time.Second, 10 * time.Second,
		-50 * time.Second, 59 * time.Second, 61 * time.Second, 61 * time.Second, 50 * time.Second, 62 * time.Second}
	for i, at := range steps {
		clk.t = t0.Add(at)
		for _, checks := range [][]algorithms.Check{{x, y}, {y}, {x}} {
			hook.reset()
			got, err := s.Take(ctx, checks...)
			if err != nil {
				t.Fatal(err)
			}
			if cmds, _ := hook.snapshot(); len(cmds) == 0 {
				cached = append(cached, fmt.Sprintf("step %d %d checks", i, len(checks)))
			}
			want, err := mem.Take(ctx, checks...)
			if err != nil {
				t.Fatal(err)
			}
			for j := range want {
				if got[j] != want[j] {
					t.Fatalf("step %d (%+v), Take of %d checks: check %d: redis %+v, memory %+v", i, at, len(checks), j, got[j], want[j])
				}
			}
		}
	}
	t.Logf("answered by the cache: %v", cached)
	if len(cached) < 5 {
		t.Fatalf("the cache answered %v; want at least 5 of the Takes (else the test tests nothing of it)", cached)
	}
}

// denyCacheBesideMemory returns a store with a deny cache on a counted
// client, its manual clock, a memory store on that clock (closed at the
// end of the test) and the client's hook.
func denyCacheBesideMemory(t *testing.T) (*redisstore.Store, *manualClock, *algorithms.MemoryStore, *countHook) {
	t.Helper()
	client, hook := countedClient(t)
	s, clk := denyCacheStore(t, client)
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	return s, clk, mem, hook
}
