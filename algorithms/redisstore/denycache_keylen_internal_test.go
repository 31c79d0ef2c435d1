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
}
