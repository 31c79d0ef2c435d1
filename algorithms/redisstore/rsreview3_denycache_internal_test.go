package redisstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// TestReview3DenyCacheManyChecksLinear: the deny cache learns a denied
// Take of 30,000 checks on keys of their own, then answers it, each within
// 2 s of the process's running time (it takes milliseconds). Both hold the
// cache's lock, which every Take of the process waits for; each looked for
// a key named twice by comparing every pair of checks, 450 million
// comparisons (learn: for each check, all the others), which held the lock
// for seconds (a denied Take of 8000 checks: 2.8 s to learn, 0.8 s to
// answer).
func TestReview3DenyCacheManyChecksLinear(t *testing.T) {
	const n = 30000
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Minute}
	checks := make([]algorithms.Check, n)
	denied := make([]algorithms.Decision, n)
	for i := range checks {
		checks[i] = algorithms.Check{Spec: spec, Key: fmt.Sprint("k", i)}
		denied[i] = algorithms.Decision{Limit: 1, RetryAfter: time.Minute, ResetAfter: time.Minute, NextAfter: time.Minute}
	}
	c := newDenyCache(n)
	now := time.Unix(1000, 0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.learn(denied, checks, now, now, c.mark(checks))
	}()
	if _, ok := hangguard.Within(done, 2*time.Second); !ok {
		t.Fatalf("learn of a denied Take of %d checks took more than 2s", n)
	}
	if len(c.m) != n {
		t.Fatalf("the cache holds %d entries, want %d", len(c.m), n)
	}
	dst := make([]algorithms.Decision, n)
	answered := make(chan bool, 1)
	go func() { answered <- c.answer(dst, checks, now.Add(time.Second)) }()
	ok, in := hangguard.Within(answered, 2*time.Second)
	if !in {
		t.Fatalf("answer of a Take of %d checks took more than 2s", n)
	}
	if !ok || dst[n-1].Allowed || dst[n-1].RetryAfter != time.Minute-time.Second {
		t.Fatalf("answer = %v, last decision %+v; want denied with RetryAfter 59s", ok, dst[n-1])
	}
	// A key named twice is still found: its Take is neither cached nor
	// answered (see WithDenyCache).
	twice := append([]algorithms.Check(nil), checks...)
	twice[n-1].Key = twice[0].Key
	if c.answer(dst, twice, now.Add(time.Second)) {
		t.Fatal("a Take naming a key twice was answered from the cache")
	}
	c2 := newDenyCache(n)
	c2.learn(denied, twice, now, now, c2.mark(twice))
	if _, ok := c2.m[denyKey{spec, twice[0].Key}]; ok || len(c2.m) != n-2 {
		t.Fatalf("after a denied Take naming k0 twice the cache holds %d entries (k0's: %v), want %d without k0", len(c2.m), ok, n-2)
	}
}
