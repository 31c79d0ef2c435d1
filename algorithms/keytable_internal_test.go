package algorithms

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// checkKeyTable fails t unless kt holds exactly want, in order, each entry
// at or after its home with no empty slot in between.
func checkKeyTable(t *testing.T, kt *keyTable, want map[uint64]cell) {
	t.Helper()
	if kt.len() != len(want) {
		t.Fatalf("len() = %d, want %d", kt.len(), len(want))
	}
	var prev uint64
	seen, lastEmpty := 0, -1
	if len(kt.cs) != len(kt.hs) {
		t.Fatalf("%d cells for %d hashes", len(kt.cs), len(kt.hs))
	}
	for i, h := range kt.hs {
		if h == 0 {
			if kt.cs[i] != (cell{}) {
				t.Fatalf("slot %d: empty, with cell %v", i, kt.cs[i])
			}
			lastEmpty = i
			continue
		}
		seen++
		if h <= prev {
			t.Fatalf("slot %d: hash %#x after %#x: not sorted", i, h, prev)
		}
		prev = h
		home := kt.home(h)
		if home > i {
			t.Fatalf("slot %d: hash %#x before its home %d", i, h, home)
		}
		if lastEmpty >= home {
			t.Fatalf("slot %d: empty slot %d between hash %#x and its home %d", i, lastEmpty, h, home)
		}
		if c, ok := want[h]; !ok || c != kt.cs[i] {
			t.Fatalf("slot %d: hash %#x cell %v, want %v (held %v)", i, h, kt.cs[i], c, ok)
		}
	}
	if seen != len(want) {
		t.Fatalf("%d entries in the slots, want %d", seen, len(want))
	}
	for h, c := range want {
		if p := kt.get(h); p == nil || *p != c {
			t.Fatalf("get(%#x) = %v, want %v", h, p, c)
		}
	}
}

func TestKeyTableAgainstMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, keyBits := range []uint{64, 10} { // also hashes crowded into few homes
		kt := newKeyTable()
		want := map[uint64]cell{}
		key := func() uint64 {
			h := r.Uint64() >> (64 - keyBits) << (64 - keyBits)
			return max(h, 1)
		}
		for step := range 30_000 {
			switch op := r.IntN(10); {
			case op < 6:
				h := key()
				c := cell{t: int64(step), x: uint32(op)}
				if p := kt.get(h); p != nil {
					*p = c
				} else {
					kt.put(h, c)
				}
				want[h] = c
			case op < 9:
				h := key()
				kt.remove(h)
				delete(want, h)
			case r.IntN(5) > 0:
			default:
				// A sweep: drop a random share of the entries while scanning.
				drop := r.IntN(4)
				for i := 0; i < len(kt.hs); {
					if h := kt.hs[i]; h != 0 && int(h>>60)%4 < drop {
						delete(want, h)
						kt.removeAt(i)
						continue
					}
					i++
				}
				kt.shrink()
			}
			if step%499 == 0 {
				checkKeyTable(t, kt, want)
			}
		}
		checkKeyTable(t, kt, want)
	}
}

func TestKeyTableGrowsAndShrinks(t *testing.T) {
	kt := newKeyTable()
	want := map[uint64]cell{}
	r := rand.New(rand.NewPCG(3, 4))
	for range 100_000 {
		h := max(r.Uint64(), 1)
		kt.put(h, cell{t: 1})
		want[h] = cell{t: 1}
	}
	checkKeyTable(t, kt, want)
	if load := float64(kt.n) / float64(kt.cap); load < 0.69 || load > 0.875 {
		t.Errorf("load %.3f after growing, want 0.7 to 0.875", load)
	}
	for h := range want {
		if h%16 != 0 {
			kt.remove(h)
			delete(want, h)
		}
	}
	kt.shrink()
	checkKeyTable(t, kt, want)
	if load := float64(kt.n) / float64(kt.cap); load < 0.6 || load > 0.75 {
		t.Errorf("load %.3f after shrinking, want about 0.7", load)
	}
}

// TestKeyTableLoadAfterEveryPut: the table keeps the fill its doc states
// after every insertion, not only at the end: at most 7/8 full, about 70%
// full right after a growth by a quarter (less when a run reaching the end
// of the array made it grow first; more by rounding in small tables), and
// always with slots past cap for the last runs.
func TestKeyTableLoadAfterEveryPut(t *testing.T) {
	kt := newKeyTable()
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 50_000 {
		before := kt.cap
		kt.put(max(r.Uint64(), 1), cell{t: 1})
		if kt.n > int(kt.cap-kt.cap/8) {
			t.Fatalf("after %d puts: %d keys in capacity %d, more than 7/8 full", i+1, kt.n, kt.cap)
		}
		if len(kt.hs) <= int(kt.cap) {
			t.Fatalf("after %d puts: %d slots for capacity %d, none past it", i+1, len(kt.hs), kt.cap)
		}
		if kt.cap != before && kt.cap > 64 {
			if load := float64(kt.n) / float64(kt.cap); load < 0.55 || load > 0.75 {
				t.Fatalf("after %d puts: grew from %d to %d, load %.3f, want about 0.7", i+1, before, kt.cap, load)
			}
		}
	}
}

// TestKeyTableCellInOneCacheLine: a decision on a held key writes its cell,
// and the cell lies within one 64-byte cache line, so that under parallel
// load a decision moves one line from the CPU that last wrote it, not two
// (BenchmarkKeysParallel in benchmarks/algorithms). Checked through get,
// for tables of every size from the smallest through several growths.
func TestKeyTableCellInOneCacheLine(t *testing.T) {
	const line = 64
	kt := newKeyTable()
	r := rand.New(rand.NewPCG(7, 8))
	var hs []uint64
	for i := range 5_000 {
		h := max(r.Uint64(), 1)
		kt.put(h, cell{t: 1})
		hs = append(hs, h)
		if i%97 != 0 && i != 4_999 {
			continue
		}
		for _, h := range hs {
			p := kt.get(h)
			if p == nil {
				t.Fatalf("hash %#x not held", h)
			}
			at := uintptr(unsafe.Pointer(p))
			if at/line != (at+unsafe.Sizeof(*p)-1)/line {
				t.Fatalf("after %d puts (capacity %d): the cell of hash %#x spans bytes %d to %d of a cache line",
					i+1, kt.cap, h, at%line, at%line+unsafe.Sizeof(*p)-1)
			}
		}
	}
}
