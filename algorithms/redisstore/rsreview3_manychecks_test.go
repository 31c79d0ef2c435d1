package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// TestReview3ManyChecksMatchMemoryStore takes 100 and 8000 checks at
// once, each on a key of its own (fixed_window, token_bucket: the fast
// path's kinds), then the same again, and a third time with the last
// check naming the first one's key (a key twice, which the fast path must
// find), through the function library and the script fallback, and
// requires the memory store's decisions: Lua's unpack takes fewer than
// 8000 values (LUAI_MAXCSTACK), and the fast path's MGET of every key
// failed a Take of 8000 checks ("too many results to unpack"), where the
// memory store decides it.
func TestReview3ManyChecksMatchMemoryStore(t *testing.T) {
	ctx := context.Background()
	for _, script := range []bool{false, true} {
		for _, tc := range []struct {
			kind algorithms.Kind
			n    int
		}{{algorithms.FixedWindow, 100}, {algorithms.TokenBucket, 100}, {algorithms.FixedWindow, 8000}, {algorithms.TokenBucket, 8000}} {
			kind, n := tc.kind, tc.n
			t.Run(fmt.Sprintf("%s/%d/script=%v", kind, n, script), func(t *testing.T) {
				var c redis.UniversalClient = newBoundClient(t)
				if script {
					c = noFunctionsBoundClient(t)
				}
				clk := &manualClock{t: time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)}
				mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clk))
				if err != nil {
					t.Fatal(err)
				}
				rs := clockedStore(t, c, clk, redisstore.WithTimeout(slowMachineTimeout))
				spec := algorithms.Spec{Algorithm: kind, Limit: 3, Window: time.Minute}
				checks := make([]algorithms.Check, n)
				for i := range checks {
					checks[i] = algorithms.Check{Spec: spec, Key: fmt.Sprint("k", i)}
				}
				twice := append([]algorithms.Check(nil), checks...)
				twice[n-1].Key = twice[0].Key
				for step, cs := range [][]algorithms.Check{checks, checks, twice} {
					clk.t = clk.t.Add(time.Second)
					want, werr := mem.Take(ctx, cs...)
					got, gerr := rs.Take(ctx, cs...)
					if werr != nil || gerr != nil {
						t.Fatalf("step %d: Take of %d checks: memory %v, redis %v", step, n, werr, gerr)
					}
					for i := range want {
						if got[i] != want[i] {
							t.Fatalf("step %d, check %d: redis %+v, memory %+v", step, i, got[i], want[i])
						}
					}
				}
			})
		}
	}
}
