package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestExpiryCoversResetAfter checks, on the server's clock, that after every
// admitted Take the key expires no earlier than the Decision's ResetAfter
// and at most a few milliseconds later: whether the write set the expiry
// (PX) or kept the one an earlier write in the same window set (KEEPTTL).
func TestExpiryCoversResetAfter(t *testing.T) {
	client := newClient(t)
	ctx := context.Background()
	prefix := uniquePrefix(t)
	s, err := redisstore.New(client, redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	specs := []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Hour},
		{Algorithm: algorithms.SlidingWindow, Limit: 100, Window: time.Hour},
		{Algorithm: algorithms.TokenBucket, Limit: 100, Window: time.Hour},
	}
	abbr := map[algorithms.Kind]string{algorithms.FixedWindow: "fw", algorithms.SlidingWindow: "sw", algorithms.TokenBucket: "tb"}
	for _, spec := range specs {
		key := fmt.Sprintf("%s:{client}:%s:%d:%d:0:0:0", prefix, abbr[spec.Algorithm], spec.Limit, int64(spec.Window))
		// The longest a Take has taken so far: the write that set the
		// expiry (this Take's, or an earlier one's in the same window)
		// reckons PX from its own instant, which comes after the script's
		// TIME by up to the script's run, a few milliseconds on a loaded
		// machine.
		var longest time.Duration
		for i := range 4 {
			start := time.Now()
			d, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: "client", Cost: 1 + int64(i)})
			if err != nil {
				t.Fatal(err)
			}
			if !d[0].Allowed {
				t.Fatalf("%s take %d denied: %+v", spec, i, d[0])
			}
			pttl, err := client.PTTL(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			elapsed := time.Since(start)
			longest = max(longest, elapsed)
			reset := d[0].ResetAfter
			// The expiry is after ResetAfter from the Take's instant, which
			// is at most elapsed before the PTTL; and it is ResetAfter
			// rounded up to the millisecond plus 1 ms, from the instant of
			// the write that set it at the latest.
			if pttl < reset-elapsed-time.Millisecond {
				t.Errorf("%s take %d: key %s expires in %v, before ResetAfter %v (%v elapsed)", spec, i, key, pttl, reset, elapsed)
			}
			if pttl > reset+3*time.Millisecond+longest {
				t.Errorf("%s take %d: key %s expires in %v, long after ResetAfter %v (the longest Take so far %v)", spec, i, key, pttl, reset, longest)
			}
		}
	}
}
