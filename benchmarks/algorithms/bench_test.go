package algorithms_test

import (
	"context"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/httprate"
	"golang.org/x/time/rate"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// The benchmarks decide one unit per operation on a limit far above what a
// run consumes (the work of an admitted request), either with a frozen clock
// ("fixed") — the decision alone, like x/time/rate's BenchmarkAllowN — or
// through the store's system clock ("clock") — what a user pays. The
// exception is sliding_log, bounded at a limit of 100 per millisecond: with
// a fixed now its clock steps by a hundredth of the window at each reading
// (every decision admitted on a full log, see newStoreDecider); through the
// clock its log is full after the first 100 decisions of each millisecond,
// so that nearly all of its "clock" decisions are denials. The peers
// run the same workloads in the same run: httprate's in-memory counter (the
// sliding window counter behind httprate.LimitByIP) and x/time/rate's token
// bucket in a map of limiters.

const benchLimit = 1_000_000_000

func benchSpec(k algorithms.Kind) algorithms.Spec {
	s := algorithms.Spec{Algorithm: k, Limit: benchLimit, Window: time.Hour}
	switch k {
	case algorithms.SlidingBuckets:
		s.Buckets = 60
	case algorithms.LeakyQueue:
		// Its queue holds MaxDelay·Limit/Window requests: half an hour's
		// worth, 5·10^8, outlasts a run on one key (a second's, 277,778,
		// was full within the first tens of milliseconds, after which
		// every decision was a denial).
		s.MaxDelay = 30 * time.Minute
	case algorithms.SlidingLog:
		// The log keeps one entry per accepted instant: bound it as a real
		// sliding_log policy would be (limit 100), with a short window.
		s.Limit, s.Window = 100, time.Millisecond
	}
	return s
}

// slidingClockWindow is sliding_window's window in the "clock" runs. A key
// in its first window (or after an idle one) has no previous count to
// weigh, which the store decides on a shorter path: at benchSpec's hour,
// every decision of a run would be on it. A hot key's steady state is a
// previous window with counts: at 10 ms, a run of 300 ms spends at most its
// first 10 ms without one, and each of BenchmarkKeysParallel's keys (about
// a thousand requests a second each) has some in its previous window.
// The peers' Specs keep the hour: their work per decision does not depend
// on it (httprate reads both windows' counts whether or not they are
// empty), and an hour rolls over no window during a run.
const slidingClockWindow = 10 * time.Millisecond

// storeSpec is the Spec of our decider for kind k: benchSpec's, but for
// sliding_window through the clock, whose window is slidingClockWindow.
func storeSpec(k algorithms.Kind, fixed bool) algorithms.Spec {
	s := benchSpec(k)
	if k == algorithms.SlidingWindow && !fixed {
		s.Window = slidingClockWindow
	}
	return s
}

// decider is one way of deciding a request for a key. It reports false
// only when the decision failed (an error), not when it denied.
type decider interface{ allow(key string) bool }

// storeDecider decides through MemoryStore.TakeOne, as algorithms.Limiter
// does: a Check built from a Spec held beside the store.
type storeDecider struct {
	s     *algorithms.MemoryStore
	check algorithms.Check // the Spec, Key left empty
}

func (d *storeDecider) allow(key string) bool {
	c := d.check
	c.Key = key
	_, err := d.s.TakeOne(context.Background(), c)
	return err == nil
}

// slidingSeed is how many of sliding_window's decisions with a fixed now
// are in the previous window, before the run's own (see newStoreDecider).
const slidingSeed = 100

// benchMaxKeys is the key bound of our MemoryStore in the decision
// benchmarks, the examples' (algorithms.WithMaxKeys(1_000_000)), as
// throttled's store is bounded as its documentation sets it up
// (throttledMaxKeys). The bound costs only when a new key is inserted at
// it: nothing for a key held. BenchmarkMemoryPerKey's store is unbounded,
// to hold its million keys (a bound of a million, spread over 64 shards,
// would evict from the fuller ones); a bound changes no key's size.
const benchMaxKeys = 1_000_000

func newStoreDecider(b testing.TB, k algorithms.Kind, fixed bool) decider {
	opts := []algorithms.MemoryOption{algorithms.WithMaxKeys(benchMaxKeys)}
	if fixed {
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		clock := func() time.Time { return now }
		s := benchSpec(k)
		switch k {
		case algorithms.SlidingWindow:
			// A hot key's steady state: the previous window holds a
			// count, which the estimate weighs (see slidingClockWindow).
			// The first hundred readings (decisions) are a minute before
			// the window's start, in the previous window; every later
			// one is a minute after it.
			now = now.Add(time.Minute)
			prev, seed := now.Add(-2*time.Minute), slidingSeed
			clock = func() time.Time {
				if seed > 0 {
					seed--
					return prev
				}
				return now
			}
		case algorithms.SlidingLog:
			// A log at its limit of 100 admits nothing more at one instant:
			// at a frozen now every decision after the 100th would be a
			// denial (a read-only view, cheaper than a count). Each reading
			// steps by Window/Limit and a nanosecond instead (an instant
			// counts for the whole window, its end included), so that every
			// decision is admitted on a full log: one instant pruned, one
			// logged. The "fixed" cases run on one goroutine: a plain
			// variable.
			step := s.Window/time.Duration(s.Limit) + time.Nanosecond
			clock = func() time.Time { now = now.Add(step); return now }
		}
		opts = append(opts, algorithms.WithClock(algorithms.ClockFunc(clock)))
	}
	s, err := algorithms.NewMemoryStore(opts...)
	if err != nil {
		b.Fatal(err)
	}
	return &storeDecider{s, algorithms.Check{Spec: storeSpec(k, fixed)}}
}

// httprateDecider is httprate's decision as its middleware makes it
// (RateLimiter.OnLimit, without the headers): under the limiter's mutex,
// read both windows' counts and weigh them (Status, calculateRate's clock
// read), and count the request, in the window read from the clock before
// (OnLimit's own clock read), when it is under the limit.
//
// The counter is httprate's in-memory one passed in with WithLimitCounter,
// so that the limiter's windows start on the wall clock's grid and this
// decider can name the window it counts in: with the counter the limiter
// makes itself (LimitByIP's), windows start at an unexported offset (its
// start instant), and a request counted at the wall-clock window lands
// where Status never reads, so that every Status call finds both windows
// empty without looking a key up (TestHttprateDeciderCountsWhereItReads).
// The offset only moves the grid: the same arithmetic either way.
type httprateDecider struct {
	rl     *httprate.RateLimiter
	window time.Duration
	mu     sync.Mutex // OnLimit's l.mu (unexported), held as it holds it
}

func (d *httprateDecider) allow(key string) bool {
	window := time.Now().UTC().Truncate(d.window)
	d.mu.Lock()
	_, rate, err := d.rl.Status(key)
	if err != nil {
		d.mu.Unlock()
		return false
	}
	if int(math.Round(rate))+1 > benchLimit {
		d.mu.Unlock()
		return true // denied: nothing counted
	}
	err = d.rl.Counter().IncrementBy(key, window, 1)
	d.mu.Unlock()
	return err == nil
}

func newHttprate() decider {
	return &httprateDecider{
		rl:     httprate.NewRateLimiter(benchLimit, time.Hour, httprate.WithLimitCounter(httprate.NewLocalLimitCounter(time.Hour))),
		window: time.Hour,
	}
}

// xrateMap is a map of x/time/rate limiters behind a sync.Map, the fastest
// keyed form of x/time/rate under parallel load.
type xrateMap struct{ m sync.Map }

func (x *xrateMap) allow(key string) bool {
	v, ok := x.m.Load(key)
	if !ok {
		v, _ = x.m.LoadOrStore(key, rate.NewLimiter(rate.Limit(benchLimit), benchLimit))
	}
	v.(*rate.Limiter).Allow()
	return true
}

// namedDecider is a decider's benchmark name and how to make one.
type namedDecider struct {
	name string
	new  func() decider
}

// benchDeciders lists the deciders of one run: ours per kind, then the
// peers (which read their own clocks: "clock" runs only).
func benchDeciders(b *testing.B, fixed bool) []namedDecider {
	var ds []namedDecider
	for _, k := range algorithms.Kinds {
		ds = append(ds, namedDecider{string(k), func() decider { return newStoreDecider(b, k, fixed) }})
	}
	if !fixed {
		ds = append(ds,
			namedDecider{"peer=httprate", newHttprate},
			namedDecider{"peer=x-time-rate", func() decider { return &xrateMap{} }},
			namedDecider{"peer=throttled", func() decider { return newThrottled(b, throttledMaxKeys) }},
			namedDecider{"peer=go-limiter", func() decider { return newGoLimiter(b) }},
			namedDecider{"peer=ulule", newUlule},
		)
	}
	return ds
}

func keys(n int) []string {
	ks := make([]string, n)
	for i := range ks {
		ks[i] = "198.51." + strconv.Itoa(i/256%256) + "." + strconv.Itoa(i%256) + "/" + strconv.Itoa(i)
	}
	return ks
}

// BenchmarkHotKeySerial decides for one key from one goroutine.
func BenchmarkHotKeySerial(b *testing.B) {
	for _, mode := range []string{"fixed", "clock"} {
		for _, d := range benchDeciders(b, mode == "fixed") {
			b.Run(mode+"/"+d.name, func(b *testing.B) {
				dec := d.new()
				b.ReportAllocs()
				for b.Loop() {
					if !dec.allow("203.0.113.7") {
						b.Fatal("decision failed")
					}
				}
			})
		}
	}
}

// BenchmarkHotKeyParallel decides for one key from every CPU: contention.
func BenchmarkHotKeyParallel(b *testing.B) {
	for _, d := range benchDeciders(b, false) {
		b.Run("clock/"+d.name, func(b *testing.B) {
			dec := d.new()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					dec.allow("203.0.113.7")
				}
			})
		})
	}
}

// parallelKeys is the number of keys of BenchmarkKeysParallel.
const parallelKeys = 10_000

// BenchmarkKeysParallel decides for parallelKeys keys from every CPU: the
// cost of the key table under parallel load.
func BenchmarkKeysParallel(b *testing.B) {
	ks := keys(parallelKeys)
	for _, d := range benchDeciders(b, false) {
		b.Run("clock/"+d.name, func(b *testing.B) {
			dec := d.new()
			for _, k := range ks {
				dec.allow(k)
			}
			var next atomic.Uint64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := next.Add(7919)
				for pb.Next() {
					i += 7919
					dec.allow(ks[i%uint64(len(ks))])
				}
			})
		})
	}
}

// BenchmarkMemoryPerKey holds 1,000,000 keys (one request each, under a
// limit of 1000 per hour, so no key is idle and none may be forgotten) and
// reports the heap bytes per key; ns/op is the cost of a million first requests.
func BenchmarkMemoryPerKey(b *testing.B) {
	const n = 1_000_000
	ks := keys(n)
	for _, k := range algorithms.Kinds {
		spec := algorithms.Spec{Algorithm: k, Limit: 1000, Window: time.Hour}
		switch k {
		case algorithms.SlidingBuckets:
			spec.Buckets = 60
		case algorithms.LeakyQueue:
			spec.MaxDelay = time.Minute
		}
		b.Run(string(k), func(b *testing.B) {
			benchMemory(b, ks, func() decider {
				s, err := algorithms.NewMemoryStore()
				if err != nil {
					b.Fatal(err)
				}
				return &storeDecider{s, algorithms.Check{Spec: spec}}
			})
		})
	}
	b.Run("peer=httprate", func(b *testing.B) { benchMemory(b, ks, newHttprate) })
	b.Run("peer=x-time-rate", func(b *testing.B) { benchMemory(b, ks, func() decider { return &xrateMap{} }) })
	b.Run("peer=throttled", func(b *testing.B) { benchMemory(b, ks, func() decider { return newThrottled(b, n) }) })
	b.Run("peer=go-limiter", func(b *testing.B) { benchMemory(b, ks, func() decider { return newGoLimiter(b) }) })
	b.Run("peer=ulule", func(b *testing.B) { benchMemory(b, ks, newUlule) })
}

func benchMemory(b *testing.B, ks []string, newDecider func() decider) {
	for b.Loop() {
		b.StopTimer()
		perKey, _ := heapPerKey(ks, newDecider, b.StartTimer, b.StopTimer)
		b.ReportMetric(perKey, "B/key")
		b.StartTimer()
	}
}

// heapPerKey returns the heap a decider made by newDecider holds per key
// after one request for each of ks: HeapAlloc after a GC, less HeapAlloc
// after a GC before it was made. Each key is made anew after the first
// reading, as a server makes a key for each request, so a decider that
// keeps the key string is charged its bytes and one that keeps a hash is
// not. start and stop bracket the decider's work (a benchmark's timer).
func heapPerKey(ks []string, newDecider func() decider, start, stop func()) (float64, decider) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fresh := make([]string, len(ks))
	for i, k := range ks {
		fresh[i] = strings.Clone(k)
	}
	start()
	dec := newDecider()
	for _, k := range fresh {
		dec.allow(k)
	}
	stop()
	clear(fresh)
	fresh = nil // the keys the decider does not keep are garbage now
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(dec)
	_ = fresh
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(len(ks)), dec
}
