package algorithms_test

import (
	"context"
	"flag"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// TestMemoryStoreConformance runs the conformance suite against MemoryStore.
func TestMemoryStoreConformance(t *testing.T) {
	algotest.Run(t, algotest.Harness{
		New: func(t *testing.T, clock algorithms.Clock) algorithms.Store {
			return newMemoryStore(t, algorithms.WithClock(clock))
		},
		NewBounded: func(t *testing.T, clock algorithms.Clock, maxKeys int) algorithms.Store {
			return newMemoryStore(t, algorithms.WithClock(clock), algorithms.WithMaxKeys(maxKeys))
		},
	})
}

// TestMemoryStoreConformanceTakeOne runs the suite with every single-check
// call going through TakeOne, the allocation-free path. It also counts the
// suite's Take calls, which algotest's documentation gives as about 90,000
// (with the default number of traces): within a fifth of that.
func TestMemoryStoreConformanceTakeOne(t *testing.T) {
	takes := new(atomic.Int64)
	algotest.Run(t, algotest.Harness{
		New: func(t *testing.T, clock algorithms.Clock) algorithms.Store {
			return takeOneStore{newMemoryStore(t, algorithms.WithClock(clock)), takes}
		},
		NewBounded: func(t *testing.T, clock algorithms.Clock, maxKeys int) algorithms.Store {
			return takeOneStore{newMemoryStore(t, algorithms.WithClock(clock), algorithms.WithMaxKeys(maxKeys)), takes}
		},
	})
	if v := os.Getenv(algotest.TracesEnv); v != "" {
		t.Logf("%s=%s: %d Take calls, not compared with the documented count of a default run", algotest.TracesEnv, v, takes.Load())
		return
	}
	if part := suitePart(); part != "" {
		t.Logf("%s: %d Take calls of part of the suite, not compared with the documented count of the whole", part, takes.Load())
		return
	}
	if n := takes.Load(); n < 72_000 || n > 108_000 {
		t.Errorf("the suite made %d Take calls; algotest's documentation says about 90,000", n)
	}
}

// suitePart returns the flag that runs only part of the suite's subtests
// (-run with a subtest pattern, -skip), or "".
func suitePart() string {
	if f := flag.Lookup("test.run"); f != nil && strings.Contains(f.Value.String(), "/") {
		return "-run " + f.Value.String()
	}
	if f := flag.Lookup("test.skip"); f != nil && f.Value.String() != "" {
		return "-skip " + f.Value.String()
	}
	return ""
}

// takeOneStore decides single checks with TakeOne, and counts the calls
// of Take and TakeInto in takes; it keeps MemoryStore's other methods
// (Sweep, Len, Close, Peek, ...).
type takeOneStore struct {
	*algorithms.MemoryStore
	takes *atomic.Int64
}

func (s takeOneStore) TakeInto(ctx context.Context, dst []algorithms.Decision, checks []algorithms.Check) error {
	s.takes.Add(1)
	return s.MemoryStore.TakeInto(ctx, dst, checks)
}

func (s takeOneStore) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	s.takes.Add(1)
	if len(checks) != 1 {
		return s.MemoryStore.Take(ctx, checks...)
	}
	d, err := s.TakeOne(ctx, checks[0])
	if err != nil {
		return nil, err
	}
	return []algorithms.Decision{d}, nil
}

func newMemoryStore(t *testing.T, opts ...algorithms.MemoryOption) *algorithms.MemoryStore {
	t.Helper()
	s, err := algorithms.NewMemoryStore(opts...)
	if err != nil {
		t.Fatalf("NewMemoryStore: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// FuzzMemoryStoreModel decodes the input into a trace (algotest.TraceFromBytes)
// and requires MemoryStore to decide every step exactly as the model does.
//
//	go test -run '^$' -fuzz FuzzMemoryStoreModel -fuzztime 60s ./algorithms/
func FuzzMemoryStoreModel(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 1, 4, 3, 2, 2, 5, 4, 0, 6, 9, 9, 7, 6, 5, 0, 0, 0, 1, 133, 1, 2, 255, 7, 0, 5, 5, 5, 128, 2, 3})
	f.Add([]byte("sliding windows and buckets, tokens and queues: at one instant, at the boundary, then back"))
	f.Fuzz(func(t *testing.T, data []byte) {
		wantModelDecisions(t, "TraceFromBytes", algotest.TraceFromBytes(data))
	})
}

// wantModelDecisions replays tr on a new MemoryStore reading a clock at
// tr.Start and fails t, naming what was replayed, on an error of the
// replay or at the first decision that is not the Model's.
func wantModelDecisions(t *testing.T, what string, tr algotest.Trace) {
	t.Helper()
	clock := algotest.NewClock(tr.Start)
	store := newMemoryStore(t, algorithms.WithClock(clock))
	diff, err := algotest.CompareModel(t.Context(), store, clock, tr)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if diff != "" {
		t.Fatalf("%s: MemoryStore disagrees with the model:\n%s", what, diff)
	}
}

// TestMemoryStoreConformanceManySpecs runs the suite against stores whose
// shards already hold tables of a dozen other Specs (a process whose
// limits changed over its life): their lookups go through the shards'
// Spec index, not a scan.
func TestMemoryStoreConformanceManySpecs(t *testing.T) {
	crowd := func(t *testing.T, s *algorithms.MemoryStore) algorithms.Store {
		t.Helper()
		// A check costing more than its capacity makes its Spec's table
		// in the key's shard and is refused: no key is held.
		for i := range 12 {
			spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: int64(900_001 + i), Window: 7 * time.Second}
			for k := range 512 {
				c := algorithms.Check{Spec: spec, Key: "crowd-" + strconv.Itoa(k), Cost: spec.Limit + 1}
				if _, err := s.TakeOne(context.Background(), c); err == nil {
					t.Fatal("a check above its capacity was decided")
				}
			}
		}
		if n := s.Len(); n != 0 {
			t.Fatalf("crowding left %d keys", n)
		}
		return s
	}
	algotest.Run(t, algotest.Harness{
		New: func(t *testing.T, clock algorithms.Clock) algorithms.Store {
			return crowd(t, newMemoryStore(t, algorithms.WithClock(clock)))
		},
		NewBounded: func(t *testing.T, clock algorithms.Clock, maxKeys int) algorithms.Store {
			return crowd(t, newMemoryStore(t, algorithms.WithClock(clock), algorithms.WithMaxKeys(maxKeys)))
		},
	})
}
