package redisstore

import (
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestDenyCacheBytesBounded: the cache is bounded by entries, and each
// entry keeps a copy of its key. The policy layer's keys are short (at
// most 64+1+256 bytes), but a direct user of the Store may pass any key:
// 64 denials of distinct 1 MB keys kept 64 MB in a cache of size 64
// before the fix. A key longer than the bound is not cached (its Takes go
// to Redis, which decides them as always); the policy layer's longest key
// still is.
func TestDenyCacheBytesBounded(t *testing.T) {
	const size = 64
	c := newDenyCache(size)
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Second}
	now := time.Unix(1000, 0)
	denied := []algorithms.Decision{{Limit: 1, RetryAfter: time.Hour}}
	big := strings.Repeat("x", 1<<20)
	for i := range size {
		key := string(rune('A'+i%26)) + string(rune('a'+i/26)) + big
		c.learn(denied, []algorithms.Check{{Spec: spec, Key: key}}, now, now, 0)
	}
	held := 0
	for k := range c.m {
		held += len(k.key)
	}
	if held > size*1024 {
		t.Fatalf("after %d denials of 1 MB keys the cache holds %d entries with %d key bytes, want at most %d", size, len(c.m), held, size*1024)
	}
	// The longest key the policy layer makes: a 64-byte policy name, ':'
	// and a 256-byte key (keyfunc.MaxKeyLen).
	longest := strings.Repeat("p", 64) + ":" + strings.Repeat("k", 256)
	check := []algorithms.Check{{Spec: spec, Key: longest}}
	c.learn(denied, check, now, now, 0)
	var dst [1]algorithms.Decision
	if !c.answer(dst[:], check, now) {
		t.Fatalf("a denial of a %d-byte key (the policy layer's longest) was not cached", len(longest))
	}
	// The bound WithDenyCache states: keys longer than 512 bytes are not
	// cached, a key of 512 bytes is.
	for _, n := range []int{512, 513} {
		check := []algorithms.Check{{Spec: spec, Key: strings.Repeat("b", n)}}
		c.learn(denied, check, now, now, 0)
		if got, want := c.answer(dst[:], check, now), n <= 512; got != want {
			t.Errorf("a denial of a %d-byte key answered locally: %v, want %v", n, got, want)
		}
	}
}

// TestDenyCacheSkipsOnlyUncacheable: WithDenyCache leaves out of the cache
// a key longer than 512 bytes and a key named twice in one Take, not the
// Take's other checks: a later Take of one of those alone, whose denial
// has not expired, is denied locally.
func TestDenyCacheSkipsOnlyUncacheable(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}
	now := time.Unix(1000, 0)
	denied := algorithms.Decision{Limit: 1, RetryAfter: time.Minute}
	long := strings.Repeat("l", maxDenyKeyLen+1)
	for name, keys := range map[string][]string{
		"long key first":     {long, "other"},
		"repeated key first": {"twice", "twice", "other"},
	} {
		c := newDenyCache(8)
		checks := make([]algorithms.Check, len(keys))
		ds := make([]algorithms.Decision, len(keys))
		for i, k := range keys {
			checks[i] = algorithms.Check{Spec: spec, Key: k}
			ds[i] = denied
		}
		c.learn(ds, checks, now, now, c.mark(checks))
		var dst [1]algorithms.Decision
		if !c.answer(dst[:], []algorithms.Check{{Spec: spec, Key: "other"}}, now.Add(time.Second)) {
			t.Errorf("%s: a later Take of the Take's other key alone was not denied locally", name)
		}
	}
}
