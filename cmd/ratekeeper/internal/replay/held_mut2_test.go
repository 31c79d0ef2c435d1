package replay

import (
	"testing"
	"time"
)

// TestLineQueueBlocks: the queue grows a block of queueChunk lines at a
// time, each allocated once (never grown by copying) or reused: the block
// a drained queue gives back is the next one it fills, so that lines
// passing through the queue cost no allocation; and its list of blocks
// keeps none past its end (where a block drained before the spare one
// would stay reachable).
func TestLineQueueBlocks(t *testing.T) {
	line := held{seq: 1, loc: time.UTC, text: "x"}
	var q lineQueue
	for i := range 3 * queueChunk {
		q.push(line)
		if want := i/queueChunk + 1; len(q.blocks) != want {
			t.Fatalf("%d lines in %d blocks, want %d", i+1, len(q.blocks), want)
		}
	}
	for range 3 * queueChunk {
		q.pop()
	}
	if !q.empty() {
		t.Fatal("not empty after draining")
	}
	for i, b := range q.blocks[:cap(q.blocks)] {
		if b != nil {
			t.Errorf("slot %d of the drained queue's blocks still holds a block", i)
		}
	}
	// Three blocks' worth through the queue, a block and a half held at a
	// time: each block is the spare one, given back by the last drain.
	cycle := func() {
		for range 3 {
			for range queueChunk {
				q.push(line)
			}
			for range queueChunk {
				q.pop()
			}
		}
	}
	for range queueChunk / 2 {
		q.push(line)
	}
	cycle()
	if allocs := testing.AllocsPerRun(10, cycle); allocs != 0 {
		t.Errorf("%v allocations a cycle of three blocks' worth of lines, want 0", allocs)
	}
	// A fresh queue allocates each block once, and the list of blocks.
	fill := func() {
		var q lineQueue
		for range 2 * queueChunk {
			q.push(line)
		}
	}
	if allocs := testing.AllocsPerRun(10, fill); allocs > 4 {
		t.Errorf("%v allocations to fill two blocks, want 2 blocks and the list of them", allocs)
	}
}
