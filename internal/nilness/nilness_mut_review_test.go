package nilness_test

import (
	"testing"
	"unsafe"

	"github.com/ratekeeper/ratekeeper/internal/nilness"
)

// queue is a channel type with a method that works on a nil channel.
type queue chan int

func (q queue) Len() int { return len(q) }

// TestIsChanAndUnsafePointer: a nil channel is not reported (a method on
// it can work), like a nil map or slice; a nil unsafe.Pointer is, being
// a pointer.
func TestIsChanAndUnsafePointer(t *testing.T) {
	var (
		nilQueue queue
		asLen    interface{ Len() int } = nilQueue
		x        int
	)
	for _, c := range []struct {
		name string
		v    any
		want bool
	}{
		{"nil channel in an interface (its Len works)", asLen, false},
		{"nil unsafe.Pointer", unsafe.Pointer(nil), true},
		{"unsafe.Pointer", unsafe.Pointer(&x), false},
	} {
		if got := nilness.Is(c.v); got != c.want {
			t.Errorf("%s: Is = %v, want %v", c.name, got, c.want)
		}
	}
	if asLen.Len() != 0 {
		t.Errorf("Len of a nil queue = %d, want 0", asLen.Len())
	}
}
