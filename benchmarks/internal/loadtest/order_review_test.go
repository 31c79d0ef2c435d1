package loadtest

import (
	"fmt"
	"slices"
	"testing"
)

// TestOverheadOrderBalanced: the overhead rounds ran the scenarios in a
// plain rotation (round r started at scenario r), so each scenario always
// came right after the same one: ours (memory, 1 policy) always after the
// no-limiter run, httprate always after the Redis run (after four stacked
// policies without Redis), inheriting its garbage and whatever else it
// left. Over a full cycle of rounds (n, or 2n for an odd number of
// scenarios) every scenario must run in every place equally often and
// follow every other equally often (a Williams design).
func TestOverheadOrderBalanced(t *testing.T) {
	for n := 1; n <= 8; n++ {
		cycle := n
		if n%2 == 1 {
			cycle = 2 * n
		}
		place := make([][]int, n) // place[s][p]: rounds s ran p-th
		follows := map[[2]int]int{}
		for r := range cycle {
			o := overheadOrder(n, r)
			if s := slices.Sorted(slices.Values(o)); !slices.Equal(s, seq(n)) {
				t.Fatalf("n=%d round %d: order %v is not a permutation of 0..%d", n, r, o, n-1)
			}
			for p, s := range o {
				if place[s] == nil {
					place[s] = make([]int, n)
				}
				place[s][p]++
				if p > 0 {
					follows[[2]int{o[p-1], s}]++
				}
			}
		}
		for s := range n {
			for p, c := range place[s] {
				if c != cycle/n {
					t.Errorf("n=%d: over %d rounds scenario %d ran in place %d %d times, want %d", n, cycle, s, p, c, cycle/n)
				}
			}
			for a := range n {
				if a == s {
					continue
				}
				if c := follows[[2]int{a, s}]; c != cycle/n {
					t.Errorf("n=%d: over %d rounds scenario %d ran right after %d %d times, want %d", n, cycle, s, a, c, cycle/n)
				}
			}
		}
	}
	// The full run's 5 rounds, with and without the Redis scenario: no
	// scenario runs twice in one place, nor after the same one every time.
	for _, n := range []int{5, 6} {
		places := make([]map[int]bool, n)
		preds := make([]map[int]bool, n)
		for s := range n {
			places[s], preds[s] = map[int]bool{}, map[int]bool{}
		}
		for r := range 5 {
			o := overheadOrder(n, r)
			for p, s := range o {
				places[s][p] = true
				if p > 0 {
					preds[s][o[p-1]] = true
				} else {
					preds[s][-1] = true
				}
			}
		}
		for s := range n {
			if len(places[s]) != 5 || len(preds[s]) < 2 {
				t.Errorf("n=%d, 5 rounds: scenario %d ran in places %v, after %v; want 5 places and more than one predecessor", n, s, places[s], preds[s])
			}
		}
	}
}

// TestMeasureRoundsSettlesBeforeEach: no measurement may start on the
// garbage of the one before it: the heap is settled (a collection)
// before each, whichever scenario came before.
func TestMeasureRoundsSettlesBeforeEach(t *testing.T) {
	var log []string
	settle := func() { log = append(log, "settle") }
	err := measureRounds(3, 2, settle, func(i int) error {
		log = append(log, fmt.Sprint(i))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for r := range 2 {
		for _, i := range overheadOrder(3, r) {
			want = append(want, "settle", fmt.Sprint(i))
		}
	}
	if !slices.Equal(log, want) {
		t.Errorf("measureRounds(3 scenarios, 2 rounds) did %v, want %v", log, want)
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
