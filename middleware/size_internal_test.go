package middleware

import (
	"testing"
	"unsafe"
)

// TestResultContextSizeClass guards the size of the one allocation a
// request makes in the middleware: with the 8-byte header the allocator
// puts in objects over 512 bytes that hold pointers, each request context
// must fit its malloc size class (704 bytes with one policy, 896 with one
// policy and long header values, then 1024, 1152 and 1280 with two, three
// and four policies); the next class costs every such request the
// difference to allocate, clear and collect. Each also fills its class,
// beyond the one below (prev), so that the figures the documentation
// states (package doc, WithoutContext, README: 704 bytes with one policy
// to 1,280 with four) are the sizes allocated, not bounds a smaller
// context has left behind.
func TestResultContextSizeClass(t *testing.T) {
	for _, c := range []struct {
		name              string
		size, prev, class uintptr
	}{
		{"narrowContext", unsafe.Sizeof(narrowContext{}), 640, 704},
		{"wideOneContext", unsafe.Sizeof(wideOneContext{}), 768, 896},
		{"wideTwoContext", unsafe.Sizeof(wideTwoContext{}), 896, 1024},
		{"wideThreeContext", unsafe.Sizeof(wideThreeContext{}), 1024, 1152},
		{"wideResultContext", unsafe.Sizeof(wideResultContext{}), 1152, 1280},
	} {
		if c.size+8 > c.class {
			t.Errorf("%s is %d bytes; want at most %d (the %d-byte size class, less the malloc header)", c.name, c.size, c.class-8, c.class)
		}
		if c.size+8 <= c.prev {
			t.Errorf("%s is %d bytes: it fits the %d-byte size class, not the %d bytes the documentation states", c.name, c.size, c.prev, c.class)
		}
	}
}
