package algorithms_test

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// heapPerKey returns the heap the store made by opts holds after fill, per
// key it holds (Len): how much HeapAlloc falls, between two collections,
// when the store is let go.
func heapPerKey(t *testing.T, fill func(s *algorithms.MemoryStore), opts ...algorithms.MemoryOption) float64 {
	t.Helper()
	held, n := storeHeap(t, fill, opts...)
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	return float64(int64(held)-int64(after.HeapAlloc)) / float64(n)
}

// storeHeap makes the store, fills it and returns HeapAlloc after a
// collection, with the store still held, and the keys it holds.
func storeHeap(t *testing.T, fill func(s *algorithms.MemoryStore), opts ...algorithms.MemoryOption) (uint64, int) {
	t.Helper()
	s, err := algorithms.NewMemoryStore(opts...)
	if err != nil {
		t.Fatal(err)
	}
	fill(s)
	var held runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&held)
	n := s.Len()
	runtime.KeepAlive(s)
	return held.HeapAlloc, n
}

// TestMemoryStorePerKeyFigures measures the heap per key that MemoryStore's
// documentation states: a key of the fixed-size kinds takes 30 to 41 bytes
// from 8,000 keys up (a 24-byte slot of a table 70% to 87.5% full, and the
// heap's rounding of the shards' arrays),
// up to about 42 at the WithMaxKeys bound under churn, and more in a small
// store (about 50 bytes per key at 2,000 keys, 44 at 4,000), within 70
// bytes per key and 40 KB; a sliding_log key holding one logged instant
// as much as a key of the fixed-size kinds (its event in line in its
// slot), about 90 to 110 bytes more with two (spilled to a log of its own,
// with room for two events), and 16 more per instant above (the log's room
// rounded up to a power of two); a sliding_buckets key about 80 bytes and 4 per bucket (96 with 4
// buckets). Every key made one request under 1000 per hour, so none is idle.
func TestMemoryStorePerKeyFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap of stores of up to 192,000 keys; skipped in -short")
	}
	const n = 64_000
	keys := make([]string, 3*n)
	for i := range keys {
		keys[i] = "client-" + strconv.Itoa(i)
	}
	clk := newManualClock(epoch)
	take := func(s *algorithms.MemoryStore, c algorithms.Check) {
		if d, err := s.TakeOne(ctx, c); err != nil || !d.Allowed {
			t.Fatalf("TakeOne(%+v) = %+v, %v", c, d, err)
		}
	}
	inRange := func(what string, got, lo, hi float64) {
		t.Helper()
		t.Logf("%s: %.1f B/key", what, got)
		if got < lo || got > hi {
			t.Errorf("%s: %.1f bytes per key, the documentation says %.0f to %.0f", what, got, lo, hi)
		}
	}
	for _, k := range []algorithms.Kind{algorithms.FixedWindow, algorithms.SlidingWindow, algorithms.TokenBucket, algorithms.LeakyBucket, algorithms.LeakyQueue} {
		spec := algorithms.Spec{Algorithm: k, Limit: 1000, Window: time.Hour}
		if k == algorithms.LeakyQueue {
			spec.MaxDelay = time.Minute
		}
		// Several sizes, so that the shards' tables are at several points
		// of their growth cycle.
		for _, size := range []int{n, n * 5 / 4, n * 3 / 2} {
			got := heapPerKey(t, func(s *algorithms.MemoryStore) {
				for _, key := range keys[:size] {
					take(s, algorithms.Check{Spec: spec, Key: key})
				}
			}, algorithms.WithClock(clk))
			inRange(fmt.Sprintf("%s, %d keys", k, size), got, 30, 41.5)
		}
		got := heapPerKey(t, func(s *algorithms.MemoryStore) {
			for _, key := range keys {
				take(s, algorithms.Check{Spec: spec, Key: key})
			}
		}, algorithms.WithClock(clk), algorithms.WithMaxKeys(n))
		inRange(fmt.Sprintf("%s, %d keys through a bound of %d", k, len(keys), n), got, 30, 43)
	}

	// A small store: its fixed part weighs in.
	for _, c := range []struct {
		size   int
		lo, hi float64
	}{{64, 0, 70 + 40000/64.0}, {640, 0, 70 + 40000/640.0}, {2000, 45, 56}, {4000, 39, 48}, {8000, 30, 41.5}} {
		spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1000, Window: time.Hour}
		got := heapPerKey(t, func(s *algorithms.MemoryStore) {
			for _, key := range keys[:c.size] {
				take(s, algorithms.Check{Spec: spec, Key: key})
			}
		}, algorithms.WithClock(clk))
		inRange(fmt.Sprintf("fixed_window, a small store of %d keys", c.size), got, c.lo, c.hi)
	}

	logSpec := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 1000, Window: time.Hour}
	perLog := func(size, instants int) float64 {
		c := newManualClock(epoch)
		return heapPerKey(t, func(s *algorithms.MemoryStore) {
			for i := range instants {
				for _, key := range keys[:size] {
					take(s, algorithms.Check{Spec: logSpec, Key: key})
				}
				if i < instants-1 {
					c.Advance(time.Millisecond)
				}
			}
		}, algorithms.WithClock(c))
	}
	for _, size := range []int{n, n * 5 / 4, n * 3 / 2} {
		one, two, four := perLog(size, 1), perLog(size, 2), perLog(size, 4)
		inRange(fmt.Sprintf("sliding_log, %d keys, one instant", size), one, 30, 41.5)
		inRange(fmt.Sprintf("sliding_log, %d keys, 2 instants less 1", size), two-one, 85, 115)
		inRange(fmt.Sprintf("sliding_log, %d keys, 4 instants less 2", size), four-two, 2*14, 2*18)
	}

	perBuckets := func(b int) float64 {
		spec := algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 1000, Window: time.Hour, Buckets: b}
		return heapPerKey(t, func(s *algorithms.MemoryStore) {
			for _, key := range keys[:n] {
				take(s, algorithms.Check{Spec: spec, Key: key})
			}
		}, algorithms.WithClock(clk))
	}
	b4, b60 := perBuckets(4), perBuckets(60)
	inRange("sliding_buckets, 4 buckets", b4, 60, 75)
	inRange("sliding_buckets, 60 buckets less 4, per bucket", (b60-b4)/56, 4, 5)
}
