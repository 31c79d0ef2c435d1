package algorithms

import "math/bits"

// keyTable holds the cell state of a table's keys in two flat arrays of
// slots, the keys' 64-bit hashes in one and their cells in the other (24
// bytes a slot), with no pointer for the garbage collector to scan and no
// separate index. Apart, a lookup reads only hashes, which change only when
// a key comes or goes, and a decision on a held key writes one 16-byte cell,
// which the heap's 16-byte alignment of the array keeps within one cache
// line: under parallel load, a CPU's lookup does not wait for the lines of
// the cells the other CPUs write, and its decision moves one line from the
// CPU that wrote it last, where a 24-byte slot straddled two lines one time
// in four.
//
// It is an open-addressing table with linear probing, kept sorted: the home
// slot of hash h is floor(h·cap / 2^64), which grows with h, and the entries
// lie in increasing order of hash, each at or after its home with no empty
// slot between the two (the ordered hash table of Amble and Knuth, which is
// Robin Hood hashing with ties broken by hash). So a lookup stops at the
// first hash not below the one sought, an insertion shifts the rest of its
// run up by one slot, a deletion shifts it back (no tombstones), and a
// rebuild at another capacity is one pass in order. There is no wrap-around:
// the arrays have a few slots beyond cap for the last runs, and a run that
// would go past their end makes the table grow.
//
// Hash 0 marks an empty slot; the store maps a key hash of 0 to 1 (two keys
// then share state with probability 2^-64, against n²/2^65 for any pair).
//
// The table grows by a quarter when it is 7/8 full, so between growths it
// is 70% to 87.5% full: 27 to 34 bytes per key. A sweep that leaves it less
// than a quarter full rebuilds it 70% full.
type keyTable struct {
	hs  []uint64 // 0: empty
	cs  []cell   // the cell of hs[i], zero where hs[i] is 0; len(cs) == len(hs)
	cap uint64   // homes are in [0, cap)
	n   int      // keys held
}

const minTableCap = 8

func newKeyTable() *keyTable {
	kt := &keyTable{}
	kt.rebuild(minTableCap)
	return kt
}

// slack returns how many slots past cap the arrays have.
func slack(capacity uint64) uint64 { return min(capacity/8, 32) + 2 }

func (kt *keyTable) home(h uint64) int {
	hi, _ := bits.Mul64(h, kt.cap)
	return int(hi)
}

// find returns the slot of h and true, or where h would be inserted and
// false (possibly len(kt.hs): no room).
func (kt *keyTable) find(h uint64) (int, bool) {
	s := kt.hs
	i := kt.home(h)
	for ; i < len(s); i++ {
		// Stop at an empty slot (e−1 wraps to the largest value) or at the
		// first hash not below h.
		if e := s[i]; e-1 >= h-1 {
			return i, e == h
		}
	}
	return i, false
}

// get returns the cell of h, or nil. The pointer is valid until the table
// next changes its keys.
func (kt *keyTable) get(h uint64) *cell {
	if i, ok := kt.find(h); ok {
		return &kt.cs[i]
	}
	return nil
}

// put inserts h, which must not be held, with state c.
func (kt *keyTable) put(h uint64, c cell) {
	if kt.n >= int(kt.cap-kt.cap/8) {
		kt.rebuild(kt.cap + max(kt.cap/4, minTableCap))
	}
	for {
		i, _ := kt.find(h)
		s := kt.hs
		j := i
		for j < len(s) && s[j] != 0 {
			j++
		}
		if j < len(s) {
			copy(s[i+1:j+1], s[i:j])
			copy(kt.cs[i+1:j+1], kt.cs[i:j])
			s[i], kt.cs[i] = h, c
			kt.n++
			return
		}
		// The run reaches the end of the array.
		kt.rebuild(kt.cap + max(kt.cap/4, minTableCap))
	}
}

// removeAt deletes the key in slot i, shifting back the entries after it
// that are not in their home slot.
func (kt *keyTable) removeAt(i int) {
	s := kt.hs
	j := i + 1
	for j < len(s) && s[j] != 0 && kt.home(s[j]) < j {
		j++
	}
	copy(s[i:j-1], s[i+1:j])
	copy(kt.cs[i:j-1], kt.cs[i+1:j])
	s[j-1], kt.cs[j-1] = 0, cell{}
	kt.n--
}

// remove deletes h if it is held.
func (kt *keyTable) remove(h uint64) {
	if i, ok := kt.find(h); ok {
		kt.removeAt(i)
	}
}

func (kt *keyTable) len() int { return kt.n }

// rebuild moves the entries to an array of capacity c (more if they do not fit).
func (kt *keyTable) rebuild(c uint64) {
	c = max(c, minTableCap)
	for {
		s := make([]uint64, c+slack(c))
		k := &keyTable{hs: s, cs: make([]cell, len(s)), cap: c, n: kt.n}
		next := 0
		ok := true
		for j, e := range kt.hs {
			if e == 0 {
				continue
			}
			i := max(k.home(e), next)
			if i >= len(s) {
				ok = false
				break
			}
			s[i], k.cs[i] = e, kt.cs[j]
			next = i + 1
		}
		if ok {
			*kt = *k
			return
		}
		c += max(c/4, minTableCap)
	}
}

// shrink rebuilds the table smaller when it is less than a quarter full.
func (kt *keyTable) shrink() {
	if kt.cap > minTableCap && uint64(kt.n) < kt.cap/4 {
		kt.rebuild(uint64(kt.n) * 10 / 7)
	}
}
