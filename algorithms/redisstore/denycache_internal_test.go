package redisstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestDenyCacheBounded: however many keys are denied, the cache holds at most
// its size, and expired entries make room for new ones.
func TestDenyCacheBounded(t *testing.T) {
	c := &denyCache{size: 10, m: make(map[denyKey]denyEntry)}
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Second}
	now := time.Unix(1000, 0)
	denied := []algorithms.Decision{{Limit: 1, RetryAfter: time.Second}}
	for i := range 1000 {
		c.learn(denied, []algorithms.Check{{Spec: spec, Key: fmt.Sprint(i)}}, now)
		if len(c.m) > c.size {
			t.Fatalf("after %d denials the cache holds %d entries, more than its size %d", i+1, len(c.m), c.size)
		}
	}
	now = now.Add(2 * time.Second) // every entry has expired
	c.learn(denied, []algorithms.Check{{Spec: spec, Key: "new"}}, now)
	if _, ok := c.m[denyKey{spec, "new"}]; !ok || len(c.m) != 1 {
		t.Fatalf("after expiry the cache holds %d entries (new one cached: %v), want just the new one", len(c.m), ok)
	}
	var dst [1]algorithms.Decision
	if !c.answer(dst[:], []algorithms.Check{{Spec: spec, Key: "new"}}, now.Add(time.Second/2)) {
		t.Fatal("a live denial was not answered")
	}
	if dst[0].Allowed || dst[0].RetryAfter != time.Second/2 {
		t.Fatalf("cached answer = %+v, want denied with RetryAfter 500ms", dst[0])
	}
	if c.answer(dst[:], []algorithms.Check{{Spec: spec, Key: "new"}}, now.Add(time.Second)) {
		t.Fatal("a denial was answered after its RetryAfter")
	}
}
