package redisstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestDenyCacheFullDoesNotRescan: a full cache of denials that have not
// expired (many distinct clients denied for a long wait: the traffic the
// cache is for) makes a new denial skip caching, at the cost of a map
// lookup. It must not look through every entry for an expired one on each
// denial, under the lock every Take's answer takes: that made each denied
// Take cost O(size) while the cache was full. Here 20000 denials of new keys
// on a full cache of 50000 would visit 10^9 entries; the sweeps they may
// make are bounded by the entries' expiries, not by the denials.
func TestDenyCacheFullDoesNotRescan(t *testing.T) {
	const size = 50000
	c := newDenyCache(size)
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: 24 * time.Hour}
	now := time.Unix(1000, 0)
	denied := []algorithms.Decision{{Limit: 1, RetryAfter: time.Hour}}
	checks := []algorithms.Check{{Spec: spec}}
	for i := range size {
		checks[0].Key = fmt.Sprint("old", i)
		c.learn(denied, checks, now.Add(time.Duration(i)), now.Add(time.Duration(i)), 0)
	}
	if len(c.m) != size {
		t.Fatalf("cache holds %d entries, want %d", len(c.m), size)
	}
	c.visited = 0
	for i := range 20000 {
		checks[0].Key = fmt.Sprint("new", i)
		at := now.Add(time.Minute + time.Duration(i)*time.Millisecond)
		c.learn(denied, checks, at, at, 0)
	}
	if len(c.m) != size {
		t.Fatalf("cache holds %d entries, want %d", len(c.m), size)
	}
	if c.visited > 2*size {
		t.Fatalf("20000 denials on a full cache of live entries visited %d entries looking for expired ones, want at most %d", c.visited, 2*size)
	}
	// Once the old entries expire, new denials are cached again.
	later := now.Add(2 * time.Hour)
	checks[0].Key = "after"
	c.learn(denied, checks, later, later, 0)
	if _, ok := c.m[denyKey{spec, "after"}]; !ok {
		t.Fatalf("after the entries expired a new denial was not cached (%d entries)", len(c.m))
	}
	if len(c.m) != 1 {
		t.Fatalf("after the entries expired the cache holds %d entries, want 1", len(c.m))
	}
}
