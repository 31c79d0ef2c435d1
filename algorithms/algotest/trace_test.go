package algotest_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

func TestRandomTraceDeterministic(t *testing.T) {
	a, b := algotest.RandomTrace(7, 200), algotest.RandomTrace(7, 200)
	if a.Len() != 200 || !a.Start.Equal(b.Start) {
		t.Fatalf("RandomTrace(7, 200): len %d, starts %v and %v", a.Len(), a.Start, b.Start)
	}
	da, db := algotest.ReplayModel(a), algotest.ReplayModel(b)
	if diff := algotest.Diff(a, da, db); diff != "" {
		t.Fatalf("two replays of the same trace differ:\n%s", diff)
	}
	kinds := make(map[algorithms.Kind]bool)
	for seed := range uint64(7) {
		tr := algotest.RandomTrace(seed, 50)
		for i, st := range tr.Steps {
			if i > 0 && st.At < tr.Steps[i-1].At {
				t.Fatalf("RandomTrace(%d): step %d goes back in time", seed, i)
			}
			for _, c := range st.Checks {
				if err := c.Validate(); err != nil {
					t.Fatalf("RandomTrace(%d) step %d: invalid check: %v", seed, i, err)
				}
				kinds[c.Spec.Algorithm] = true
			}
		}
	}
	if len(kinds) != len(algorithms.Kinds) {
		t.Fatalf("seeds 0..6 cover the kinds %v, want all %d", kinds, len(algorithms.Kinds))
	}
}

// mutant wraps the model as a store and breaks it in one way.
type mutant struct {
	m     *algotest.Model
	clock algorithms.Clock
	calls int
	mut   func(calls int, checks []algorithms.Check, ds []algorithms.Decision)
	split bool // decide every check alone: not all or nothing
}

func (s *mutant) Take(_ context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	s.calls++
	var ds []algorithms.Decision
	if s.split {
		for _, c := range checks {
			d, err := s.m.TakeAt(s.clock.Now(), c)
			if err != nil {
				return nil, err
			}
			ds = append(ds, d...)
		}
	} else {
		var err error
		if ds, err = s.m.TakeAt(s.clock.Now(), checks...); err != nil {
			return nil, err
		}
	}
	if s.mut != nil {
		s.mut(s.calls, checks, ds)
	}
	return ds, nil
}

// TestCompareModelFindsDifferences checks that the random traces catch
// stores that are wrong in small ways, and that the report says where.
func TestCompareModelFindsDifferences(t *testing.T) {
	for _, c := range []struct {
		name  string
		m     mutant
		field string
	}{
		{"retry_after_1ns_late", mutant{mut: func(_ int, _ []algorithms.Check, ds []algorithms.Decision) {
			for i := range ds {
				if !ds[i].Allowed {
					ds[i].RetryAfter += time.Nanosecond
				}
			}
		}}, "RetryAfter"},
		{"next_after_rounded_down_to_ms", mutant{mut: func(_ int, _ []algorithms.Check, ds []algorithms.Decision) {
			for i := range ds {
				ds[i].NextAfter = ds[i].NextAfter.Truncate(time.Millisecond)
			}
		}}, "NextAfter"},
		{"queue_delay_rounded_down", mutant{mut: func(_ int, cs []algorithms.Check, ds []algorithms.Decision) {
			for i := range ds {
				ds[i].Delay = ds[i].Delay.Truncate(time.Microsecond)
			}
		}}, "Delay"},
		{"not_all_or_nothing", mutant{split: true}, "decisions differ"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var diff string
			for _, seed := range []uint64{13, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12} { // 13: a queue with MaxDelay > 0
				tr := algotest.RandomTrace(seed, 1200)
				clock := algotest.NewClock(tr.Start)
				m := c.m
				m.m, m.clock = algotest.NewModel(), clock
				var err error
				if diff, err = algotest.CompareModel(t.Context(), &m, clock, tr); err != nil {
					t.Fatal(err)
				}
				if diff != "" {
					break
				}
			}
			if diff == "" {
				t.Fatal("no trace found the broken store")
			}
			for _, want := range []string{"RandomTrace(", "got ", "want ", c.field, "Steps that reach", "algotest.Trace{"} {
				if want == "algotest.Trace{" && strings.Contains(diff, "earlier steps") {
					continue // too long to print as a literal
				}
				if !strings.Contains(diff, want) {
					t.Errorf("the report lacks %q:\n%s", want, diff)
				}
			}
		})
	}
}

func TestTraceFromBytesIsValid(t *testing.T) {
	inputs := [][]byte{nil, {0}, {255, 255, 255, 255, 255, 255, 255, 255, 255, 255}, []byte("the quick brown fox jumps over the lazy dog, twice: the quick brown fox")}
	for _, in := range inputs {
		tr := algotest.TraceFromBytes(in)
		for i, st := range tr.Steps {
			for _, c := range st.Checks {
				if err := c.Validate(); err != nil {
					t.Fatalf("TraceFromBytes(%q) step %d: %v", in, i, err)
				}
			}
		}
		if diff := algotest.Diff(tr, algotest.ReplayModel(tr), algotest.ReplayModel(algotest.TraceFromBytes(in))); diff != "" {
			t.Fatalf("TraceFromBytes(%q) is not deterministic:\n%s", in, diff)
		}
	}
}

// FuzzTraceFromBytes checks that any input decodes to a trace of valid steps.
func FuzzTraceFromBytes(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{2, 0, 4, 3, 9, 6, 1, 7, 200, 5, 5, 0, 0, 0, 133, 1, 2, 255, 7, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		tr := algotest.TraceFromBytes(data)
		for i, st := range tr.Steps {
			for _, c := range st.Checks {
				if err := c.Validate(); err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
			}
		}
	})
}

func TestShrink(t *testing.T) {
	// A store that is wrong only about key "b" of the second spec after its
	// fourth request: the shrunk trace keeps few steps and still fails.
	tr := algotest.RandomTrace(3, 600)
	calls := 0
	fails := func(c algotest.Trace) bool {
		calls++
		clock := algotest.NewClock(c.Start)
		seen := 0
		m := &mutant{m: algotest.NewModel(), clock: clock, mut: func(_ int, cs []algorithms.Check, ds []algorithms.Decision) {
			for i, ch := range cs {
				if ch.Key == "b" && ch.Spec == tr.Steps[len(tr.Steps)-1].Checks[0].Spec {
					if seen++; seen >= 4 {
						ds[i].Remaining++
					}
				}
			}
		}}
		diff, err := algotest.CompareModel(t.Context(), m, clock, c)
		return err == nil && diff != ""
	}
	if !fails(tr) {
		t.Skip("the mutant is never reached on this trace") // would be a change to RandomTrace, not a Shrink bug
	}
	short := algotest.Shrink(tr, fails, 500)
	if !fails(short) {
		t.Fatal("the shrunk trace does not fail")
	}
	if short.Len() > 8 {
		t.Errorf("Shrink kept %d of %d steps after %d replays; want a handful", short.Len(), tr.Len(), calls)
	}
}

// TestRandomTraceYears pins the years RandomTrace's documentation gives:
// most traces start in 2027, those of seeds 1, 6, 11, ... in 1968 (negative
// Unix nanoseconds), and those of seeds 3, 8, 13, ... end in 2262, ten days
// and less than one more before Unix nanoseconds overflow int64.
func TestRandomTraceYears(t *testing.T) {
	for seed := range uint64(15) {
		tr := algotest.RandomTrace(seed, 50)
		first, last := tr.Start.Add(tr.Steps[0].At), tr.Start.Add(tr.Steps[len(tr.Steps)-1].At)
		switch seed % 5 {
		case 1:
			if y := first.UTC().Year(); y != 1968 || first.UnixNano() >= 0 {
				t.Errorf("seed %d starts at %v, want in 1968", seed, first)
			}
		case 3:
			end := time.Unix(0, math.MaxInt64)
			if y := last.UTC().Year(); y != 2262 || end.Sub(last) < 10*24*time.Hour || end.Sub(last) > 11*24*time.Hour {
				t.Errorf("seed %d ends at %v, want in 2262 ten days before %v", seed, last, end)
			}
		default:
			if y := first.UTC().Year(); y != 2027 {
				t.Errorf("seed %d starts at %v, want in 2027", seed, first)
			}
		}
	}
}
