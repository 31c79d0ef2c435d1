package redisstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// manualClock is a settable clock for the differential tests.
type manualClock struct{ t time.Time }

func (c *manualClock) Now() time.Time { return c.t }

// randomSpec returns a valid Spec of kind k with sizes that exercise both
// small counts and the bounds (Limit up to 10^9, Window up to 24 h).
func randomSpec(r *rand.Rand, k algorithms.Kind) algorithms.Spec {
	windows := []time.Duration{time.Millisecond, 7 * time.Millisecond, 100 * time.Millisecond, time.Second,
		1500 * time.Millisecond, 3 * time.Second, 10 * time.Second, time.Minute, 86399999999, 24 * time.Hour, 1000003}
	for {
		s := algorithms.Spec{Algorithm: k}
		switch r.IntN(6) {
		case 0:
			s.Limit = 1_000_000_000 - r.Int64N(3)
		case 1:
			s.Limit = 1 + r.Int64N(100000)
		default:
			s.Limit = 1 + r.Int64N(6)
		}
		s.Window = windows[r.IntN(len(windows))]
		switch k {
		case algorithms.TokenBucket, algorithms.LeakyBucket:
			if r.IntN(2) == 0 {
				s.Burst = 1 + r.Int64N(2*s.Limit)
			}
		case algorithms.SlidingBuckets:
			for _, b := range []int{1, 2, 3, 5, 10, 60, 3600, 7} {
				if r.IntN(3) == 0 && int64(s.Window)%int64(b) == 0 {
					s.Buckets = b
					break
				}
			}
			if s.Buckets == 0 {
				s.Buckets = 1
			}
		case algorithms.LeakyQueue:
			switch r.IntN(3) {
			case 0:
			case 1:
				s.MaxDelay = time.Duration(r.Int64N(int64(s.Window) + 1))
			default:
				s.MaxDelay = time.Duration(r.Int64N(int64(24 * time.Hour)))
			}
		}
		if s.Validate() == nil {
			return s
		}
	}
}

// randomCost returns a cost in [0, capacity], mostly small.
func randomCost(r *rand.Rand, s algorithms.Spec) int64 {
	c := s.Capacity()
	switch r.IntN(8) {
	case 0:
		return c
	case 1:
		return 1 + r.Int64N(c)
	case 2:
		return 0
	}
	return 1 + r.Int64N(min(c, 3))
}

// step advances the clock by a random amount chosen to hit boundaries:
// nothing, 1 ns, fractions and multiples of the window, sometimes backwards.
func step(r *rand.Rand, clk *manualClock, w time.Duration) {
	var d time.Duration
	switch r.IntN(12) {
	case 0:
		d = 0
	case 1:
		d = 1
	case 2:
		d = w - 1
	case 3:
		d = w
	case 4:
		d = w / time.Duration(2+r.IntN(10))
	case 5:
		d = time.Duration(r.Int64N(int64(2*w) + 1))
	case 6:
		d = -time.Duration(r.Int64N(int64(w) + 1)) // a clock going back
	case 7:
		d = time.Duration(r.Int64N(int64(time.Hour)))
	case 8:
		// to a window boundary, or 1 ns around it
		ns := clk.t.UnixNano()
		m := ns % int64(w)
		if m < 0 {
			m += int64(w)
		}
		d = time.Duration(int64(w)-m) + time.Duration(r.IntN(3)-1)
	default:
		d = time.Duration(r.Int64N(int64(w)/4 + 1))
	}
	clk.t = clk.t.Add(d)
}

// TestMatchesMemoryStore replays random traces on the in-memory store and on
// Redis with the same clock and requires every Decision field to match:
// even seeds through the function library (FCALL), odd ones through the
// script fallback (EVALSHA).
func TestMatchesMemoryStore(t *testing.T) {
	client := newClient(t)
	scriptClient := noFunctionsClient(t)
	starts := []time.Time{
		time.Date(2026, 11, 30, 6, 0, 0, 123456789, time.UTC),
		time.Unix(0, 0),
		time.Unix(-86400*365*12, 999_999_999), // before 1970
		time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(1<<33, 5),
	}
	for seed := range seedCount(40, 8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(seed), 77))
			clk := &manualClock{t: starts[seed%len(starts)]}
			c := client
			if seed%2 == 1 {
				c = scriptClient
			}
			mem, rs := pairedStores(t, c, clk)
			// A few specs (two kinds) and keys per trace, so repeated keys,
			// stacked checks and duplicates within one Take all occur.
			var specs []algorithms.Spec
			for range 3 {
				specs = append(specs, randomSpec(r, algorithms.Kinds[r.IntN(len(algorithms.Kinds))]))
			}
			specs = append(specs, randomSpec(r, algorithms.Kinds[seed%len(algorithms.Kinds)]))
			keys := []string{"a", "b", "", "{x}:y"}
			var history []string
			for i := range 150 {
				step(r, clk, specs[r.IntN(len(specs))].Window)
				takeAlike(t, mem, rs, clk, &history, i, randomChecks(r, specs, keys, 4))
			}
		})
	}
}

// replayTraces runs run as one subtest per seed (seedCount(24, 6)) for
// the give-back and refund differential tests: each with its own random
// source (seed, stream), a clock at one of a few far-apart instants, and
// a memory store and a Redis store both on that clock. Even seeds go
// through the function library, odd ones through the script fallback,
// and every fourth on the cluster.
func replayTraces(t *testing.T, stream uint64, run func(t *testing.T, r *rand.Rand, clk *manualClock, mem *algorithms.MemoryStore, rs *redisstore.Store)) {
	client := newClient(t)
	scriptClient := noFunctionsClient(t)
	cluster := sharedCluster(t)
	starts := []time.Time{
		time.Date(2026, 11, 30, 6, 0, 0, 123456789, time.UTC),
		time.Unix(0, 0),
		time.Unix(-86400*365*12, 999_999_999), // before 1970
		time.Unix(1<<33, 5),
	}
	for seed := range seedCount(24, 6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			clk := &manualClock{t: starts[seed%len(starts)]}
			var c redis.UniversalClient = client
			switch {
			case seed%4 == 3:
				c = cluster
			case seed%2 == 1:
				c = scriptClient
			}
			mem, rs := pairedStores(t, c, clk)
			run(t, rand.New(rand.NewPCG(uint64(seed), stream)), clk, mem, rs)
		})
	}
}

// seedCount returns how many random traces a differential test replays:
// n, or REDISSTORE_SEEDS when set, or short under -short.
func seedCount(n, short int) int {
	if v, err := strconv.Atoi(os.Getenv("REDISSTORE_SEEDS")); err == nil {
		n = v
	}
	if testing.Short() {
		n = short
	}
	return n
}

// pairedStores returns a memory store and a store on client, under a
// prefix of its own, that both read clk.
func pairedStores(t *testing.T, client redis.UniversalClient, clk *manualClock) (*algorithms.MemoryStore, *redisstore.Store) {
	t.Helper()
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	return mem, clockedStore(t, client, clk)
}

// clockedStore returns a store on client, under a prefix of its own, that
// reads clk, with opts.
func clockedStore(t testing.TB, client redis.UniversalClient, clk *manualClock, opts ...redisstore.Option) *redisstore.Store {
	t.Helper()
	s, err := redisstore.New(client, append([]redisstore.Option{redisstore.WithClock(clk), redisstore.WithPrefix(uniquePrefix(t))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// randomChecks returns the checks of a random Take: one to three (one
// alone a further time in oneIn), of specs and keys, a check sometimes of
// the previous one's spec.
func randomChecks(r *rand.Rand, specs []algorithms.Spec, keys []string, oneIn int) []algorithms.Check {
	n := 1 + r.IntN(3)
	if r.IntN(oneIn) == 0 {
		n = 1
	}
	checks := make([]algorithms.Check, n)
	for j := range checks {
		s := specs[r.IntN(len(specs))]
		if j > 0 && r.IntN(3) == 0 {
			s = checks[j-1].Spec
		}
		checks[j] = algorithms.Check{Spec: s, Key: keys[r.IntN(len(keys))], Cost: randomCost(r, s)}
	}
	return algotest.FitRepeats(checks) // a key within what it ever admits at once
}

// takeAlike takes checks from mem and rs, as step i of a trace at clk's
// instant, adds the step to history and fails t, showing the trace, unless
// both stores decide alike. It returns the memory store's outcome.
func takeAlike(t *testing.T, mem *algorithms.MemoryStore, rs *redisstore.Store, clk *manualClock, history *[]string, i int, checks []algorithms.Check) ([]algorithms.Decision, error) {
	t.Helper()
	ctx := context.Background()
	want, werr := mem.Take(ctx, checks...)
	got, gerr := rs.Take(ctx, checks...)
	*history = append(*history, fmt.Sprintf("step %d at %d: %+v", i, clk.t.UnixNano(), checks))
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%s\nerrors differ: memory %v, redis %v", join(*history), werr, gerr)
	}
	for j := range want {
		if got[j] != want[j] {
			t.Fatalf("%s\ncheck %d (%s): redis %+v\n           memory %+v", join(*history), j, checks[j].Spec, got[j], want[j])
		}
	}
	return want, werr
}

func join(h []string) string {
	if len(h) > 400 {
		h = h[len(h)-400:]
	}
	out := ""
	for _, s := range h {
		out += s + "\n"
	}
	return out
}

func newRand(seed int) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), 99)) }

// smallSpec returns a spec of kind k with a small limit, so traces deny often.
func smallSpec(k algorithms.Kind) algorithms.Spec {
	s := algorithms.Spec{Algorithm: k, Limit: 3, Window: time.Second}
	switch k {
	case algorithms.SlidingBuckets:
		s.Buckets = 4
	case algorithms.LeakyQueue:
		s.MaxDelay = 500 * time.Millisecond
	}
	return s
}

func makeTemp() (string, error) { return os.MkdirTemp("", "redisstore-cluster-") }
