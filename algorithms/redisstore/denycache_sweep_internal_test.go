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

// TestDenyCacheSweepLeavesLiveEntries: a sweep of a full cache that drops
// the expired entries but leaves live ones must note when the next of
// those expires, so that denials on the cache once it is full again skip
// sweeping until then (as in TestDenyCacheFullDoesNotRescan), while new
// denials are cached as soon as expired entries make room.
func TestDenyCacheSweepLeavesLiveEntries(t *testing.T) {
	const size = 1000
	c := newDenyCache(size)
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: 24 * time.Hour}
	now := time.Unix(1000, 0)
	checks := []algorithms.Check{{Spec: spec}}
	learn := func(key string, at time.Time, wait time.Duration) {
		checks[0].Key = key
		c.learn([]algorithms.Decision{{Limit: 1, RetryAfter: wait}}, checks, at, at, 0)
	}
	for i := range size / 2 {
		learn(fmt.Sprint("hour", i), now, time.Hour)
		learn(fmt.Sprint("three", i), now, 3*time.Hour)
	}
	// At 2h the first denial sweeps the expired half away; the new ones,
	// expiring at 3h as the others do, fill the cache again.
	later := now.Add(2 * time.Hour)
	for i := range size / 2 {
		learn(fmt.Sprint("new", i), later, time.Hour)
	}
	if len(c.m) != size {
		t.Fatalf("after the sweep and %d new denials the cache holds %d entries, want %d", size/2, len(c.m), size)
	}
	c.visited = 0
	for i := range 20000 {
		learn(fmt.Sprint("more", i), later.Add(time.Duration(i)*time.Millisecond), time.Hour)
	}
	if c.visited > 2*size {
		t.Fatalf("20000 denials on a full cache of entries live until 3h visited %d entries, want at most %d", c.visited, 2*size)
	}
	// Just after 3h every entry has expired: a new denial is cached.
	learn("after", now.Add(3*time.Hour), time.Hour)
	if _, ok := c.m[denyKey{spec, "after"}]; !ok || len(c.m) != 1 {
		t.Fatalf("at 3h the cache holds %d entries (new denial cached: %v), want just the new one", len(c.m), ok)
	}
}

// TestDenyCacheRoomFromEarliestExpiry: WithDenyCache says that when the
// cache is full, new denials are not cached until expired entries make
// room — and as soon as one has expired, a new denial takes its place,
// whether the entry that expired first was cached first or last, before or
// after a sweep.
func TestDenyCacheRoomFromEarliestExpiry(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: 24 * time.Hour}
	now := time.Unix(1000, 0)
	type denial struct {
		key  string
		at   time.Duration // after now
		wait time.Duration
	}
	for name, tc := range map[string]struct {
		fill  []denial // into a cache of 4
		check denial   // must be cached
	}{
		// The first entry expires at 1h, the others at 10h.
		"first cached expires first": {
			fill:  []denial{{"a", 0, time.Hour}, {"b", 0, 10 * time.Hour}, {"c", 0, 10 * time.Hour}, {"d", 0, 10 * time.Hour}},
			check: denial{"new", 2 * time.Hour, time.Hour},
		},
		// At 2h "e" sweeps "a" away and is cached, expiring at 3h, before
		// the others.
		"cached after a sweep expires first": {
			fill: []denial{{"a", 0, time.Hour}, {"b", 0, 10 * time.Hour}, {"c", 0, 10 * time.Hour}, {"d", 0, 10 * time.Hour},
				{"e", 2 * time.Hour, time.Hour}},
			check: denial{"new", 4 * time.Hour, time.Hour},
		},
	} {
		c := newDenyCache(4)
		checks := []algorithms.Check{{Spec: spec}}
		for _, d := range append(tc.fill, tc.check) {
			checks[0].Key = d.key
			c.learn([]algorithms.Decision{{Limit: 1, RetryAfter: d.wait}}, checks, now.Add(d.at), now.Add(d.at), 0)
		}
		if _, ok := c.m[denyKey{spec, tc.check.key}]; !ok {
			t.Errorf("%s: a denial on a full cache holding an expired entry was not cached (%d entries)", name, len(c.m))
		}
	}
}

// TestDenyCacheFullUpdatesHeldKeys: a Take denied on a full cache whose
// first key is not cached still caches the decisions of its keys the
// cache holds, which are not new entries: a later Take of such a key alone
// is denied locally until the latest denial's RetryAfter.
func TestDenyCacheFullUpdatesHeldKeys(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: 24 * time.Hour}
	now := time.Unix(1000, 0)
	c := newDenyCache(1)
	held := []algorithms.Check{{Spec: spec, Key: "held"}}
	c.learn([]algorithms.Decision{{Limit: 1, RetryAfter: time.Minute}}, held, now, now, 0)
	later := now.Add(30 * time.Second)
	both := []algorithms.Check{{Spec: spec, Key: "new"}, held[0]}
	c.learn([]algorithms.Decision{{Limit: 1, RetryAfter: time.Minute}, {Limit: 1, RetryAfter: 5 * time.Minute}}, both, later, later, 0)
	var dst [1]algorithms.Decision
	at := now.Add(2 * time.Minute)
	if !c.answer(dst[:], held, at) {
		t.Fatal("a Take of the held key 90s into its latest denial's 5m wait was not denied locally")
	}
	if want := (algorithms.Decision{Limit: 1, RetryAfter: 5*time.Minute - at.Sub(later)}); dst[0] != want {
		t.Fatalf("answer = %+v, want %+v", dst[0], want)
	}
}
