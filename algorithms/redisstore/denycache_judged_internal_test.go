package redisstore

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestDenyCacheKeyedByJudgedLimit: the cache answers a check only with a
// denial of the limit it is judged at (algorithms.Check.Judged): a key
// denied at 50 (60 of 100 counted) is not denied from the cache at the
// Spec's 100 (Limit 0 or 100), nor at 70 or 40; a denial at the Spec's
// limit answers Limit 0 and Limit 100 alike, and never a check judged
// above it (110), which Redis may admit on the same state; a denial at a
// raised limit (110) answers that limit only.
func TestDenyCacheKeyedByJudgedLimit(t *testing.T) {
	c := newDenyCache(4)
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Hour}
	now := time.Unix(1000, 0)
	at := func(limit int64) []algorithms.Check { return []algorithms.Check{{Spec: spec, Key: "k", Limit: limit}} }
	denied := func(limit int64) []algorithms.Decision {
		return []algorithms.Decision{{Limit: limit, RetryAfter: time.Minute, ResetAfter: time.Minute, NextAfter: time.Minute}}
	}
	var dst [1]algorithms.Decision
	c.learn(denied(50), at(50), now, now, 0)
	if !c.answer(dst[:], at(50), now) || dst[0].Allowed || dst[0].Limit != 50 {
		t.Fatalf("a check at 50 after a denial at 50: answered %+v, want the denial", dst[0])
	}
	for _, other := range []int64{0, 100, 70, 40} {
		if c.answer(dst[:], at(other), now) {
			t.Errorf("a check judged at %d was answered from a denial at 50: %+v", other, dst[0])
		}
	}
	for _, learnt := range []int64{0, 100} {
		c.forget(at(0))
		c.learn(denied(100), at(learnt), now, now, c.mark(at(learnt)))
		for _, asked := range []int64{0, 100} {
			if !c.answer(dst[:], at(asked), now) || dst[0].Limit != 100 {
				t.Errorf("a check at Limit %d after a denial at Limit %d (both the Spec's): not answered", asked, learnt)
			}
		}
		if c.answer(dst[:], at(50), now) {
			t.Errorf("a check at 50 was answered from a denial at the Spec's limit: %+v", dst[0])
		}
		// A limit raised above the Spec's may admit where the Spec's
		// denies: never answered from its denial.
		if c.answer(dst[:], at(110), now) {
			t.Errorf("a check at 110 was answered from a denial at the Spec's limit: %+v", dst[0])
		}
	}
	// Nor a denial at a raised limit another limit's check, higher or lower.
	c.forget(at(0))
	c.learn(denied(110), at(110), now, now, c.mark(at(110)))
	if !c.answer(dst[:], at(110), now) || dst[0].Limit != 110 {
		t.Errorf("a check at 110 after a denial at 110: not answered")
	}
	for _, other := range []int64{0, 100, 105, 120} {
		if c.answer(dst[:], at(other), now) {
			t.Errorf("a check judged at %d was answered from a denial at 110: %+v", other, dst[0])
		}
	}
}
