package client

import (
	"slices"
	"testing"
	"time"
)

// TestLineInsert: a turn taken before joining the line goes after the
// turns no later than its own and before the requests without a turn, and
// the links stay consistent both ways.
func TestLineInsert(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	for _, tc := range []struct {
		line []int // turns in line, in seconds; -1 for a request without a turn
		in   int
		want []int
	}{
		{nil, 5, []int{5}},
		{[]int{1, 2}, 5, []int{1, 2, 5}},
		{[]int{3, 4}, 1, []int{1, 3, 4}},
		{[]int{1, 3}, 2, []int{1, 2, 3}},
		{[]int{1, 2}, 2, []int{1, 2, 2}},
		{[]int{1, 4, -1, -1}, 2, []int{1, 2, 4, -1, -1}},
		{[]int{-1}, 2, []int{2, -1}},
		{[]int{1, -1}, 7, []int{1, 7, -1}},
	} {
		var l line
		for _, s := range tc.line {
			tn := &turn{}
			if s >= 0 {
				tn.at = at(s)
			}
			l.pushBack(tn)
		}
		l.insert(&turn{at: at(tc.in)})
		var got, back []int
		for x := l.head; x != nil; x = x.next {
			s := -1
			if !x.at.IsZero() {
				s = int(x.at.Sub(t0) / time.Second)
			}
			got = append(got, s)
		}
		for x := l.tail; x != nil; x = x.prev {
			s := -1
			if !x.at.IsZero() {
				s = int(x.at.Sub(t0) / time.Second)
			}
			back = append([]int{s}, back...)
		}
		if !slices.Equal(got, tc.want) || !slices.Equal(back, tc.want) {
			t.Errorf("insert %d into %v: forward %v, backward %v, want %v", tc.in, tc.line, got, back, tc.want)
		}
	}
}
