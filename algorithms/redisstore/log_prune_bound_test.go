package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
)

// TestSlidingLogPruneWorkIsBounded: a sliding_log may hold up to Limit
// (10^9) events, and a Take's script blocks Redis while it runs. Pruning
// read every event leaving the window in chunks of 32 items (an LRANGE
// each) and made a table of each: on a log of 10^6 events one Take
// pruning half of them blocked Redis 4.3 s (Redis answers BUSY to every
// other client past lua-time-limit, 5 s). Now a Take that finds the
// newest event gone from the window too drops the whole list without
// reading it (the total is every unit but those it appends), and one
// that prunes part of it searches for the first event left and sums the
// units of those before it, read in chunks of 1024 items. On logs of N events written as the store writes them (the
// same events the memory store is given), each Take, Peek and the Takes
// after it are decided as the memory store decides them, and the
// LRANGEs of the pruning Take are counted (a deterministic measure of
// its work, unlike its time on a loaded machine).
func TestSlidingLogPruneWorkIsBounded(t *testing.T) {
	const n = 60_000 // events, one per millisecond, of cost 1, 2 or 3
	srv := redistest.New(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: time.Minute})
	defer client.Close()
	t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	spec := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: algorithms.MaxLimit, Window: time.Hour}
	for _, tc := range []struct {
		name   string
		at     time.Duration // the pruning Take's instant after t0
		cost   int64         // its cost
		pruned int           // the events it prunes
		max    int64         // the most LRANGEs it may send
	}{
		// Every event leaves: none is read but the newest (one LRANGE).
		{"whole", time.Hour + n*time.Millisecond, 1, n, 1},
		// Half leave: the search for the first event left (two probes
		// per halving, 32 items each), then about n/2/1024 chunks.
		{"half", time.Hour + n/2*time.Millisecond, 1, n / 2, n/2/1024 + 2*16 + 4},
		// Half leave and a Take denied: waits read the events they need.
		{"half-denied", time.Hour + n/2*time.Millisecond + time.Millisecond/2, algorithms.MaxLimit - n/4, n/2 + 1, n/2/1024 + 2*16 + 4 + n/32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &manualClock{t: t0}
			mem, rs, prefix := logTwins(t, client, clk)
			c := algorithms.Check{Spec: spec, Key: "k"}
			warmUp(t, client, c)
			fillLog(t, client, mem, clk, c, redisKeys(prefix, c), n, func(i int) int64 { return int64(1 + i%3) })

			clk.t = t0.Add(tc.at)
			big := c
			big.Cost = tc.cost
			peekSame(t, mem, rs, big, fmt.Sprintf("Peek at t0+%v", tc.at))
			resetStats(t, client)
			takeSame(t, mem, rs, big, fmt.Sprintf("Take of cost %d at t0+%v (pruning %d events)", tc.cost, tc.at, tc.pruned))
			calls := commandCalls(t, client) // of the Redis store's Take only
			t.Logf("pruning %d of %d events: %d LRANGEs, Redis busy %s", tc.pruned, n, calls["lrange"], scriptTime(t, client))
			if calls["lrange"] > tc.max {
				t.Errorf("a Take pruning %d of %d events sent %d LRANGEs, want at most %d (commands %v)", tc.pruned, n, calls["lrange"], tc.max, calls)
			}
			// The state left decides as the memory store's: Takes at
			// instants that prune more, then none.
			for _, step := range []time.Duration{0, time.Millisecond, 10 * time.Second, time.Hour} {
				clk.t = clk.t.Add(step)
				for _, cost := range []int64{1, 1000, algorithms.MaxLimit / 2} {
					c := c
					c.Cost = cost
					takeSame(t, mem, rs, c, fmt.Sprintf("then Take of cost %d at t0+%v", cost, clk.t.Sub(t0)))
				}
			}
		})
	}
}

// fillLog writes n events of c's key, one a millisecond from the instant
// clk reads, the i-th of cost(i) units, into the memory store (each
// admitted) and into Redis as the store writes them (the list keys[1],
// its total at keys[0], both expiring in 3 hours), and returns their
// total. clk reads the last event's instant after it.
func fillLog(t *testing.T, client *redis.Client, mem *algorithms.MemoryStore, clk *manualClock, c algorithms.Check, keys []string, n int, cost func(i int) int64) int64 {
	t.Helper()
	ctx := context.Background()
	t0 := clk.t
	var items []any
	var total int64
	flush := func() {
		if err := client.RPush(ctx, keys[1], items...).Err(); err != nil {
			t.Fatal(err)
		}
		items = items[:0]
	}
	for i := range n {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		clk.t = at
		c := c
		c.Cost = cost(i)
		if d, err := mem.Take(ctx, c); err != nil || !d[0].Allowed {
			t.Fatalf("memory store, event %d: %+v, %v", i, d, err)
		}
		items = append(items, fmt.Sprintf("%d %d %d", at.Unix(), at.Nanosecond(), c.Cost))
		total += c.Cost
		if len(items) == 4096 {
			flush()
		}
	}
	flush()
	if err := client.Set(ctx, keys[0], strconv.FormatInt(total, 10), 3*time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if err := client.Expire(ctx, keys[1], 3*time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	return total
}

// peekSame fails t, naming what, unless rs and mem peek c alike.
func peekSame(t *testing.T, mem *algorithms.MemoryStore, rs *redisstore.Store, c algorithms.Check, what string) {
	t.Helper()
	var pm, pr [1]algorithms.Decision
	if err := mem.Peek(context.Background(), pm[:], []algorithms.Check{c}); err != nil {
		t.Fatal(err)
	}
	if err := rs.Peek(context.Background(), pr[:], []algorithms.Check{c}); err != nil {
		t.Fatal(err)
	}
	if pr != pm {
		t.Fatalf("%s = %+v, want %+v (memory store)", what, pr[0], pm[0])
	}
}

// takeSame takes c from rs and then mem and fails t, naming what, unless
// both decide alike; it returns the decision.
func takeSame(t *testing.T, mem *algorithms.MemoryStore, rs *redisstore.Store, c algorithms.Check, what string) algorithms.Decision {
	t.Helper()
	got, err := rs.Take(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	want, err := mem.Take(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != want[0] {
		t.Fatalf("%s = %+v, want %+v (memory store)", what, got[0], want[0])
	}
	return got[0]
}

// logTwins returns a memory store and a store on client without a
// timeout (a long log's Take may take seconds), under a prefix of its own
// that it returns too, both reading clk and closed when t ends.
func logTwins(t *testing.T, client *redis.Client, clk *manualClock) (*algorithms.MemoryStore, *redisstore.Store, string) {
	t.Helper()
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	prefix := uniquePrefix(t)
	rs, err := redisstore.New(client, redisstore.WithClock(clk), redisstore.WithPrefix(prefix), redisstore.WithTimeout(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rs.Close() })
	return mem, rs, prefix
}

// resetStats resets Redis's command statistics (commandCalls, scriptTime).
func resetStats(t *testing.T, client *redis.Client) {
	t.Helper()
	if err := client.ConfigResetStat(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
}

// scriptTime returns the time Redis spent in scripts and functions since
// its statistics were last reset, from INFO commandstats.
func scriptTime(t *testing.T, c *redis.Client) time.Duration {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	var usec int64
	for line := range strings.Lines(info) {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !(strings.Contains(name, "fcall") || strings.Contains(name, "eval")) {
			continue
		}
		for f := range strings.SplitSeq(rest, ",") {
			if v, ok := strings.CutPrefix(f, "usec="); ok {
				u, _ := strconv.ParseInt(v, 10, 64)
				usec += u
			}
		}
	}
	return time.Duration(usec) * time.Microsecond
}
