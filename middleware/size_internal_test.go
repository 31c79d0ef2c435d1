package middleware

import (
	"testing"
	"unsafe"
)

// TestResultContextSizeClass guards the size of the one allocation a
// request makes in the middleware: with the 8-byte header the allocator
// puts in objects over 512 bytes that hold pointers, it must fit the
// 1152-byte size class; the next one (1280) costs every request 128 more
// bytes to allocate, clear and collect.
func TestResultContextSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(resultContext{}); n+8 > 1152 {
		t.Fatalf("resultContext is %d bytes; want at most 1144 (the 1152-byte size class, less the malloc header)", n)
	}
	if n := unsafe.Sizeof(wideResultContext{}); n+8 > 1280 {
		t.Fatalf("wideResultContext is %d bytes; want at most 1272 (the 1280-byte size class, less the malloc header)", n)
	}
}
