package main

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestRequestsWithinSpan: every request falls within -span of -start,
// whatever the span's length. The scrapers' requests, bunched in the last
// tenth of a minute, were placed a whole minute after the start of the
// span's last (partial) minute: "-span 10s" wrote requests up to 59 s
// after the start, "-span 90s" up to 119 s.
func TestRequestsWithinSpan(t *testing.T) {
	t0 := time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, span := range []time.Duration{10 * time.Second, 90 * time.Second, 150 * time.Second, 10 * time.Minute, time.Hour} {
		g := &gen{rng: rand.New(rand.NewPCG(1, 1^0x5eed)), t0: t0, span: span, format: "combined"}
		var late int
		var latest time.Time
		for _, r := range g.requests(3000) {
			if r.t.Before(t0) || r.t.After(t0.Add(span)) {
				late++
				if r.t.After(latest) {
					latest = r.t
				}
			}
		}
		if late > 0 {
			t.Errorf("-span %s: %d of 3000 requests outside it, the latest %s after the start", span, late, latest.Sub(t0))
		}
	}
}
