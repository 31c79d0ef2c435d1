package loadtest

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// A Record is one Take call a recording store made: the instant it read from
// its clock, the checks and their decisions.
type Record struct {
	// At is the clock reading the store decided at (Unix nanoseconds).
	At        int64
	Checks    []algorithms.Check
	Decisions []algorithms.Decision
}

// Admitted reports whether the Take was admitted (every check passed).
func (r *Record) Admitted() bool {
	for _, d := range r.Decisions {
		if !d.Allowed {
			return false
		}
	}
	return len(r.Decisions) > 0
}

// monoClock reads the monotonic clock, anchored to the wall clock once: the
// instants it returns never go back, and all stores of one process agree on
// them.
type monoClock struct{ base time.Time }

func newMonoClock() monoClock { return monoClock{base: time.Now()} }

func (c monoClock) Now() time.Time {
	return time.Unix(0, c.base.UnixNano()+int64(time.Since(c.base)))
}

// recording collects Records; it is safe for concurrent use.
type recording struct {
	mu   sync.Mutex
	recs []Record
}

func (r *recording) add(at int64, checks []algorithms.Check, ds []algorithms.Decision) {
	rec := Record{At: at, Checks: slices.Clone(checks), Decisions: slices.Clone(ds)}
	for i := range rec.Checks {
		// The middleware builds keys in pooled buffers: keep our own copy.
		rec.Checks[i].Key = strings.Clone(rec.Checks[i].Key)
	}
	r.mu.Lock()
	r.recs = append(r.recs, rec)
	r.mu.Unlock()
}

// Records returns a copy of the records, in the order they were added.
func (r *recording) Records() []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.recs)
}

// serialMemory is an algorithms.Store around a MemoryStore that records every
// decision with its exact instant. It makes each Take under one lock, setting
// the instant the MemoryStore's clock returns just before the call, so the
// recorded instant is the one the store decided at. On a single key this
// costs no concurrency the MemoryStore had: it decides one key under one
// shard lock anyway.
type serialMemory struct {
	mu    sync.Mutex
	clock algorithms.Clock
	cur   time.Time // read by inner's clock, under mu
	inner *algorithms.MemoryStore
	rec   recording
}

func newSerialMemory(clock algorithms.Clock) (*serialMemory, error) {
	s := &serialMemory{clock: clock}
	inner, err := algorithms.NewMemoryStore(algorithms.WithClock(algorithms.ClockFunc(func() time.Time { return s.cur })))
	if err != nil {
		return nil, err
	}
	s.inner = inner
	return s, nil
}

// Take implements algorithms.Store.
func (s *serialMemory) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur = s.clock.Now()
	ds, err := s.inner.Take(ctx, checks...)
	if err == nil {
		s.rec.add(s.cur.UnixNano(), checks, ds)
	}
	return ds, err
}

// stampedRedis is an algorithms.Store on Redis that records every decision
// with the instant it was decided at: each Take reads the shared clock once
// and makes its call through a redisstore.Store bound to that instant
// (redisstore.WithClock passes it to the script). With serial set, the
// clock reading and the call are made under that lock, which every server
// of the run shares, so Redis sees the instants in order. Without it, calls
// run concurrently, and Redis may run a call whose instant
// is earlier than the newest its key has seen; the store then decides it at
// that newer instant (the "time never goes back" rule of the algorithms
// package) and lengthens its durations by the difference, which
// [effectiveInstant] undoes.
type stampedRedis struct {
	client redis.UniversalClient
	prefix string
	clock  algorithms.Clock
	rec    *recording
	serial *sync.Mutex // nil: concurrent calls
}

// Take implements algorithms.Store.
func (s *stampedRedis) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	if s.serial != nil {
		s.serial.Lock()
		defer s.serial.Unlock()
	}
	now := s.clock.Now()
	st, err := redisstore.New(s.client, redisstore.WithPrefix(s.prefix),
		redisstore.WithClock(algorithms.ClockFunc(func() time.Time { return now })),
		redisstore.WithMinTTL(time.Minute))
	if err != nil {
		return nil, err
	}
	ds, err := st.Take(ctx, checks...)
	if err == nil {
		s.rec.add(now.UnixNano(), checks, ds)
	}
	return ds, err
}

// effectiveInstant returns the instant an admitted sliding_log check was
// really decided at: its clock reading, or the newer instant of the key's
// newest logged request when the reading was older. An admitted sliding_log
// decision's ResetAfter is W+1 ns from the instant it was logged at, plus the
// lengthening of a late request.
func effectiveInstant(at int64, spec algorithms.Spec, d algorithms.Decision) int64 {
	return at + int64(d.ResetAfter) - int64(spec.Window) - 1
}

// concurrentMemory is an algorithms.Store around a MemoryStore that records
// every decision with the instant the store read from its clock, without
// serialising the calls. The MemoryStore reads its clock once per call, on
// the calling goroutine, so the clock notes each reading under the reading
// goroutine's id and Take picks it up after the call. Calls overtaken
// between the clock reading and the shard lock are decided late, as on
// Redis; [effectiveInstant] recovers the instant they were decided at.
type concurrentMemory struct {
	inner *algorithms.MemoryStore
	clock algorithms.Clock

	mu    sync.Mutex
	reads map[uint64]time.Time // by goroutine id

	rec recording
}

func newConcurrentMemory(clock algorithms.Clock) (*concurrentMemory, error) {
	s := &concurrentMemory{clock: clock, reads: make(map[uint64]time.Time)}
	inner, err := algorithms.NewMemoryStore(algorithms.WithClock(algorithms.ClockFunc(func() time.Time {
		t := s.clock.Now()
		g := goid()
		s.mu.Lock()
		s.reads[g] = t
		s.mu.Unlock()
		return t
	})))
	if err != nil {
		return nil, err
	}
	s.inner = inner
	return s, nil
}

// Take implements algorithms.Store.
func (s *concurrentMemory) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	ds, err := s.inner.Take(ctx, checks...)
	g := goid()
	s.mu.Lock()
	at, ok := s.reads[g]
	delete(s.reads, g)
	s.mu.Unlock()
	if err == nil {
		if !ok {
			return nil, errors.New("loadtest: the MemoryStore decided without reading its clock on the calling goroutine")
		}
		s.rec.add(at.UnixNano(), checks, ds)
	}
	return ds, err
}

// goid returns the id of the calling goroutine, parsed from the first line
// of its stack trace ("goroutine 18 [running]:"). It is slow (about a
// microsecond) and meant for this test harness only.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	var id uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}
