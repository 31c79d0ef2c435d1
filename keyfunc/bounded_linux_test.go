//go:build linux

package keyfunc_test

import (
	"errors"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// guarded returns a string of hidden followed by tail whose first
// len(hidden) bytes cannot be read: they lie in pages mapped PROT_NONE, and
// touching any of them faults. tail, the string's last bytes, lies in
// readable pages that begin right after them. It is how a test proves that
// a parser looks at no more than the tail of a hostile header, whatever
// the header's size: a read past the bound is a fault, not a slower run.
func guarded(t *testing.T, hidden, tail string) string {
	t.Helper()
	page := os.Getpagesize()
	hiddenPages := (len(hidden) + page - 1) / page
	tailPages := (len(tail) + page - 1) / page
	if tailPages == 0 {
		tailPages = 1
	}
	mem, err := syscall.Mmap(-1, 0, (hiddenPages+tailPages)*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	boundary := hiddenPages * page
	start := boundary - len(hidden)
	copy(mem[start:], hidden)
	copy(mem[boundary:], tail)
	if err := syscall.Mprotect(mem[:boundary], syscall.PROT_NONE); err != nil {
		t.Fatalf("mprotect: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Munmap(mem) })
	return unsafe.String(&mem[start], len(hidden)+len(tail))
}

// keyNoFault runs f on r and turns a fault (a read of a guarded byte) into
// a test failure that says how far from the header's end it was.
func keyNoFault(t *testing.T, f keyfunc.Func, r *http.Request, header string) (key string, err error) {
	t.Helper()
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		if p := recover(); p != nil {
			if fe, ok := p.(interface{ Addr() uintptr }); ok {
				end := uintptr(unsafe.Pointer(unsafe.StringData(header))) + uintptr(len(header))
				t.Fatalf("read %d bytes from the end of the %d-byte header, past the readable tail: %v", end-fe.Addr(), len(header), p)
			}
			panic(p)
		}
	}()
	return f(r)
}

// padTo returns s preceded by spaces to n bytes.
func padTo(n int, s string) string { return strings.Repeat(" ", n-len(s)) + s }

// TestIP_HostileHeaderCostIsBounded: DefaultMaxHops's doc promises that
// no more than MaxHops entries are looked at, each through at most 513
// bytes (a comma and a 512-byte entry), whatever the header's size. Each
// header here holds a megabyte the walk must never touch, behind a tail
// of exactly what it may read; a read of one byte more faults. An earlier
// header line, a megabyte all unreadable, must not be read either.
func TestIP_HostileHeaderCostIsBounded(t *testing.T) {
	trusted := keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...)
	const hops = 4
	// 513 bytes each: a comma and an entry padded to 512 bytes.
	xffHop := "," + padTo(512, "10.0.0.9")
	xffClient := "," + padTo(512, "203.0.113.9")
	fwdHop := "," + padTo(512, `for="10.0.0.9";proto=https;x="a,b;c"`)
	const mib = 1 << 20
	tests := []struct {
		name   string
		f      keyfunc.Func
		header string
		hidden string
		tail   string
		want   string // "" for ErrNoClientIP
	}{
		{"XFF, trusted hops past MaxHops", mustIP(t, trusted, keyfunc.MaxHops(hops)), "X-Forwarded-For",
			strings.Repeat(xffHop, mib/len(xffHop)), strings.Repeat(xffHop, hops), ""},
		{"XFF, trusted hops past the default MaxHops", mustIP(t, trusted), "X-Forwarded-For",
			strings.Repeat(xffHop, mib/len(xffHop)), strings.Repeat(xffHop, keyfunc.DefaultMaxHops), ""},
		{"XFF, client at MaxHops", mustIP(t, trusted, keyfunc.MaxHops(hops)), "X-Forwarded-For",
			strings.Repeat(xffHop, mib/len(xffHop)), xffClient + strings.Repeat(xffHop, hops-1), "203.0.113.9"},
		{"XFF, TrustedHops(MaxHops)", mustIP(t, keyfunc.TrustedHops(hops), keyfunc.MaxHops(hops)), "X-Forwarded-For",
			strings.Repeat(xffHop, mib/len(xffHop)), xffClient + strings.Repeat(xffHop, hops-1), "203.0.113.9"},
		{"Forwarded, trusted elements past MaxHops", mustIP(t, trusted, keyfunc.FromForwarded(), keyfunc.MaxHops(hops)), "Forwarded",
			strings.Repeat(fwdHop, mib/len(fwdHop)), strings.Repeat(fwdHop, hops), ""},
		{"Forwarded, quotes only", mustIP(t, trusted, keyfunc.FromForwarded()), "Forwarded",
			strings.Repeat(`","`, mib/3), strings.Repeat(`"`, 513), ""},
		{"Forwarded, an open quote before the tail", mustIP(t, trusted, keyfunc.FromForwarded()), "Forwarded",
			`for="` + strings.Repeat(",", mib), strings.Repeat(`;"`, 256) + `"`, ""},
		{"XFF, one giant entry", mustIP(t, trusted), "X-Forwarded-For",
			strings.Repeat("9", mib), strings.Repeat("9", 513), ""},
		{"X-Real-IP, one giant value", mustIP(t, trusted, keyfunc.FromHeader("X-Real-IP")), "X-Real-IP",
			strings.Repeat("9", mib), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := guarded(t, tt.hidden, tt.tail)
			early := guarded(t, strings.Repeat("10.0.0.9,", mib/9), "")
			r := newReq("10.0.0.1:1")
			r.Header[tt.header] = []string{early, h}
			key, err := keyNoFault(t, tt.f, r, h)
			if tt.want != "" {
				if err != nil || key != tt.want {
					t.Fatalf("key = %q, %v; want %q", key, err, tt.want)
				}
				return
			}
			if !errors.Is(err, keyfunc.ErrNoClientIP) {
				t.Fatalf("key = %q, %v; want ErrNoClientIP", key, err)
			}
		})
	}
}

// TestIP_GuardedHeaderFaultsWhenRead checks the guard itself: a walk
// allowed one more entry than the readable tail holds does read the hidden
// part, and that read is caught as a fault, so the test above cannot pass
// by a guard that guards nothing.
func TestIP_GuardedHeaderFaultsWhenRead(t *testing.T) {
	g := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...), keyfunc.MaxHops(6))
	r := newReq("10.0.0.1:1")
	r.Header["X-Forwarded-For"] = []string{guarded(t, strings.Repeat("10.0.0.9,", 1<<17), strings.Repeat(","+padTo(512, "10.0.0.9"), 4))}
	var p any
	func() {
		old := debug.SetPanicOnFault(true)
		defer debug.SetPanicOnFault(old)
		defer func() { p = recover() }()
		_, _ = g(r)
	}()
	if _, ok := p.(interface{ Addr() uintptr }); !ok {
		t.Fatalf("MaxHops(6) over 4 readable entries: recovered %v; want a fault on the hidden part", p)
	}
}
