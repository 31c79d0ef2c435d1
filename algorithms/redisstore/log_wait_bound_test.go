package redisstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
)

// TestSlidingLogWaitWorkIsBounded: a denied sliding_log Take computes
// how long until its cost fits (RetryAfter) and until one more unit does
// (ResetAfter's next), by summing the units of the oldest events until
// enough have left. Each of the two walks read the events one at a time
// through logEvent (an LRANGE of 32 items and a table per event): on a
// full log of 10^6 events of cost 1 (Limit 10^6, Window 1h), a Take of
// cost 10^6 blocked Redis for seconds per call, and a client retrying it
// repeats that. Now one walk finds both waits, reading the units in
// chunks growing to 1024 items, and stops at the event where enough have
// left; a log whose total is its length (every event of one unit) is
// counted, not read. On full logs of N events written as the store writes them (the
// same events the memory store is given), Peek, the denied Take and the
// Takes after it are decided as the memory store decides them, and the
// LRANGEs of the denied Take are counted (a deterministic measure of its
// work, unlike its time on a loaded machine).
func TestSlidingLogWaitWorkIsBounded(t *testing.T) {
	const n = 60_000 // events, one per millisecond
	srv := redistest.New(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: time.Minute})
	defer client.Close()
	t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		costs int   // events cost 1 + i%costs
		frac  int64 // the denied Take's cost: the limit / frac, or 5 for 0
		max   int64 // the most LRANGEs it may send
	}{
		// All of the log must leave: every event's units are summed,
		// but for a log of one unit per event (its total is its
		// length), where only the newest event and the one found are
		// read.
		{"ones-all", 1, 1, 4},
		{"mixed-all", 3, 1, n/1024 + 16},
		// Half of it must leave.
		{"ones-half", 1, 2, 4},
		{"mixed-half", 3, 2, n/2/1024 + 16},
		// A few must leave: as few LRANGEs as before.
		{"mixed-few", 3, 0, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cost := func(i int) int64 { return int64(1 + i%tc.costs) }
			total := int64(0)
			for i := range n {
				total += cost(i)
			}
			spec := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: total, Window: time.Hour}
			clk := &manualClock{t: t0}
			mem, rs, prefix := logTwins(t, client, clk)
			c := algorithms.Check{Spec: spec, Key: "k"}
			warmUp(t, client, c)
			if got := fillLog(t, client, mem, clk, c, redisKeys(prefix, c), n, cost); got != total {
				t.Fatalf("the log holds %d units, want %d", got, total)
			}

			// None has left the window: the log is full.
			clk.t = t0.Add(n * time.Millisecond)
			big := c
			big.Cost = 5
			if tc.frac > 0 {
				big.Cost = total / tc.frac
			}
			peekSame(t, mem, rs, big, fmt.Sprintf("Peek of cost %d", big.Cost))
			resetStats(t, client)
			d := takeSame(t, mem, rs, big, fmt.Sprintf("Take of cost %d on a full log of %d events", big.Cost, n))
			calls := commandCalls(t, client) // of the Redis store's Take only
			busy := scriptTime(t, client)
			if d.Allowed {
				t.Fatalf("Take of cost %d on a full log = %+v, want it denied", big.Cost, d)
			}
			t.Logf("denied Take of cost %d on %d events: %d LRANGEs, Redis busy %s", big.Cost, n, calls["lrange"], busy)
			if calls["lrange"] > tc.max {
				t.Errorf("a denied Take of cost %d on a full log of %d events sent %d LRANGEs, want at most %d (commands %v)", big.Cost, n, calls["lrange"], tc.max, calls)
			}
			// The state left decides as the memory store's, at the
			// instants the waits name and around them.
			for _, step := range []time.Duration{d.RetryAfter - 1, 1, time.Millisecond, 10 * time.Second, time.Hour} {
				clk.t = clk.t.Add(step)
				for _, cost := range []int64{total, total / 2, 1} {
					c := c
					c.Cost = cost
					what := fmt.Sprintf("of cost %d at t0+%v", cost, clk.t.Sub(t0))
					peekSame(t, mem, rs, c, "then Peek "+what)
					takeSame(t, mem, rs, c, "then Take "+what)
				}
			}
		})
	}
}
