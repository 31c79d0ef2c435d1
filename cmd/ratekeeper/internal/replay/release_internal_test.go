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
// times, until the newest line read is a window past them.
func TestReleaseOrder(t *testing.T) {
	const doc = "policies:\n  - {name: p, limit: 1000, window: 1m}\n"
	for _, seed := range []uint64{1, 2, 3, 4} {
		rng := rand.New(rand.NewPCG(seed, seed))
		var in []logparse.Entry
		for i := range 3000 {
			// times on a coarse grid (ties), a few minutes back at most
			sec := i/4 - rng.IntN(8)
			if rng.IntN(50) == 0 {
				sec -= rng.IntN(200)
			}
			in = append(in, logparse.Entry{Time: t0.Add(time.Duration(sec) * time.Second), Addr: fmt.Sprintf("10.0.%d.%d", i/256, i%256), Method: "GET", Path: "/"})
		}
		e, err := New(parse(t, doc), Options{Reorder: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for i := range in {
			if err := e.Add(&in[i]); err != nil {
				t.Fatal(err)
			}
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
			release(last.Add(-5 * time.Second))
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
