package redisstore

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestDenyCacheAnswerAged: WithDenyCache reports the cached decisions of a
// Take with RetryAfter, ResetAfter and NextAfter reduced by the time
// elapsed since Redis's reply arrived, and answers only before the
// NextAfter of each, counted from before the call: from then on a key's
// Remaining may have grown, which Redis reports.
func TestDenyCacheAnswerAged(t *testing.T) {
	c := newDenyCache(8)
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Minute}
	checks := []algorithms.Check{{Spec: spec, Key: "long"}, {Spec: spec, Key: "short"}}
	at := time.Unix(1000, 0)
	replied := at.Add(100 * time.Millisecond)
	c.learn([]algorithms.Decision{
		{Limit: 1, RetryAfter: 10 * time.Second, ResetAfter: 30 * time.Second, NextAfter: 10 * time.Second},
		{Limit: 1, RetryAfter: time.Second, ResetAfter: 1500 * time.Millisecond, NextAfter: time.Second},
	}, checks, at, replied, c.mark(checks))

	now := at.Add(500 * time.Millisecond) // 0.4s after the reply
	var dst [2]algorithms.Decision
	if !c.answer(dst[:], checks, now) {
		t.Fatal("a Take with a live cached denial was not answered locally")
	}
	want := [2]algorithms.Decision{
		{Limit: 1, RetryAfter: 9600 * time.Millisecond, ResetAfter: 29600 * time.Millisecond, NextAfter: 9600 * time.Millisecond},
		{Limit: 1, RetryAfter: 600 * time.Millisecond, ResetAfter: 1100 * time.Millisecond, NextAfter: 600 * time.Millisecond},
	}
	if dst != want {
		t.Fatalf("answer 0.4s after the reply = %+v, want %+v", dst, want)
	}
	if c.answer(dst[:], checks, at.Add(time.Second)) {
		t.Fatalf("answered %+v at the short check's NextAfter (from before the call), where its Remaining may have grown", dst)
	}
}

// TestDenyCacheShortestWait: a denial is cached until its RetryAfter has
// elapsed, however short: one of 1ns is answered locally at the instant
// it was decided, and no longer 1ns later.
func TestDenyCacheShortestWait(t *testing.T) {
	c := newDenyCache(8)
	checks := []algorithms.Check{{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Minute}, Key: "k"}}
	at := time.Unix(1000, 0)
	c.learn([]algorithms.Decision{{Limit: 1, RetryAfter: time.Nanosecond}}, checks, at, at, c.mark(checks))
	var dst [1]algorithms.Decision
	if !c.answer(dst[:], checks, at) {
		t.Fatal("a denial of RetryAfter 1ns was not answered locally at the instant it was decided")
	}
	if want := (algorithms.Decision{Limit: 1, RetryAfter: time.Nanosecond}); dst[0] != want {
		t.Fatalf("answer = %+v, want %+v", dst[0], want)
	}
	if c.answer(dst[:], checks, at.Add(time.Nanosecond)) {
		t.Fatal("a denial of RetryAfter 1ns was answered locally 1ns later")
	}
}
