package algotest

import (
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TraceFromBytes decodes any bytes into a valid trace, for fuzz targets
// that compare a store with the Model (or with another store): one to three
// specs of any kind, two keys, and steps whose gaps land on bursts, window
// boundaries, idle periods and, now and then, instants that go back. The
// same bytes always give the same trace; every step is valid. At most 256
// steps are decoded.
func TraceFromBytes(data []byte) Trace {
	r := byteReader{data: data}
	specs := make([]algorithms.Spec, 1+r.next()%3)
	for i := range specs {
		specs[i] = r.spec()
	}
	keys := []string{"a", "b{c}"}
	tr := Trace{Start: Base.Add(time.Duration(r.next()) * 7_777_777_777)}
	var at time.Duration
	for len(tr.Steps) < 256 && r.more() {
		g, c := r.next(), r.next()
		w := specs[int(c)%len(specs)].Window
		switch g % 8 {
		case 0, 1: // a burst at one instant
		case 2:
			at++
		case 3:
			at += w / 1000
		case 4:
			at += w / 10
		case 5: // onto the next boundary of the window
			now := tr.Start.Add(at).UnixNano()
			at += time.Duration((now/int64(w)+1)*int64(w) - now)
		case 6:
			at += w
		case 7:
			at += 10 * w
		}
		if g&0x80 != 0 {
			at -= w / 3 // a host whose clock is behind
		}
		st := Step{At: at, Checks: []algorithms.Check{r.check(specs, keys, c)}}
		if c&0x80 != 0 {
			st.Checks = FitRepeats(append(st.Checks, r.check(specs, keys, r.next())))
		}
		tr.Steps = append(tr.Steps, st)
	}
	return tr
}

// byteReader hands out the bytes of data, then zeros.
type byteReader struct {
	data []byte
	i    int
}

func (r *byteReader) more() bool { return r.i < len(r.data) }

func (r *byteReader) next() byte {
	if r.i >= len(r.data) {
		return 0
	}
	r.i++
	return r.data[r.i-1]
}

func (r *byteReader) spec() algorithms.Spec {
	k, w, l, x := r.next(), r.next(), r.next(), r.next()
	limits := []int64{1, 2, 3, 5, 8, 13, 100, algorithms.MaxLimit - int64(l)}
	s := algorithms.Spec{
		Algorithm: algorithms.Kinds[int(k)%len(algorithms.Kinds)],
		Window:    traceWindows[int(w)%len(traceWindows)],
		Limit:     limits[int(l)%len(limits)],
	}
	switch s.Algorithm {
	case algorithms.TokenBucket, algorithms.LeakyBucket:
		s.Burst = int64(x % 16) // 0 means Limit
	case algorithms.SlidingBuckets:
		s.Buckets = []int{1, 2, 3, 4, 5, 6, 10, 12}[x%8]
	case algorithms.LeakyQueue:
		s.MaxDelay = time.Duration(x) * s.Window / 64
	}
	if s.Validate() != nil {
		s.Burst, s.Buckets, s.MaxDelay = 0, 0, 0
		if s.Algorithm == algorithms.SlidingBuckets {
			s.Buckets = 1
		}
	}
	if s.Validate() != nil {
		s = algorithms.Spec{Algorithm: s.Algorithm, Limit: 3, Window: time.Second}
		if s.Algorithm == algorithms.SlidingBuckets {
			s.Buckets = 1
		}
	}
	return s
}

func (r *byteReader) check(specs []algorithms.Spec, keys []string, c byte) algorithms.Check {
	ch := algorithms.Check{Spec: specs[int(c&0x7f)%len(specs)], Key: keys[int(c>>4)%len(keys)]}
	switch n := r.next(); {
	case n == 0: // the default cost, 1
	case n == 255:
		ch.Cost = ch.Spec.Capacity()
	default:
		ch.Cost = 1 + int64(n)%min(3, ch.Spec.Capacity())
	}
	return ch
}
