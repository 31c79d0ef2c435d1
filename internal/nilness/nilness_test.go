package nilness_test

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/internal/nilness"
)

type stringer func() string

func (f stringer) String() string { return f() }

func TestIs(t *testing.T) {
	var (
		nilReader  *strings.Reader
		nilFunc    stringer
		nilMap     map[string]int
		nilSlice   []byte
		asReader   io.Reader    = nilReader
		asStringer fmt.Stringer = nilFunc
		live       io.Reader    = strings.NewReader("x")
		liveFunc   fmt.Stringer = stringer(func() string { return "x" })
	)
	for _, c := range []struct {
		name string
		v    any
		want bool
	}{
		{"nil interface", nil, true},
		{"nil pointer in an interface", asReader, true},
		{"nil function in an interface", asStringer, true},
		{"pointer", live, false},
		{"function", liveFunc, false},
		{"nil map (a method on it can work)", nilMap, false},
		{"nil slice", nilSlice, false},
		{"zero struct", struct{}{}, false},
		{"zero int", 0, false},
	} {
		if got := nilness.Is(c.v); got != c.want {
			t.Errorf("%s: Is = %v, want %v", c.name, got, c.want)
		}
	}
}

// say tells what a constructor taking an io.Reader sees.
func say(r io.Reader) {
	fmt.Println(r == nil, nilness.Is(r))
}

func ExampleIs() {
	var r *strings.Reader // never assigned
	say(r)
	say(nil)
	say(strings.NewReader("x"))
	// Output:
	// false true
	// true true
	// false false
}
