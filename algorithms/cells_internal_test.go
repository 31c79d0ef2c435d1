package algorithms

import "testing"

func TestCellsReuseAndCompact(t *testing.T) {
	cs := newCells()
	for h := uint64(0); h < 5000; h++ {
		cs.put(h, cell{t: int64(h)})
	}
	for h := uint64(0); h < 4000; h++ {
		cs.remove(h)
	}
	if cs.get(10) != nil {
		t.Fatal("get(10) after remove = non-nil")
	}
	// A freed slot is reused before the slab grows.
	cs.put(1_000_000, cell{t: 7})
	if len(cs.slab) != 5000 {
		t.Errorf("len(slab) = %d after reusing a slot, want 5000", len(cs.slab))
	}
	cs.compact()
	if len(cs.slab) != 1001 || len(cs.free) != 0 {
		t.Errorf("after compact: len(slab) = %d, len(free) = %d; want 1001, 0", len(cs.slab), len(cs.free))
	}
	for h := uint64(4000); h < 5000; h++ {
		if c := cs.get(h); c == nil || c.t != int64(h) {
			t.Fatalf("get(%d) after compact = %v, want t=%d", h, c, h)
		}
	}
	if c := cs.get(1_000_000); c == nil || c.t != 7 {
		t.Errorf("get(1000000) after compact = %v", c)
	}
	if cs.len() != 1001 {
		t.Errorf("len() = %d, want 1001", cs.len())
	}
}
