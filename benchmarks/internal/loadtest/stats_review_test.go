package loadtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestQuantileNearestRank: Outcome.Quantile is the nearest-rank quantile:
// the smallest value with at least q·n of the n values at or below it
// (rank ⌈q·n⌉, the first value for q·n below 1), worked out by hand here.
func TestQuantileNearestRank(t *testing.T) {
	ms := func(vs ...int) []time.Duration {
		var out []time.Duration
		for _, v := range vs {
			out = append(out, time.Duration(v)*time.Millisecond)
		}
		return out
	}
	ten := ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	for _, tc := range []struct {
		lat  []time.Duration
		q    float64
		want time.Duration
	}{
		{nil, 0.5, 0},
		{ms(7), 0.001, 7 * time.Millisecond},
		{ms(7), 1, 7 * time.Millisecond},
		{ten, 0, time.Millisecond},
		{ten, 0.05, time.Millisecond},     // ⌈0.5⌉ = 1
		{ten, 0.1, time.Millisecond},      // ⌈1⌉ = 1
		{ten, 0.11, 2 * time.Millisecond}, // ⌈1.1⌉ = 2
		{ten, 0.5, 5 * time.Millisecond},  // ⌈5⌉ = 5, not the mean of 5 and 6
		{ten, 0.9, 9 * time.Millisecond},
		{ten, 0.99, 10 * time.Millisecond}, // ⌈9.9⌉ = 10
		{ten, 0.999, 10 * time.Millisecond},
		{ten, 1, 10 * time.Millisecond},
		{ms(10, 20, 30, 40), 0.25, 10 * time.Millisecond},
		{ms(10, 20, 30, 40), 0.26, 20 * time.Millisecond},
		{ms(10, 20, 30, 40), 0.75, 30 * time.Millisecond},
		// q·n whose float64 product lands a hair above the whole rank
		// (0.07·100 = 7.000000000000001): still rank 7.
		{hundred, 0.07, 7 * time.Millisecond},
		{hundred, 0.99, 99 * time.Millisecond},
		{hundred, 0.999, 100 * time.Millisecond},
		{hundred, 0.5, 50 * time.Millisecond},
	} {
		o := &Outcome{Latencies: tc.lat}
		if got := o.Quantile(tc.q); got != tc.want {
			t.Errorf("Quantile(%g) of %d latencies %v = %s, want %s", tc.q, len(tc.lat), short(tc.lat), got, tc.want)
		}
	}
}

func short(l []time.Duration) string {
	if len(l) > 10 {
		return fmt.Sprint(l[:3], "...", l[len(l)-1])
	}
	return fmt.Sprint(l)
}

// TestMedian: the median of the rounds is the middle value, or the mean of
// the two middle ones, whatever the order the rounds came in.
func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{10, 10, 1, 1000, 10}, 10},
	} {
		in := fmt.Sprint(tc.xs)
		if got := median(tc.xs); got != tc.want {
			t.Errorf("median(%s) = %g, want %g", in, got, tc.want)
		}
		if fmt.Sprint(tc.xs) != in {
			t.Errorf("median sorted its argument: %v, was %s", tc.xs, in)
		}
	}
}

// TestThroughput: the 200 responses (not the 429s or errors) per second of
// Elapsed.
func TestThroughput(t *testing.T) {
	o := &Outcome{Requests: 130, Codes: map[int]int{200: 100, 429: 20, 0: 10}, Elapsed: 2 * time.Second}
	if got := o.Throughput(); got != 50 {
		t.Errorf("Throughput of 100 200s in 2s = %g, want 50", got)
	}
	if got := (&Outcome{Codes: map[int]int{200: 5}}).Throughput(); got != 0 {
		t.Errorf("Throughput with no Elapsed = %g, want 0", got)
	}
}

// TestFloodBoundIsTheStores: FloodResult.Bound (and DocBound from it) is
// documented as the key bound the store applies. Measured: a MemoryStore
// bounded to n, given many more distinct keys than n at one instant (none
// idle), holds exactly its bound; a small bound (below 64·256) is spread
// over fewer than 64 shards and rounded up to a multiple of their number,
// not of 64.
func TestFloodBoundIsTheStores(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute}
	ctx := context.Background()
	for _, n := range []int{640, 1000, 10_000, 20_000} {
		clock := algorithms.ClockFunc(func() time.Time { return time.Unix(1_900_000_000, 0) })
		st, err := algorithms.NewMemoryStore(algorithms.WithClock(clock), algorithms.WithMaxKeys(n))
		if err != nil {
			t.Fatal(err)
		}
		held := 0
		for i := range 20 * n {
			if _, err := st.TakeOne(ctx, algorithms.Check{Spec: spec, Key: fmt.Sprint("k", i), Cost: 1}); err != nil {
				t.Fatal(err)
			}
			held = max(held, st.Len())
		}
		st.Close()
		if got := keyBound(n); got != held {
			t.Errorf("WithMaxKeys(%d): the flood's Bound is %d, the store holds at most %d keys", n, got, held)
		}
	}
}

// TestNearestRank: the rank of the q-quantile is ⌈q·n⌉ for any n a run can
// pool (rounds × duration × rate: tens of millions at most), exact when
// q·n is whole, though q itself is a binary fraction (0.07·100 is
// 7.000000000000001 in float64).
func TestNearestRank(t *testing.T) {
	for _, tc := range []struct {
		q    float64
		n    int
		want int
	}{
		{0.5, 10, 5},
		{0.99, 10, 10},
		{0.07, 100, 7},
		{0.999, 1000, 999},
		{0.999, 1001, 1000}, // 999.999
		{0.5, 1 << 25, 1 << 24},
		{0.9, 50_000_000, 45_000_000},
		{0.99, 50_000_000, 49_500_000},
		{0.999, 50_000_000, 49_950_000},
		{0.999, 50_000_001, 49_950_001}, // 49,950,000.999
		{0.5, 50_000_001, 25_000_001},   // 25,000,000.5
	} {
		if got := nearestRank(tc.q, tc.n); got != tc.want {
			t.Errorf("nearestRank(%g, %d) = %d, want %d", tc.q, tc.n, got, tc.want)
		}
	}
}
