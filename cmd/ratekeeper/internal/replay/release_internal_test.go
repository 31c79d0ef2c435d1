package replay

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestReleaseOrder replays lines far out of order, with many equal times,
// and checks the order in which they are decided against a model of the
// reorder window: a line older than the last one decided is decided at
// once (late); the others are held in time order, log order among equal
// times, until the newest line read is a window past them. The later
// runs hold more lines than a block of the queue (queueChunk), so that it
// grows, drains and reuses its blocks across their boundaries.
func TestReleaseOrder(t *testing.T) {
	const doc = "policies:\n  - {name: p, limit: 1000, window: 1m}\n"
	for _, run := range []struct {
		seed      uint64
		lines     int
		perSecond int           // lines per second of the grid
		reorder   time.Duration // the window
		far       int           // how far back, in seconds, a line out of order may lie
		gapEvery  int           // lines between hour-long gaps (the window drains); 0: none
		jitter    int           // one line in jitter lies up to 8s back (1: every line)
	}{
		{1, 3000, 4, 5 * time.Second, 200, 0, 1},
		{2, 3000, 4, 5 * time.Second, 200, 0, 1},
		{3, 3000, 4, 5 * time.Second, 200, 0, 1},
		{4, 3000, 4, 5 * time.Second, 200, 0, 1},
		// About 7200 and 19200 lines held, most of them in the queue
		// (in time order): two and five blocks.
		{5, 30000, 8, 15 * time.Minute, 2400, 0, 10},
		{6, 60000, 16, 20 * time.Minute, 3000, 0, 10},
		// The window fills past a block and drains at each gap.
		{7, 40000, 8, 15 * time.Minute, 2400, 9000, 10},
	} {
		seed := run.seed
		if max := run.perSecond * int(run.reorder/time.Second); max <= queueChunk && run.lines > 3000 {
			t.Fatalf("seed %d holds at most %d lines, not more than a block", seed, max)
		}
		rng := rand.New(rand.NewPCG(seed, seed))
		var in []logparse.Entry
		for i := range run.lines {
			// times on a coarse grid (ties), a few minutes back at most
			sec := i / run.perSecond
			if rng.IntN(run.jitter) == 0 {
				sec -= rng.IntN(8)
			}
			if run.gapEvery > 0 {
				sec += i / run.gapEvery * 3600
			}
			if rng.IntN(50) == 0 {
				sec -= rng.IntN(run.far)
			}
			in = append(in, logparse.Entry{Time: t0.Add(time.Duration(sec) * time.Second), Addr: fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255), Method: "GET", Path: "/"})
		}
		e, err := New(parse(t, doc), Options{Reorder: run.reorder})
		if err != nil {
			t.Fatal(err)
		}
		blocks := 0 // the most blocks the queue had
		for i := range in {
			if err := e.Add(&in[i]); err != nil {
				t.Fatal(err)
			}
			blocks = max(blocks, len(e.pending.blocks))
		}
		if run.lines > 3000 && blocks < 2 {
			t.Fatalf("seed %d: the queue had %d blocks at most, want several", seed, blocks)
		}
		if err := e.flush(); err != nil {
			t.Fatal(err)
		}
		var got []string // the lines' keys in the order decided
		for _, ev := range e.pols[0].events {
			name := e.pols[0].names[ev.key]
			got = append(got, name[strings.LastIndexByte(name, ':')+1:])
		}

		// The model: a list kept sorted by insertion.
		var want []string
		var pending []int
		var last, released time.Time
		var late int64
		release := func(until time.Time) {
			for len(pending) > 0 && !in[pending[0]].Time.After(until) {
				released = in[pending[0]].Time
				want = append(want, in[pending[0]].Addr)
				pending = pending[1:]
			}
		}
		for i, en := range in {
			if en.Time.After(last) {
				last = en.Time
			}
			if en.Time.Before(released) {
				late++
				want = append(want, en.Addr)
				continue
			}
			j := len(pending)
			for j > 0 && in[pending[j-1]].Time.After(en.Time) {
				j--
			}
			pending = slices.Insert(pending, j, i)
			release(last.Add(-run.reorder))
		}
		release(last)
		if late == 0 || e.late != late {
			t.Errorf("seed %d: late %d, model %d (want some)", seed, e.late, late)
		}
		if len(got) != len(want) {
			t.Fatalf("seed %d: %d lines decided, want %d", seed, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("seed %d: line %d decided is %s, want %s", seed, i, got[i], want[i])
			}
		}
	}
}
