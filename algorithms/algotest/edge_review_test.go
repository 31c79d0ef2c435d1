package algotest_test

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// validSteps fails t unless every check of tr is valid and its instants
// stay within horizon of tr.Start (0: no bound); with forward, unless they
// also never go back.
func validSteps(t *testing.T, what string, tr algotest.Trace, horizon time.Duration, forward bool) {
	t.Helper()
	for i, st := range tr.Steps {
		if len(st.Checks) == 0 {
			t.Fatalf("%s step %d: no check", what, i)
		}
		for _, c := range st.Checks {
			if err := c.Validate(); err != nil {
				t.Fatalf("%s step %d: %v", what, i, err)
			}
		}
		if horizon > 0 && (st.At > horizon || st.At < -horizon) {
			t.Fatalf("%s step %d: at %s from the start, beyond %s", what, i, st.At, horizon)
		}
		if forward && i > 0 && st.At < tr.Steps[i-1].At {
			t.Fatalf("%s step %d: at %s, back from %s", what, i, st.At, tr.Steps[i-1].At)
		}
	}
}

// TestEdgeTracesAsDocumented pins what the documentation of EdgeSpecs,
// EdgeStarts, EdgeTrace, EdgeForwardTrace, EdgeTraceFromBytes and
// TraceFromBytes promises: a fixed order of specs covering every kind and
// the edge values named; seven starts from 1677 to 2262, the 2027 one
// aligned to the window; traces of n valid steps within 60 days of their
// start, the forward ones never going back; byte-decoded traces that are
// the same for the same bytes, valid, and at most 128 (edge) or 256 steps
// long, on one to three specs and two keys.
func TestEdgeTracesAsDocumented(t *testing.T) {
	specs := algotest.EdgeSpecs()
	if !reflect.DeepEqual(specs, algotest.EdgeSpecs()) {
		t.Fatal("EdgeSpecs: two calls, two orders")
	}
	kinds := map[algorithms.Kind]bool{}
	var maxLimit, dayWindow bool
	for _, s := range specs {
		if err := s.Validate(); err != nil {
			t.Fatalf("EdgeSpecs: %+v: %v", s, err)
		}
		kinds[s.Algorithm] = true
		maxLimit = maxLimit || s.Limit == algorithms.MaxLimit
		dayWindow = dayWindow || s.Window == algorithms.MaxWindow
	}
	if len(kinds) != len(algorithms.Kinds) || !maxLimit || !dayWindow {
		t.Errorf("EdgeSpecs: kinds %v, a MaxLimit %t, a 24 h window %t; want every kind, both", kinds, maxLimit, dayWindow)
	}

	const horizon = 60 * 24 * time.Hour
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 12; i++ {
		spec, other := specs[rng.IntN(len(specs))], specs[rng.IntN(len(specs))]
		starts := algotest.EdgeStarts(spec.Window)
		if len(starts) != 7 || starts[0] != time.Unix(0, -1) || starts[1] != time.Unix(0, 0) ||
			starts[2].Year() != 2027 || starts[2].UnixNano()%int64(spec.Window) != 0 || !starts[3].Equal(starts[2].Add(-1)) ||
			starts[4].Year() != 1969 || starts[5].Year() != 1677 || starts[6].Year() != 2262 {
			t.Errorf("EdgeStarts(%s) = %v, want the seven documented instants", spec.Window, starts)
		}
		for _, start := range starts {
			seed := rng.Uint64()
			tr := algotest.EdgeTrace(seed, spec, other, start, 60)
			if tr.Len() != 60 || !tr.Start.Equal(start) {
				t.Fatalf("EdgeTrace: %d steps from %s, want 60 from %s", tr.Len(), tr.Start, start)
			}
			if !reflect.DeepEqual(tr, algotest.EdgeTrace(seed, spec, other, start, 60)) {
				t.Fatalf("EdgeTrace(%d, ...): two calls, two traces", seed)
			}
			validSteps(t, "EdgeTrace", tr, horizon, false)
			validSteps(t, "EdgeForwardTrace", algotest.EdgeForwardTrace(seed, spec, other, start, 60), horizon, true)
		}
	}

	for i := 0; i < 50; i++ {
		data := make([]byte, rng.IntN(2000))
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		e := algotest.EdgeTraceFromBytes(data)
		if e.Len() > 128 || !reflect.DeepEqual(e, algotest.EdgeTraceFromBytes(data)) {
			t.Fatalf("EdgeTraceFromBytes(%d bytes): %d steps, or two traces for the same bytes", len(data), e.Len())
		}
		validSteps(t, "EdgeTraceFromBytes", e, horizon, false)
		tr := algotest.TraceFromBytes(data)
		if tr.Len() > 256 || !reflect.DeepEqual(tr, algotest.TraceFromBytes(data)) {
			t.Fatalf("TraceFromBytes(%d bytes): %d steps, or two traces for the same bytes", len(data), tr.Len())
		}
		validSteps(t, "TraceFromBytes", tr, 0, false)
		specs, keys := map[algorithms.Spec]bool{}, map[string]bool{}
		for _, st := range tr.Steps {
			for _, c := range st.Checks {
				specs[c.Spec], keys[c.Key] = true, true
			}
		}
		if len(specs) > 3 || len(keys) > 2 {
			t.Fatalf("TraceFromBytes(%d bytes): %d specs, %d keys; want one to three and two", len(data), len(specs), len(keys))
		}
	}
}
