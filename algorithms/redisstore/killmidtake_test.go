package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// killShapes are the Takes TestRedisKilledMidTake sends: one check, two
// checks of one key, three checks of three keys (with costs), over six
// kinds; every limit (a bucket's capacity) 5 an hour, so that the Takes
// after the restart run every key out.
func killShapes() [][]algorithms.Check {
	hour := func(k algorithms.Kind) algorithms.Spec {
		s := algorithms.Spec{Algorithm: k, Limit: 5, Window: time.Hour}
		switch k {
		case algorithms.SlidingBuckets:
			s.Buckets = 4
		case algorithms.LeakyQueue:
			s.MaxDelay = time.Hour
		}
		return s
	}
	return [][]algorithms.Check{
		{{Spec: hour(algorithms.FixedWindow), Key: "one"}},
		{{Spec: hour(algorithms.TokenBucket), Key: "one"}},
		{{Spec: hour(algorithms.SlidingLog), Key: "two"}, {Spec: hour(algorithms.SlidingWindow), Key: "two"}},
		{{Spec: hour(algorithms.LeakyBucket), Key: "a", Cost: 2}, {Spec: hour(algorithms.SlidingBuckets), Key: "b"}, {Spec: hour(algorithms.LeakyQueue), Key: "c"}},
	}
}

// TestRedisKilledMidTake: Redis is killed (SIGKILL) while Takes are in
// flight, then started again, empty, on the same port, while goroutines
// keep taking (the shapes of killShapes, each call under a context
// deadline of its own). The kill comes while the server holds a Take of
// every goroutine (writes paused: each sent, none answered). Then:
//
//   - nothing panics, and every call, the ones in flight at the kill
//     included, returns a decision or an error within its deadline and
//     killReturnSlack (measured per call);
//   - with WithCircuitBreaker, the failures open the circuit (calls
//     refused with ErrCircuitOpen), and the probe let through once the
//     cooldown has passed on the injected clock closes it again;
//   - after the restart the store decides again, without being made
//     again (the library is loaded anew on the empty server);
//   - the server keeps nothing on disk (redistest runs it without
//     persistence, as a cache would be run), so it comes back empty: every
//     key starts over, which is expected. What must hold is that, counted
//     from the restart, no key admits past its limit: the units of the
//     Takes admitted after the kill (which only the new server can have
//     decided) never exceed any limit, though Takes abandoned at their
//     deadline may still be retried onto the new server by go-redis and
//     consume there unreported (so the bound is at most, not exactly);
//   - no goroutine outlives Close.
//
// Both with a client that bounds its I/O by the context
// (ContextTimeoutEnabled) and without (the store then abandons the call
// at the deadline, and Close waits for it).
func TestRedisKilledMidTake(t *testing.T) {
	for _, withBreaker := range []bool{false, true} {
		if withBreaker && testing.Short() {
			t.Log("-short: the breaker cases left out (each kills and restarts a redis-server); run without -short")
			continue
		}
		for _, ctxTimeouts := range []bool{false, true} {
			name := "no_breaker"
			if withBreaker {
				name = "breaker"
			}
			t.Run(clientCaseName(name, ctxTimeouts), func(t *testing.T) {
				killMidTake(t, withBreaker, ctxTimeouts)
			})
		}
	}
}

const (
	// killCallTimeout is each call's context deadline.
	killCallTimeout = 400 * time.Millisecond
	// killReturnSlack is how late after its deadline a call may return:
	// scheduling on a loaded machine under -race (TestTimeoutWithoutDeadline
	// saw 980ms for a 100ms timeout at a load of 19 on 2 CPUs). A call
	// that waited for go-redis's own timeouts (ReadTimeout 3s by default,
	// its retries) would take seconds.
	killReturnSlack = 900 * time.Millisecond
	killWorkers     = 8
	killCooldown    = 100 * time.Millisecond // on the injected clock
)

// killOutcome is what the workers of killMidTake saw.
type killOutcome struct {
	mu        sync.Mutex
	slowest   time.Duration
	slowErr   error
	panics    []any
	afterKill map[string]int64 // units admitted per key by calls begun after the kill
}

// killGate parks killMidTake's workers refused with ErrCircuitOpen until
// the test moves the breaker's clock on (a refusal costs no round trip:
// workers retrying at once would spin, starving the machine).
type killGate struct {
	mu     sync.Mutex
	ch     chan struct{}
	parked *atomic.Int64 // workers waiting on ch
}

func newKillGate() *killGate { return &killGate{ch: make(chan struct{}), parked: new(atomic.Int64)} }

// wait parks the caller until the gate opens or stop is closed.
func (g *killGate) wait(stop <-chan struct{}) {
	g.mu.Lock()
	ch, parked := g.ch, g.parked
	parked.Add(1)
	g.mu.Unlock()
	select {
	case <-ch:
	case <-stop:
	}
}

// open wakes the parked workers; those refused again park anew.
func (g *killGate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.ch)
	g.ch, g.parked = make(chan struct{}), new(atomic.Int64)
}

// allParked reports whether every worker waits at the gate.
func (g *killGate) allParked() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.parked.Load() == killWorkers
}

func killMidTake(t *testing.T, withBreaker, ctxTimeouts bool) {
	srv := redistest.New(t)
	defer verifyNone(t, goleak.IgnoreCurrent(), ignoreServerWaiter)
	client := redis.NewClient(&redis.Options{
		Addr: srv.Addr, ContextTimeoutEnabled: ctxTimeouts, PoolSize: 4 * killWorkers,
		// Bound what the store abandons at a deadline (no
		// ContextTimeoutEnabled), which Close waits for.
		DialTimeout: 200 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond,
	})
	defer client.Close()
	clk := algotest.NewClock(algotest.Base) // the start of an hour: every window below is one
	opts := []redisstore.Option{redisstore.WithPrefix(uniquePrefix(t)), redisstore.WithClock(clk)}
	if withBreaker {
		opts = append(opts, redisstore.WithCircuitBreaker(3, killCooldown))
	}
	s, err := redisstore.New(client, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	shapes := killShapes()
	for _, cs := range shapes { // loads the library; every key on the old server
		if _, err := s.Take(context.Background(), cs...); err != nil {
			t.Fatal(err)
		}
	}

	var (
		killed     atomic.Bool  // set just before the kill
		inFlight   atomic.Int64 // calls begun and not returned
		decided    atomic.Int64 // calls that returned decisions
		failed     atomic.Int64 // calls that returned errors
		circuit    atomic.Int64 // of which ErrCircuitOpen
		crossed    atomic.Int64 // calls begun before the kill that returned after it
		decidedNew atomic.Int64 // calls begun after the kill that returned decisions
	)
	out := &killOutcome{afterKill: map[string]int64{}}
	gate := newKillGate()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range killWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					out.mu.Lock()
					out.panics = append(out.panics, p)
					out.mu.Unlock()
				}
			}()
			for i := w; i < w+1_000_000; i++ { // bounded; stopped by the test much earlier
				select {
				case <-stop:
					return
				default:
				}
				cs := shapes[i%len(shapes)]
				before := killed.Load()
				ctx, cancel := context.WithTimeout(context.Background(), killCallTimeout)
				inFlight.Add(1)
				start := time.Now()
				d, err := s.Take(ctx, cs...)
				took := time.Since(start)
				inFlight.Add(-1)
				cancel()
				if !before && killed.Load() {
					crossed.Add(1)
				}
				out.mu.Lock()
				if took > out.slowest {
					out.slowest, out.slowErr = took, err
				}
				out.mu.Unlock()
				if err != nil {
					failed.Add(1)
					if errors.Is(err, redisstore.ErrCircuitOpen) {
						circuit.Add(1)
						gate.wait(stop)
					}
					continue
				}
				if len(d) != len(cs) {
					out.mu.Lock()
					out.panics = append(out.panics, fmt.Sprintf("Take of %d checks returned %d decisions", len(cs), len(d)))
					out.mu.Unlock()
					continue
				}
				decided.Add(1)
				if !before {
					continue
				}
				decidedNew.Add(1)
				if !d[0].Allowed {
					continue
				}
				out.mu.Lock()
				for j, c := range cs {
					if !d[j].Allowed {
						out.panics = append(out.panics, fmt.Sprintf("Take %+v decided %+v: not all or nothing", cs, d))
					}
					out.afterKill[killKey(c)] += max(c.Cost, 1)
				}
				out.mu.Unlock()
			}
		}()
	}
	stopped := false
	halt := func() {
		if !stopped {
			stopped = true
			close(stop)
			wg.Wait()
		}
	}
	defer halt()
	waitFor := func(cond func() bool, what string) {
		t.Helper()
		if !hangguard.Poll(10*time.Second, time.Millisecond, cond) {
			halt()
			t.Fatalf("timed out waiting for %s (decided %d, failed %d, %d of them ErrCircuitOpen)", what, decided.Load(), failed.Load(), circuit.Load())
		}
	}

	waitFor(func() bool { return decided.Load() >= 4*killWorkers }, "the first decisions")
	// Every worker's Take held by the server: sent, not answered.
	pauseWrites(t, srv, 20000)
	waitFor(func() bool { return inFlight.Load() == killWorkers }, "every worker to be in a Take")
	waitBlocked(t, srv, killWorkers)
	killed.Store(true)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	waitFor(func() bool { return crossed.Load() >= killWorkers }, "the Takes in flight at the kill to return")
	if withBreaker {
		// Their failures open the circuit, which refuses every worker.
		waitFor(gate.allParked, "the circuit to open")
	} else {
		f0 := failed.Load()
		waitFor(func() bool { return failed.Load() >= f0+killWorkers }, "failures while Redis is down")
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// With the breaker, each time every worker is refused, the cooldown
	// passes on its clock (still in the hour every window counts), and
	// the next call probes. A probe can fail for up to a second after the
	// restart: go-redis, after as many failed dials as its pool size, fails
	// every dial at once with the last error until its own background
	// dial, once a second, succeeds; the circuit then opens again.
	waitFor(func() bool {
		if withBreaker && decidedNew.Load() == 0 && gate.allParked() {
			clk.Advance(killCooldown)
			gate.open()
		}
		return decidedNew.Load() >= 20*int64(len(shapes))
	}, "the service to resume after the restart")
	halt()
	_ = s.Close()
	_ = client.Close()

	out.mu.Lock()
	defer out.mu.Unlock()
	for _, p := range out.panics {
		t.Errorf("worker: %v", p)
	}
	t.Logf("decided %d (%d after the restart), failed %d (%d ErrCircuitOpen); the clock moved %v; slowest call %v (%v)",
		decided.Load(), decidedNew.Load(), failed.Load(), circuit.Load(), clk.Now().Sub(algotest.Base), out.slowest, out.slowErr)
	if out.slowest > killCallTimeout+killReturnSlack {
		t.Errorf("a call returned after %v (%v), want within its %v deadline and %v", out.slowest, out.slowErr, killCallTimeout, killReturnSlack)
	}
	if withBreaker && circuit.Load() == 0 {
		t.Error("no call was refused with ErrCircuitOpen")
	}
	for _, cs := range shapes {
		for _, c := range cs {
			if got := out.afterKill[killKey(c)]; got > c.Spec.Limit {
				t.Errorf("%s admitted %d units after the restart, past its limit %d", killKey(c), got, c.Spec.Limit)
			}
		}
	}
	if len(out.afterKill) == 0 {
		t.Error("no Take admitted after the restart")
	}
}

// killKey names a check's state: its key under its Spec.
func killKey(c algorithms.Check) string { return fmt.Sprintf("%s/%s", c.Key, c.Spec.Algorithm) }
