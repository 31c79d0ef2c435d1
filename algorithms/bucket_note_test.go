package algorithms_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestBucketNoteOutlivesIdleKey: the note of a bucket key's latest
// give-back (GiveBacker.GiveBack) must outlive the key's idleness, for a
// Take from before it may still be given back after the bucket was full.
// token_bucket 10 per 10 s (a unit a second): A and B of 5 at 0 s, A
// given back at once (the bucket full at 5 s), a sweep at 5 s, 1 at 5 s,
// B given back at 5.5 s. Without A and B the bucket holds 9.5 at 5.5 s.
// B's decision reckons its units 5-10 s, behind A's; B, decided at the
// instant of A's give-back, may have come before it, its units moved up to
// 0-5 s and refilled: nothing comes back (9 whole). Had the sweep dropped
// the key and its note, B's give-back would trust its decision and give
// back the 0.5 s the bucket lacks (10). A sweep after the note stops
// counting (10 s after the give-back) drops the key.
func TestBucketNoteOutlivesIdleKey(t *testing.T) {
	for _, kind := range []algorithms.Kind{algorithms.TokenBucket, algorithms.LeakyBucket} {
		t.Run(string(kind), func(t *testing.T) {
			s, clk := newStore(t)
			ctx := context.Background()
			c := func(n int64) algorithms.Check {
				return algorithms.Check{Spec: algorithms.Spec{Algorithm: kind, Limit: 10, Window: 10 * time.Second}, Key: "k", Cost: n}
			}
			take := func(n int64) []algorithms.Decision {
				t.Helper()
				ds, err := s.Take(ctx, c(n))
				if err != nil || !ds[0].Allowed {
					t.Fatalf("Take(%d) at +%v: %+v, %v; want admitted", n, clk.Now().Sub(epoch), ds, err)
				}
				return ds
			}
			give := func(ds []algorithms.Decision, waited time.Duration) algorithms.Refunded {
				t.Helper()
				dst := make([]algorithms.Refunded, 1)
				if err := s.GiveBack(ctx, dst, []algorithms.Check{c(5)}, ds, waited); err != nil {
					t.Fatal(err)
				}
				return dst[0]
			}
			clk.Set(epoch)
			a := take(5)
			b := take(5)
			if got := give(a, 0); !got.Given || got.Remaining != 5 {
				t.Fatalf("A given back at once: %+v, want given, 5 left", got)
			}
			clk.Set(epoch.Add(5 * time.Second))
			if n := s.Sweep(); n != 0 || s.Len() != 1 {
				t.Errorf("a sweep at +5 s (the bucket full, its note counting) dropped %d keys, %d left; want the key kept", n, s.Len())
			}
			take(1)
			clk.Set(epoch.Add(5500 * time.Millisecond))
			if got := give(b, 5500*time.Millisecond); got.Given || got.Remaining != 9 {
				t.Errorf("B given back at +5.5 s: %+v, want nothing back, 9 left (9.5 without A and B)", got)
			}
			clk.Set(epoch.Add(10 * time.Second))
			if n := s.Sweep(); n != 1 || s.Len() != 0 {
				t.Errorf("a sweep at +10 s (the note no longer counting) dropped %d keys, %d left; want the key dropped", n, s.Len())
			}
		})
	}
}
