package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestDenyCacheWaitAfterOwnAdmission: WithDenyCache says a cached denial
// is reported with waits "never shorter than Redis would report". Here the
// same store denies a cost-3 request (token_bucket, 1 per second, burst 3,
// one token taken: RetryAfter 1 s), then admits a cost-1 request on that
// key (another cost, so not answered from the cache), which makes Redis's
// wait for cost 3 two seconds. The cost-3 request asked again 100 ms later
// must not be told to come back sooner than Redis would tell it (1.9 s):
// a client retrying after the cached 0.9 s is denied again.
func TestDenyCacheWaitAfterOwnAdmission(t *testing.T) {
	t.Skip("bug (denycache.go): an admitted Take of this store on a key does not drop that key's cached denials, " +
		"so a later cost-3 Take is answered locally with RetryAfter 900ms where Redis says 1.9s")
	s, clk := denyCacheStore(t, newClient(t))
	ctx := context.Background()
	spec := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 1, Window: time.Second, Burst: 3}
	take := func(cost int64) algorithms.Decision {
		t.Helper()
		d, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: "k", Cost: cost})
		if err != nil {
			t.Fatal(err)
		}
		return d[0]
	}
	if d := take(1); !d.Allowed {
		t.Fatalf("first token: %+v", d)
	}
	if d := take(3); d.Allowed || d.RetryAfter != time.Second {
		t.Fatalf("cost 3 with 2 tokens = %+v, want denied with RetryAfter 1s", d)
	}
	if d := take(1); !d.Allowed {
		t.Fatalf("cost 1 with 2 tokens = %+v, want admitted", d)
	}
	clk.t = clk.t.Add(100 * time.Millisecond)
	got := take(3)
	if got.Allowed || got.RetryAfter < 1900*time.Millisecond {
		t.Fatalf("cost 3 again 100ms later = %+v, want denied with RetryAfter 1.9s (as Redis says), not shorter", got)
	}
}
