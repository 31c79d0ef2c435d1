package replay

import (
	"math"
	"slices"
)

// Rates summarises how many requests each key sent per policy window:
// counts per key in windows aligned to the Unix epoch (as fixed_window
// counts them), over every key-window with at least one request. Only the
// requests the policy counts are counted: under count: failed or
// succeeded, those whose logged status it counts (the limits suggested
// from the rates are limits on those).
//
// Peak holds the same percentiles over keys of each key's busiest window:
// Peak.P99 is what 99% of clients never exceed in any window.
type Rates struct {
	Keys    int   // distinct keys
	Windows int64 // key-windows with at least one request
	P50     int64
	P95     int64
	P99     int64
	Max     int64
	Peak    Percentiles
}

// Percentiles are the nearest-rank P50, P95 and P99 of a distribution.
type Percentiles struct {
	P50, P95, P99 int64
}

// histogram counts key-windows by their number of requests.
type histogram map[int64]int64

// windowCounts returns the histogram of requests per key per window of
// length w (nanoseconds) over events sorted by time, and the histogram of
// each key's busiest window. Uncounted events (a response the policy does
// not count) are left out.
func windowCounts(events []event, keys int, w int64) (windows, peaks histogram) {
	type cur struct {
		win   int64
		count int64
		peak  int64
	}
	state := make([]cur, keys)
	for i := range state {
		state[i].win = math.MinInt64
	}
	h, peaks := histogram{}, histogram{}
	for _, ev := range events {
		if ev.uncounted {
			continue
		}
		win := floorDiv(ev.t, w)
		s := &state[ev.key]
		if s.win != win {
			if s.count > 0 {
				h[s.count]++
			}
			s.win, s.count = win, 0
		}
		s.count++
		s.peak = max(s.peak, s.count)
	}
	for _, s := range state {
		if s.count > 0 {
			h[s.count]++
		}
		if s.peak > 0 {
			peaks[s.peak]++
		}
	}
	return h, peaks
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// rates computes the percentiles of h and of the peaks (nearest rank).
func rates(h, peaks histogram, keys int) Rates {
	r := h.rates(keys)
	p := peaks.rates(keys)
	r.Peak = Percentiles{P50: p.P50, P95: p.P95, P99: p.P99}
	return r
}

// rates computes the percentiles of h (nearest rank).
func (h histogram) rates(keys int) Rates {
	counts := make([]int64, 0, len(h))
	var n int64
	for c, k := range h {
		counts = append(counts, c)
		n += k
	}
	slices.Sort(counts)
	r := Rates{Keys: keys, Windows: n}
	if n == 0 {
		return r
	}
	pct := func(p float64) int64 {
		rank := int64(math.Ceil(p * float64(n)))
		var seen int64
		for _, c := range counts {
			seen += h[c]
			if seen >= rank {
				return c
			}
		}
		return counts[len(counts)-1]
	}
	r.P50, r.P95, r.P99, r.Max = pct(0.50), pct(0.95), pct(0.99), counts[len(counts)-1]
	return r
}
