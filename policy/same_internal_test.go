package policy

import "testing"

// holder is a comparable type whose interface field may hold a value ==
// cannot compare, as a body or router put back by value may.
type holder struct{ v any }

type sliceHolder struct{ s []int }

// TestSameNeverPanics: same tells values apart by == where == works, and
// reports false, without a panic, where it would panic: two values of an
// incomparable type, and two of a comparable type whose interface field
// holds an incomparable value (a check of the type alone lets == panic
// there).
func TestSameNeverPanics(t *testing.T) {
	p := &holder{1}
	for _, tc := range []struct {
		name string
		a, b any
		want bool
	}{
		{"nil, nil", nil, nil, true},
		{"nil, value", nil, p, false},
		{"one pointer", p, p, true},
		{"two pointers", p, &holder{1}, false},
		{"equal comparable values", holder{1}, holder{1}, true},
		{"unequal comparable values", holder{1}, holder{2}, false},
		{"incomparable type", sliceHolder{[]int{1}}, sliceHolder{[]int{1}}, false},
		{"comparable type holding a slice", holder{[]int{1}}, holder{[]int{1}}, false},
		{"comparable type, the other holding a slice", holder{1}, holder{[]int{1}}, false},
		{"types differ", holder{1}, struct{ v any }{1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := same(tc.a, tc.b); got != tc.want {
				t.Errorf("same(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
		})
	}
}
