package algotest

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// EdgeSpecs returns valid specs at the edges of the allowed range, every
// kind: limits of 1 to 7, 1000 and MaxLimit−1 and MaxLimit; windows of 1 ms,
// 1 ms + 1 ns, 1,000,800 ns (3600 sub-windows of 278 ns), 999,999,937 ns (a
// prime: it divides neither a second nor a day), 1 s, 1 h + 1 ns, 24 h − 1 ns
// and 24 h; Buckets 1, 2, 3, 7, 3600 and the largest divisor of the window
// up to MaxBuckets; Burst 1, Limit+1 and the largest that 24 h of refill
// allows; MaxDelay 0, 1 ns, around one spacing W/L, half a window, 24 h and
// the largest the queue bound allows. The order is fixed.
func EdgeSpecs() []algorithms.Spec {
	limits := []int64{1, 2, 3, 7, 1000, algorithms.MaxLimit - 1, algorithms.MaxLimit}
	windows := []time.Duration{
		algorithms.MinWindow, algorithms.MinWindow + 1, 1_000_800, 999_999_937,
		time.Second, time.Hour + 1, algorithms.MaxWindow - 1, algorithms.MaxWindow,
	}
	var out []algorithms.Spec
	add := func(s algorithms.Spec) {
		if s.Validate() == nil && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, w := range windows {
		for _, l := range limits {
			base := algorithms.Spec{Limit: l, Window: w}
			for _, k := range algorithms.Kinds {
				s := base
				s.Algorithm = k
				switch k {
				case algorithms.SlidingBuckets:
					for _, b := range []int{1, 2, 3, 7, algorithms.MaxBuckets, largestDivisor(int64(w), algorithms.MaxBuckets)} {
						s.Buckets = b
						add(s)
					}
				case algorithms.TokenBucket, algorithms.LeakyBucket:
					// The largest Burst refilled within MaxWindow: ceil(B·W/L) <= MaxWindow.
					top := min(algorithms.MaxLimit, mulDivFloor(int64(algorithms.MaxWindow), l, int64(w)))
					for _, b := range []int64{0, 1, l + 1, top} {
						s.Burst = b
						add(s)
					}
				case algorithms.LeakyQueue:
					sp := int64(w) / l
					// The largest MaxDelay whose queue stays under MaxLimit:
					// floor(D·L/W) <= MaxLimit−1 ⇔ D <= ceil(MaxLimit·W/L)−1.
					top := min(int64(algorithms.MaxWindow), mulDivFloor(algorithms.MaxLimit, int64(w), l)+1)
					for _, d := range []int64{0, 1, sp - 1, sp, sp + 1, int64(w) / 2, int64(algorithms.MaxWindow), top, top - 1} {
						s.MaxDelay = time.Duration(d)
						add(s)
					}
				default:
					add(s)
				}
			}
		}
	}
	return out
}

// largestDivisor returns the largest divisor of w that is at most m.
func largestDivisor(w, m int64) int {
	for d := m; d > 1; d-- {
		if w%d == 0 {
			return int(d)
		}
	}
	return 1
}

// mulDivFloor returns floor(a·b/c) for non-negative a, b and positive c,
// saturating at MaxInt64.
func mulDivFloor(a, b, c int64) int64 {
	q := new(big.Int).Mul(big.NewInt(a), big.NewInt(b))
	q.Quo(q, big.NewInt(c))
	if !q.IsInt64() {
		return math.MaxInt64
	}
	return q.Int64()
}

// EdgeStarts returns instants at the edges of time for a trace on spec w:
// just before and at the Unix epoch, an instant in 2027 aligned to w, one
// nanosecond before such an instant, a day in 1969, an instant in 1677 (a
// large negative count of nanoseconds) and one in 2262, seventy days before
// Unix nanoseconds overflow int64 (EdgeTrace keeps within 60 days of its
// start).
func EdgeStarts(w time.Duration) []time.Time {
	align := func(ns int64) time.Time { return time.Unix(0, floorDiv(ns, int64(w))*int64(w)) }
	return []time.Time{
		time.Unix(0, -1),
		time.Unix(0, 0),
		align(Base.UnixNano()),
		align(Base.UnixNano()).Add(-1),
		time.Unix(-86400, 123_456_789),
		align(math.MinInt64 + int64(100*24*time.Hour)),
		time.Unix(0, math.MaxInt64-int64(70*24*time.Hour)).Add(-w / 3),
	}
}

// edgeHorizon bounds how far an EdgeTrace's instants stray from its start.
const edgeHorizon = 60 * 24 * time.Hour

// EdgeTrace returns a deterministic trace of n steps on spec (and, in a
// few steps, other beside it, in the same call) starting at start, whose
// instants are chosen from the Model's own decisions: exactly at and one
// nanosecond before RetryAfter, ResetAfter, NextAfter and Delay, at and
// around window and sub-window boundaries, a window later, at the same
// instant again, and back by a nanosecond, a third of a window, a window
// or two hours. Costs are 1, 2, the capacity and one less, or any up to
// it; some calls name one key twice. Instants stay within 60 days of
// start. Every step is valid.
func EdgeTrace(seed uint64, spec, other algorithms.Spec, start time.Time, n int) Trace {
	return edgeTrace(rand.New(rand.NewPCG(seed, 0xed9e)), spec, other, start, n, false)
}

// EdgeForwardTrace is EdgeTrace with instants that never go back (a step
// back stays at the same instant instead), for stores that drop idle keys
// between calls: a key idle at an instant is forgotten, and only an
// instant before it (or a call that looks at the key without consuming,
// then one before that) could tell.
func EdgeForwardTrace(seed uint64, spec, other algorithms.Spec, start time.Time, n int) Trace {
	return edgeTrace(rand.New(rand.NewPCG(seed, 0xed9e)), spec, other, start, n, true)
}

// EdgeTraceFromBytes decodes any bytes into an edge trace, for fuzz
// targets: the first bytes choose a spec of EdgeSpecs, the other spec and
// a start of EdgeStarts, the rest every choice EdgeTrace makes at random
// (zeros once they run out). At most 128 steps, one per four bytes or so.
// The same bytes always give the same trace; every step is valid.
func EdgeTraceFromBytes(data []byte) Trace {
	r := &byteReader{data: data}
	specs := edgeSpecs()
	spec := specs[(int(r.next())<<8|int(r.next()))%len(specs)]
	other := specs[(int(r.next())<<8|int(r.next()))%len(specs)]
	starts := EdgeStarts(spec.Window)
	start := starts[int(r.next())%len(starts)]
	n := min(128, (len(data)-r.i+3)/4)
	return edgeTrace(r, spec, other, start, n, false)
}

// A chooser makes EdgeTrace's choices: a *rand.Rand, or a byteReader.
type chooser interface {
	IntN(n int) int
	Int64N(n int64) int64
}

// IntN returns a number in [0, n) from the next byte.
func (r *byteReader) IntN(n int) int { return int(r.next()) % n }

// Int64N returns a number in [0, n) from the next eight bytes.
func (r *byteReader) Int64N(n int64) int64 {
	var x uint64
	for range 8 {
		x = x<<8 | uint64(r.next())
	}
	return int64(x % uint64(n))
}

var (
	edgeOnce  sync.Once
	edgeCache []algorithms.Spec
)

// edgeSpecs returns EdgeSpecs, made once.
func edgeSpecs() []algorithms.Spec {
	edgeOnce.Do(func() { edgeCache = EdgeSpecs() })
	return edgeCache
}

func edgeTrace(rng chooser, spec, other algorithms.Spec, start time.Time, n int, forward bool) Trace {
	m := NewModel()
	tr := Trace{Start: start}
	w := spec.Window
	sub := w
	if spec.Buckets > 1 {
		sub = w / time.Duration(spec.Buckets)
	}
	costOf := func(s algorithms.Spec) int64 {
		c := s.Capacity()
		switch rng.IntN(7) {
		case 0, 1:
			return 1
		case 2:
			return min(2, c)
		case 3:
			return c
		case 4:
			return max(1, c-1)
		case 5:
			return 1 + rng.Int64N(c)
		}
		return 0 // the default, 1
	}
	var last algorithms.Decision // the latest decision on (spec, "k")
	var at time.Duration
	for range n {
		var d time.Duration
		switch rng.IntN(22) {
		case 0, 1:
			d = 0
		case 2:
			d = 1
		case 3:
			d = -1
		case 4, 5:
			d = last.RetryAfter
		case 6:
			d = last.RetryAfter - 1
		case 7:
			d = last.ResetAfter
		case 8:
			d = last.ResetAfter - 1
		case 9:
			d = last.NextAfter
		case 10:
			d = last.NextAfter - 1
		case 11:
			d = last.Delay
		case 12:
			d = w
		case 13:
			d = w - 1
		case 14, 15: // onto the next window or sub-window boundary, or 1 ns around it
			b := w
			if rng.IntN(2) == 0 {
				b = sub
			}
			now := start.Add(at).UnixNano()
			d = time.Duration((floorDiv(now, int64(b))+1)*int64(b)-now) + time.Duration(rng.IntN(3)-1)
		case 16:
			d = -w / 3
		case 17:
			d = -w
		case 18:
			if rng.IntN(4) == 0 {
				d = -2 * time.Hour
			}
		case 19:
			d = time.Duration(rng.Int64N(int64(w) + 1))
		default:
			d = time.Duration(rng.Int64N(int64(w)/8 + 1))
		}
		if at+d > edgeHorizon || at+d < -edgeHorizon {
			d = -d
		}
		if forward {
			d = max(d, 0)
		}
		at += d
		var checks []algorithms.Check
		switch r := rng.IntN(10); {
		case r < 6:
			checks = []algorithms.Check{{Spec: spec, Key: "k", Cost: costOf(spec)}}
		case r < 7:
			checks = []algorithms.Check{{Spec: spec, Key: "j", Cost: costOf(spec)}}
		case r < 8: // one key twice
			a := costOf(spec)
			checks = []algorithms.Check{{Spec: spec, Key: "k", Cost: a}, {Spec: spec, Key: "k", Cost: costOf(spec)}}
		case r < 9:
			checks = []algorithms.Check{{Spec: other, Key: "k", Cost: costOf(other)}, {Spec: spec, Key: "k", Cost: costOf(spec)}}
		default:
			checks = []algorithms.Check{{Spec: spec, Key: "k", Cost: costOf(spec)}, {Spec: other, Key: "k", Cost: costOf(other)}, {Spec: spec, Key: "j", Cost: 1}}
		}
		checks = FitRepeats(checks)
		ds, err := m.TakeAt(start.Add(at), checks...)
		if err != nil {
			panic("algotest: EdgeTrace made an invalid step: " + err.Error()) // unreachable: costs are within capacity, repeats fitted
		}
		for i, c := range checks {
			if c.Spec == spec && c.Key == "k" {
				last = ds[i]
			}
		}
		tr.Steps = append(tr.Steps, Step{At: at, Checks: checks})
	}
	return tr
}
