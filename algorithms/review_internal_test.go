package algorithms

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// reviewClock is a clock that moves only when told.
type reviewClock struct{ ns atomic.Int64 }

func (c *reviewClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *reviewClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

func newReviewStore(t *testing.T, opts ...MemoryOption) (*MemoryStore, *reviewClock) {
	t.Helper()
	clk := &reviewClock{}
	clk.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	s, err := NewMemoryStore(append([]MemoryOption{WithClock(clk)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s, clk
}

// keysInShard returns n distinct keys that s puts in shard i.
func keysInShard(s *MemoryStore, i uint64, n int) []string {
	var keys []string
	for k := 0; len(keys) < n; k++ {
		key := "k" + strconv.Itoa(k)
		if s.hash(key)&s.mask == i {
			keys = append(keys, key)
		}
	}
	return keys
}

var reviewSpecs = []Spec{
	{Algorithm: FixedWindow, Limit: 5, Window: time.Second},
	{Algorithm: SlidingWindow, Limit: 5, Window: time.Second},
	{Algorithm: SlidingLog, Limit: 5, Window: time.Second},
	{Algorithm: SlidingBuckets, Limit: 5, Window: time.Second, Buckets: 10},
	{Algorithm: TokenBucket, Limit: 5, Window: time.Second},
	{Algorithm: LeakyBucket, Limit: 5, Window: time.Second},
	{Algorithm: LeakyQueue, Limit: 5, Window: time.Second, MaxDelay: time.Second},
}

// A Take whose first check brings a new key into a shard that is due for a
// sweep, and whose second check is on an idle key held in that shard: the
// sweep drops the idle key before the second check commits. The second
// check's consumption must still be recorded, and counted as a key.
func TestReviewSweepDuringTakeKeepsTheTakesKeys(t *testing.T) {
	ctx := context.Background()
	for _, spec := range reviewSpecs {
		t.Run(string(spec.Algorithm), func(t *testing.T) {
			s, clk := newReviewStore(t)
			keys := keysInShard(s, 0, minSweep+1)
			for _, k := range keys[:minSweep] {
				if _, err := s.TakeOne(ctx, Check{Spec: spec, Key: k}); err != nil {
					t.Fatal(err)
				}
			}
			clk.Advance(3 * time.Second) // every key idle, the shard due for a sweep
			ds, err := s.Take(ctx, Check{Spec: spec, Key: keys[minSweep]}, Check{Spec: spec, Key: keys[0], Cost: spec.Capacity()})
			if err != nil || !ds[0].Allowed || !ds[1].Allowed {
				t.Fatalf("Take = %+v, %v; want both allowed", ds, err)
			}
			if n := s.Len(); n != 2 {
				t.Errorf("Len after the Take = %d, want 2 (the Take's keys)", n)
			}
			if d, err := s.TakeOne(ctx, Check{Spec: spec, Key: keys[0]}); err != nil || d.Allowed {
				t.Errorf("check on %q after its whole capacity was taken: %+v, %v; want denied", keys[0], d, err)
			}
			clk.Advance(3 * time.Second)
			s.Sweep()
			if n := s.Len(); n != 0 {
				t.Errorf("Len after every key went idle and a sweep = %d, want 0", n)
			}
		})
	}
}

// A Take on as many keys as the bound, one of them new, fits in the bound:
// eviction must find the one key outside the Take however many of the
// Take's own keys it samples first.
func TestReviewEvictionFindsAKeyOutsideTheTake(t *testing.T) {
	ctx := context.Background()
	const bound = 10
	spec := reviewSpecs[0]
	for trial := range 20 {
		s, _ := newReviewStore(t, WithMaxKeys(bound))
		if s.mask != 0 {
			t.Fatalf("bound %d uses %d shards, want 1", bound, s.mask+1)
		}
		var checks []Check
		for i := range bound {
			key := "t" + strconv.Itoa(trial) + "-" + strconv.Itoa(i)
			if _, err := s.TakeOne(ctx, Check{Spec: spec, Key: key}); err != nil {
				t.Fatal(err)
			}
			if i > 0 {
				checks = append(checks, Check{Spec: spec, Key: key})
			}
		}
		checks = append(checks, Check{Spec: spec, Key: "new"})
		if _, err := s.Take(ctx, checks...); err != nil {
			t.Fatal(err)
		}
		if n := s.Len(); n > bound {
			t.Fatalf("trial %d: Len = %d after a Take on %d keys, over the bound %d", trial, n, len(checks), bound)
		}
	}
}

// heldKeys counts the keys the tables of s hold, and checks each key table's
// order and count.
func heldKeys(t *testing.T, s *MemoryStore) int {
	t.Helper()
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for _, tb := range sh.tables {
			if kt := tb.cells; kt != nil {
				n += heldInOrder(t, kt)
			}
			if rt := tb.rings; rt != nil {
				n += heldInOrder(t, rt.kt)
				checkRings(t, rt)
			}
			if lt := tb.logs; lt != nil {
				n += heldInOrder(t, lt.kt)
				checkLogs(t, lt, &tb.p)
			}
		}
		sh.mu.Unlock()
	}
	return n
}

// Len is the number of keys the tables hold, and stays within the bound,
// through random single checks, Takes of several keys and specs, sweeps,
// and instants that go back.
func TestReviewLenMatchesHeldKeys(t *testing.T) {
	ctx := context.Background()
	r := newReviewRand()
	for _, cf := range []struct{ bound, keys int }{{0, 1500}, {0, 100}, {40, 12}, {40, 80}, {600, 400}} {
		bound := cf.bound
		var opts []MemoryOption
		if bound > 0 {
			opts = append(opts, WithMaxKeys(bound))
		}
		s, clk := newReviewStore(t, opts...)
		limit := bound
		if bound > 0 {
			limit = (bound + int(s.mask)) / int(s.mask+1) * int(s.mask+1)
		}
		for step := range 6000 {
			switch g := r.IntN(20); {
			case g < 12:
				clk.Advance(time.Duration(r.IntN(400)) * time.Millisecond)
			case g < 13:
				clk.Advance(-time.Duration(r.IntN(1500)) * time.Millisecond)
			}
			var checks []Check
			for range 1 + r.IntN(3) {
				if r.IntN(2) == 0 && len(checks) > 0 {
					checks = append(checks, checks[r.IntN(len(checks))])
					continue
				}
				spec := reviewSpecs[r.IntN(len(reviewSpecs))]
				checks = append(checks, Check{Spec: spec, Key: "k" + strconv.Itoa(r.IntN(cf.keys)), Cost: 1 + int64(r.IntN(2))})
			}
			for ValidateChecks(checks) != nil {
				// Checks of one key past what it ever admits at once: a Take
				// refuses them. Fewer checks.
				checks = checks[:len(checks)-1]
			}
			if len(checks) == 1 {
				if _, err := s.TakeOne(ctx, checks[0]); err != nil {
					t.Fatal(err)
				}
			} else if _, err := s.Take(ctx, checks...); err != nil {
				t.Fatal(err)
			}
			if r.IntN(500) == 0 {
				s.Sweep()
			}
			if r.IntN(16) == 0 {
				// Due for a sweep at the next new key (else only after 512).
				for i := range s.shards {
					sh := &s.shards[i]
					sh.mu.Lock()
					sh.sweepAt = 0
					sh.mu.Unlock()
				}
			}
			if step%97 == 0 || step == 5999 {
				got, want := s.Len(), heldKeys(t, s)
				if got != want {
					t.Fatalf("bound %d, step %d: Len %d, the tables hold %d", bound, step, got, want)
				}
				if limit > 0 && got > limit {
					t.Fatalf("bound %d, step %d: Len %d over the bound", bound, step, got)
				}
			}
		}
	}
}

func newReviewRand() *rand.Rand { return rand.New(rand.NewPCG(21, 22)) }

// A Take on more keys of a shard than its share of the bound keeps them all;
// the shard's next new key brings it back within the bound.
func TestReviewBoundRecoversAfterALargeTake(t *testing.T) {
	ctx := context.Background()
	s, _ := newReviewStore(t, WithMaxKeys(2))
	spec := reviewSpecs[0]
	if _, err := s.Take(ctx, Check{Spec: spec, Key: "a"}, Check{Spec: spec, Key: "b"}, Check{Spec: spec, Key: "c"}, Check{Spec: spec, Key: "d"}); err != nil {
		t.Fatal(err)
	}
	if n := s.Len(); n != 4 {
		t.Fatalf("Len after a Take on 4 keys = %d, want 4 (a Take keeps its keys)", n)
	}
	if _, err := s.TakeOne(ctx, Check{Spec: spec, Key: "e"}); err != nil {
		t.Fatal(err)
	}
	if n := s.Len(); n != 2 {
		t.Errorf("Len after the next new key = %d, want the bound 2", n)
	}
}

// heldInOrder checks kt with checkKeyTable against the keys it holds
// (order, homes, empty slots, count) and returns how many it holds.
func heldInOrder(t *testing.T, kt *keyTable) int {
	t.Helper()
	held := make(map[uint64]cell, kt.n)
	for j, e := range kt.hs {
		if e != 0 {
			held[e] = kt.cs[j]
		}
	}
	checkKeyTable(t, kt, held) // a hash held twice leaves len(held) short of kt.n
	return len(held)
}

// checkRings checks that rt's rings are dense, one per key, each owned by
// its key and summing to its cell's sum.
// checkLogs checks a table of sliding_log keys: a key in line holds at
// most one event (an empty one's cell zero), a spilled one at least one,
// in a log of its own that its cell names and that names its key; the logs
// are dense (one per spilled key), each with its events at distinct
// increasing instants, every one costing at least 1, summing to its sum,
// within Limit and the room of its array.
func checkLogs(t *testing.T, lt *logTable, p *params) {
	t.Helper()
	if len(lt.owners) != len(lt.logs) {
		t.Fatalf("%d logs and %d owners", len(lt.logs), len(lt.owners))
	}
	spilled := 0
	seen := make(map[uint32]bool)
	for j, e := range lt.kt.hs {
		if e == 0 {
			continue
		}
		c := lt.kt.cs[j]
		if c.y == 0 {
			if c.x == 0 && c.t != 0 || int64(c.x) > p.limit {
				t.Fatalf("key %#x in line: cell %+v (limit %d)", e, c, p.limit)
			}
			continue
		}
		spilled++
		r := c.y - 1
		if int(r) >= len(lt.logs) || seen[r] {
			t.Fatalf("key %#x names log %d of %d, or one another key names", e, r, len(lt.logs))
		}
		seen[r] = true
		if c.t != 0 || c.x != 0 {
			t.Fatalf("spilled key %#x: cell %+v, want t and x 0", e, c)
		}
		if h := lt.owners[r]; h != e {
			t.Fatalf("log %d owned by hash %#x, its key's is %#x", r, h, e)
		}
		s := &lt.logs[r]
		if s.n < 1 || s.n > len(s.ev) || s.head >= len(s.ev) {
			t.Fatalf("spilled key %#x: %d events, head %d, room %d", e, s.n, s.head, len(s.ev))
		}
		sum := int64(0)
		for k := range s.n {
			ev := s.at(k)
			if ev.n < 1 || (k > 0 && ev.t <= s.at(k-1).t) {
				t.Fatalf("spilled key %#x: event %d is %+v after %+v", e, k, *ev, *s.at(max(k-1, 0)))
			}
			sum += ev.n
		}
		if sum != s.sum || sum > p.limit {
			t.Fatalf("spilled key %#x: events sum to %d, the log says %d (limit %d)", e, sum, s.sum, p.limit)
		}
	}
	if spilled != len(lt.logs) {
		t.Fatalf("%d spilled keys, %d logs", spilled, len(lt.logs))
	}
}

func checkRings(t *testing.T, rt *ringTable) {
	t.Helper()
	if len(rt.rows) != rt.kt.n*rt.b || len(rt.owners) != rt.kt.n {
		t.Fatalf("%d words of rings and %d owners for %d keys of %d buckets", len(rt.rows), len(rt.owners), rt.kt.n, rt.b)
	}
	seen := make(map[uint32]bool)
	for j, e := range rt.kt.hs {
		if e == 0 {
			continue
		}
		c := rt.kt.cs[j]
		if seen[c.y] {
			t.Fatalf("ring %d held by two keys", c.y)
		}
		seen[c.y] = true
		if h := rt.owners[c.y]; h != e {
			t.Fatalf("ring %d owned by hash %#x, its key's is %#x", c.y, h, e)
		}
		sum := int64(0)
		for _, x := range rt.ring(c.y) {
			sum += int64(x)
		}
		if sum != int64(c.x) {
			t.Fatalf("ring %d: counts sum to %d, the cell says %d", c.y, sum, c.x)
		}
	}
}
