package algorithms

// cells is the store's former key index, replaced by keyTable (smaller and
// faster); nothing but its own test uses it now, and both can go.
//
// cells holds the cell state of a table's keys: an index from key hash to a
// slot of a slab. A decision on a held key then costs one map lookup and an
// update in place, and the map holds no pointers for the garbage collector
// to scan. Freed slots are reused; the slab is compacted when a sweep leaves
// it mostly free.
type cells struct {
	index map[uint64]int32
	slab  []cell
	free  []int32
}

func newCells() *cells { return &cells{index: make(map[uint64]int32)} }

// get returns the slot of key h, or nil.
func (cs *cells) get(h uint64) *cell {
	if i, ok := cs.index[h]; ok {
		return &cs.slab[i]
	}
	return nil
}

// put stores c as the state of key h, which must not be held yet.
func (cs *cells) put(h uint64, c cell) {
	var i int32
	if n := len(cs.free); n > 0 {
		i = cs.free[n-1]
		cs.free = cs.free[:n-1]
		cs.slab[i] = c
	} else {
		i = int32(len(cs.slab))
		cs.slab = append(cs.slab, c)
	}
	cs.index[h] = i
}

// remove forgets key h.
func (cs *cells) remove(h uint64) {
	if i, ok := cs.index[h]; ok {
		delete(cs.index, h)
		cs.slab[i] = cell{}
		cs.free = append(cs.free, i)
	}
}

func (cs *cells) len() int { return len(cs.index) }

// compact moves the live slots to the front of a new slab when most slots
// are free, so memory taken by a flood of keys is returned after it.
func (cs *cells) compact() {
	if len(cs.free) < 1024 || len(cs.free) < len(cs.slab)/2 {
		return
	}
	slab := make([]cell, 0, len(cs.index))
	for h, i := range cs.index {
		cs.index[h] = int32(len(slab))
		slab = append(slab, cs.slab[i])
	}
	cs.slab, cs.free = slab, nil
}
