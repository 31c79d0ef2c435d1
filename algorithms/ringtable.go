package algorithms

import "slices"

// ringTable holds the sliding_buckets state of a table's keys with no
// pointer per key: a keyTable whose cell for a key gives its newest
// sub-window (t), the sum of its ring (x) and the index of its ring (y)
// in rows, one flat array of rings. A decision reads the hashes, the key's
// 16-byte cell and the one line of its ring it counts in, where a map of
// pointers to rings read a map group, the ring's header and its counts,
// and made the garbage collector scan a pointer per key.
//
// The ring of index r is rows[r·B : (r+1)·B], its key's hash owners[r].
// Rings are dense: removing a key moves the last ring into its place
// (its key found through owners), so rows holds exactly the keys' rings.
//
// A slidingBuckets loaded from the table (load) reads and writes its
// ring's counts in place; its last and sum are copies, written back by
// store. Its counts are valid until the table next gains or loses a key.
type ringTable struct {
	kt     *keyTable
	b      int
	rows   []uint32
	owners []uint64
}

func newRingTable(buckets int64) *ringTable {
	return &ringTable{kt: newKeyTable(), b: int(buckets)}
}

func (rt *ringTable) len() int { return rt.kt.len() }

// ring returns the counts of ring r.
func (rt *ringTable) ring(r uint32) []uint32 {
	i := int(r) * rt.b
	return rt.rows[i : i+rt.b : i+rt.b]
}

// load returns the state of the key in slot i of rt.kt.
func (rt *ringTable) load(i int) slidingBuckets {
	c := &rt.kt.cs[i]
	return slidingBuckets{last: c.t, sum: int64(c.x), at: mod(c.t, int64(rt.b)), counts: rt.ring(c.y)}
}

// store writes back s, loaded from slot i (its counts are the ring's own).
// The sum fits in 32 bits: a request is counted only when the sum stays
// within the limit it is judged at, its Spec's or a check's own, lower or
// higher ([Check.Limit]), at most MaxLimit < 2^32; so is each bucket.
func (rt *ringTable) store(i int, s *slidingBuckets) {
	c := &rt.kt.cs[i]
	c.t, c.x = s.last, uint32(s.sum)
}

// insert adds h, which must not be held, with an empty ring whose newest
// sub-window is j, and returns its slot.
func (rt *ringTable) insert(h uint64, j int64) int {
	r := len(rt.owners)
	rt.rows = slices.Grow(rt.rows, rt.b)[:len(rt.rows)+rt.b]
	clear(rt.ring(uint32(r)))
	rt.owners = append(rt.owners, h)
	rt.kt.put(h, cell{t: j, y: uint32(r)})
	i, _ := rt.kt.find(h)
	return i
}

// removeAt deletes the key in slot i of rt.kt and its ring.
func (rt *ringTable) removeAt(i int) {
	r := rt.kt.cs[i].y
	rt.kt.removeAt(i)
	last := uint32(len(rt.owners) - 1)
	if r != last {
		copy(rt.ring(r), rt.ring(last))
		h := rt.owners[last]
		rt.owners[r] = h
		j, _ := rt.kt.find(h)
		rt.kt.cs[j].y = r
	}
	rt.rows = rt.rows[:int(last)*rt.b]
	rt.owners = rt.owners[:last]
}

// shrink gives memory back when the table is less than a quarter full.
func (rt *ringTable) shrink() {
	rt.kt.shrink()
	if cap(rt.owners) > 4*len(rt.owners) && cap(rt.owners) > 64 {
		rt.rows, rt.owners = slices.Clone(rt.rows), slices.Clone(rt.owners)
	}
}

// zeroRing is the counts of every fresh ring (read only).
var zeroRing [MaxBuckets]uint32

// freshRing returns the ring of a key never seen, at instant t, to decide
// on: its counts, all 0, are shared and must not be written (commit
// inserts the key with a ring of its own).
func freshRing(p *params, t int64) slidingBuckets {
	j := floorDiv(t, p.sub)
	return slidingBuckets{last: j, at: mod(j, p.buckets), counts: zeroRing[:p.buckets:p.buckets]}
}
