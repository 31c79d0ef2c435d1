package redisstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestSlidingLogListEvicted: a sliding_log key is two Redis keys, the total
// and the list of events, which Redis may evict one without the other
// (maxmemory with an allkeys or volatile policy: both have an expiry). With
// the list gone and the total left, the state's events are lost, as when
// Redis evicts any other key: the store must go on deciding as on an empty
// log, not fail every Take of that client until the total expires. Before
// the fix, a Take that found the log full failed with a Lua error ("attempt
// to index a nil value": the newest event read from the missing list), and
// one that did not counted the lost units still, with no event to wait for.
func TestSlidingLogListEvicted(t *testing.T) {
	ctx := context.Background()
	client := newClient(t)
	for _, full := range []bool{false, true} {
		prefix := uniquePrefix(t)
		clk := &manualClock{t: time.Unix(1_700_000_000, 0)}
		store, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithClock(clk))
		if err != nil {
			t.Fatal(err)
		}
		spec := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 3, Window: time.Minute}
		c := algorithms.Check{Spec: spec, Key: "k", Cost: 2}
		if full {
			c.Cost = 3
		}
		if _, err := store.Take(ctx, c); err != nil {
			t.Fatal(err)
		}
		var list string
		for _, k := range keysUnder(t, client, prefix) {
			if strings.HasSuffix(k, ":l") {
				list = k
			}
		}
		if list == "" {
			t.Fatal("no list key")
		}
		if err := client.Del(ctx, list).Err(); err != nil {
			t.Fatal(err)
		}
		// The log as if empty: Takes of 1 admitted down to 0 remaining.
		for i := range 3 {
			clk.t = clk.t.Add(time.Second)
			d, err := store.Take(ctx, algorithms.Check{Spec: spec, Key: "k"})
			if err != nil {
				t.Errorf("full %v: Take %d after the list was evicted: %v", full, i+1, err)
				continue
			}
			if want := int64(2 - i); !d[0].Allowed || d[0].Remaining != want {
				t.Errorf("full %v: Take %d after the list was evicted: %+v, want admitted with Remaining %d", full, i+1, d[0], want)
			}
		}
	}
}
