package algorithms

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// logEntriesHeld returns how many events key's sliding_log holds room for
// (16 bytes each: 1 for a key in line, its cell; a spilled key's array's
// capacity), and how many it holds.
func logEntriesHeld(t *testing.T, s *MemoryStore, spec Spec, key string) (room, held int) {
	t.Helper()
	h := s.hash(key)
	sh := &s.shards[h&s.mask]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	tb := sh.lookupList(&spec)
	if tb == nil {
		t.Fatalf("%v: key %q not held", spec, key)
	}
	i, ok := tb.logs.kt.find(h)
	if !ok {
		t.Fatalf("%v: key %q not held", spec, key)
	}
	if c := tb.logs.kt.cs[i]; c.y == 0 {
		return 1, int(min(c.x, 1))
	}
	lg := &tb.logs.logs[tb.logs.kt.cs[i].y-1]
	return cap(lg.ev), lg.n
}

// TestSlidingLogMemoryAtMostLimitEntries pins the memory figure of the
// documentation (MemoryStore, slidingLog): a sliding_log key holds 16 bytes
// per distinct accepted instant in the window, at most 16·Limit: its array
// of events never has room for more than Limit of them, however long a
// client keeps its log from emptying (requests one spacing W/L apart, or
// bursts, or costs above 1), whatever the limit; nor room for more than
// twice the most it has held at once.
func TestSlidingLogMemoryAtMostLimitEntries(t *testing.T) {
	ctx := context.Background()
	for _, l := range []int64{1, 2, 3, 7, 20, 100, 1000} {
		for _, pattern := range []string{"paced", "bursts", "costs"} {
			t.Run(fmt.Sprintf("L=%d/%s", l, pattern), func(t *testing.T) {
				s, clk := newReviewStore(t)
				spec := Spec{Algorithm: SlidingLog, Limit: l, Window: time.Second}
				most, mostHeld := 0, 0
				for i := range 40 * int(l+40) {
					c := Check{Spec: spec, Key: "k"}
					switch pattern {
					case "paced":
						// Just over one spacing: every request is admitted
						// and the log never empties.
						clk.Advance(time.Second/time.Duration(l) + 1)
					case "bursts":
						if i%4 == 0 {
							clk.Advance(time.Second / 3)
						} else {
							clk.Advance(1)
						}
					case "costs":
						clk.Advance(time.Second/time.Duration(l) + 1)
						c.Cost = 1 + int64(i)%min(l, 3)
					}
					if _, err := s.TakeOne(ctx, c); err != nil {
						t.Fatal(err)
					}
					room, held := logEntriesHeld(t, s, spec, "k")
					most, mostHeld = max(most, room), max(mostHeld, held)
				}
				if most > int(l) {
					t.Errorf("the log's array held room for %d events (%d bytes), above Limit %d (%d bytes)", most, 16*most, l, 16*l)
				}
				if most > 2*mostHeld {
					t.Errorf("the log's array held room for %d events, more than twice the most it held, %d", most, mostHeld)
				}
			})
		}
	}
}
