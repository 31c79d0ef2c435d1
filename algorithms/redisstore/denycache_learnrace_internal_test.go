package redisstore

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestDenyCacheForgetDuringLearn: this process's give-back (or admitted
// Take) of a key forgets it while a denied Take of the key, decided by
// Redis before the give-back, is caching its denial: after learn has
// compared the forget counters, before it has written the entry and the
// count of entries. The forget found the cache empty by that count and
// dropped nothing, so the stale denial stood for its RetryAfter (an hour)
// where Redis admits. It must not be cached.
func TestDenyCacheForgetDuringLearn(t *testing.T) {
	c := newDenyCache(10)
	checks := []algorithms.Check{{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}, Key: "k"}}
	now := time.Unix(1000, 0)
	denied := []algorithms.Decision{{Limit: 1, RetryAfter: time.Hour, ResetAfter: time.Hour, NextAfter: time.Hour}}
	marked := c.mark(checks) // the denied Take, before its call
	forgot := false
	c.afterMark = func() {
		if !forgot {
			forgot = true
			c.forget(checks) // the give-back, after Redis decided the Take
		}
	}
	c.learn(denied, checks, now, now, marked)
	if !forgot {
		t.Fatal("learn never reached the point the test needs (afterMark not called)")
	}
	var dst [1]algorithms.Decision
	if c.answer(dst[:], checks, now.Add(time.Second)) {
		t.Fatalf("a denial decided before a forget of its key was cached: answered %+v", dst[0])
	}
}
