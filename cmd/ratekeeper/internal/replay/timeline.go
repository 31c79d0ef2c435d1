package replay

import "time"

// A Series counts admitted and rejected requests per time bin.
type Series struct {
	Name     string  `json:"name"`
	Admitted []int64 `json:"admitted"`
	Rejected []int64 `json:"rejected"`
}

// A timeline divides the replayed span into bins of a round length.
type timeline struct {
	start int64 // Unix nanoseconds, a multiple of bin
	bin   int64
	n     int
}

// niceBins are the bin lengths a timeline chooses from.
var niceBins = []time.Duration{
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// newTimeline returns a timeline of at most about bins bins covering
// [first, last].
func newTimeline(first, last time.Time, bins int) *timeline {
	span := last.Sub(first) // saturates beyond 292 years
	bin := time.Duration(0)
	for _, b := range niceBins {
		if span/b < time.Duration(bins) {
			bin = b
			break
		}
	}
	if bin == 0 {
		// Longer than bins days (a line with a wrong clock, say): whole
		// days, as many as keep to about bins bins.
		const day = 24 * time.Hour
		bin = (span/day/time.Duration(bins) + 1) * day
	}
	start := floorDiv(first.UnixNano(), int64(bin)) * int64(bin)
	n := int(floorDiv(last.UnixNano()-start, int64(bin))) + 1
	return &timeline{start: start, bin: int64(bin), n: n}
}

func (tl *timeline) newSeries(name string) Series {
	return Series{Name: name, Admitted: make([]int64, tl.n), Rejected: make([]int64, tl.n)}
}

func (s *Series) add(tl *timeline, t int64, denied bool) {
	i := int(floorDiv(t-tl.start, tl.bin))
	if i < 0 || i >= tl.n {
		return
	}
	if denied {
		s.Rejected[i]++
	} else {
		s.Admitted[i]++
	}
}

// Start returns the start of the first bin.
func (tl *timeline) Start() time.Time { return unixNano(tl.start) }

func unixNano(t int64) time.Time { return time.Unix(0, t).UTC() }
