package algorithms

import "testing"

// TestResetShrinksTheKeyTable: keys forgotten by Reset give back their
// slots' memory as a sweep's do: a key table left less than a quarter full
// is rebuilt smaller: 10 keys left of 1000 hold at most 4 homes each.
func TestResetShrinksTheKeyTable(t *testing.T) {
	tb := &table{cells: newKeyTable()}
	want := map[uint64]cell{}
	for i := range uint64(1000) {
		h := (i + 1) * 0x9e3779b97f4a7c15
		tb.cells.put(h, cell{t: int64(i)})
		want[h] = cell{t: int64(i)}
	}
	for h := range want {
		if len(want) == 10 {
			break
		}
		if !tb.forget(h) {
			t.Fatalf("forget(%#x): not held", h)
		}
		delete(want, h)
	}
	if tb.cells.cap > 40 {
		t.Errorf("a key table holding 10 keys after forgetting 990 has %d homes, want at most 40", tb.cells.cap)
	}
	checkKeyTable(t, tb.cells, want)
}
