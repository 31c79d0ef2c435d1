package metrictest

import "testing"

// sink keeps what the functions measured allocate on the heap.
var sink []*[16]byte

// TestAllocsNoMoreNotHiddenByNoiseInBase: the allocations of another
// goroutine (a Binding's cleanup run by the runtime) that land in the
// measure of base, not f's, must not hide an allocation f makes at every
// call. Here base allocates nothing per call but 400 times at its second
// call (the first after AllocsPerRun's warm-up, once): 2 a call over 200
// runs, more than f's one; f allocates one at every call.
func TestAllocsNoMoreNotHiddenByNoiseInBase(t *testing.T) {
	calls := 0
	base := func() {
		calls++
		if calls == 2 {
			for range 400 {
				sink = append(sink[:0], new([16]byte))
			}
		}
	}
	f := func() { sink = append(sink[:0], new([16]byte)) }
	sink = make([]*[16]byte, 0, 1)
	if a, b, ok := AllocsNoMore(200, base, f); ok {
		t.Errorf("AllocsNoMore(200, base, f) = %v, %v, true; want false: f allocates one a call more than base", a, b)
	}
}

// TestAllocsNoMoreRetriesNoiseInF: allocations of another goroutine
// that land in f's first measure are measured again.
func TestAllocsNoMoreRetriesNoiseInF(t *testing.T) {
	calls := 0
	f := func() {
		calls++
		if calls == 2 {
			for range 400 {
				sink = append(sink[:0], new([16]byte))
			}
		}
	}
	sink = make([]*[16]byte, 0, 1)
	if a, b, ok := AllocsNoMore(200, func() {}, f); !ok {
		t.Errorf("AllocsNoMore(200, base, f) = %v, %v, false; want true", a, b)
	}
}
