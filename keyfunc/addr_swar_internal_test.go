package keyfunc

import (
	"net/netip"
	"strings"
	"testing"
)

// canonicalIPv4Port is what parseIPv4Port and ipv4PortLen must accept,
// said with netip: an IPv4 address written as its String, ':', and a port
// of 1 to 5 characters that ParseAddrPort reads. It returns the length of
// the address's text.
func canonicalIPv4Port(s string) (netip.Addr, int, bool) {
	ap, err := netip.ParseAddrPort(s)
	if err != nil || !ap.Addr().Is4() {
		return netip.Addr{}, 0, false
	}
	a := ap.Addr().String()
	if !strings.HasPrefix(s, a+":") || len(s)-len(a)-1 > 5 {
		return netip.Addr{}, 0, false
	}
	return ap.Addr(), len(a), true
}

// checkIPv4Port fails t when parseIPv4Port or ipv4PortLen disagree with
// canonicalIPv4Port on s.
func checkIPv4Port(t *testing.T, s string) {
	t.Helper()
	wa, wn, wok := canonicalIPv4Port(s)
	if a, n, ok := parseIPv4Port(s); ok != wok || n != wn || a != wa {
		t.Fatalf("parseIPv4Port(%q) = %v, %d, %v; want %v, %d, %v", s, a, n, ok, wa, wn, wok)
	}
	if n, ok := ipv4PortLen(s); ok != wok || n != wn {
		t.Fatalf("ipv4PortLen(%q) = %d, %v; want %d, %v", s, n, ok, wn, wok)
	}
}

// TestIPv4PortEveryLayout checks parseIPv4Port and ipv4PortLen against
// netip on every layout of four fields of 0 to 4 digits and a port of 0
// to 7 (ipv4PortLen finds the separators eight bytes at a time, so each
// length of s, 9 to 21 and around, and each place of a separator within
// and across the eight-byte loads, is a case), with the fields' values at
// the edges (0, leading zeros, 255, 256, 299, 300, 999) and the port's
// (65535, 65536, leading zeros); and, in each layout, every byte replaced
// by each of the bytes next to the classes the loads tell apart ('/',
// ':', ';', '.', '0', '9', a zero byte, and digits and separators with
// their high bit set) or cut off.
func TestIPv4PortEveryLayout(t *testing.T) {
	// The first value of each length is valid where one is: it stands
	// for its length while another part takes its values.
	fieldsOf := [][]string{
		{""},
		{"7", "0"},
		{"10", "00", "07", "99"},
		{"255", "000", "099", "100", "199", "256", "299", "300", "999"},
		{"1000", "0255", "2550"},
	}
	portsOf := [][]string{
		{""},
		{"8", "0"},
		{"80", "00"},
		{"443"},
		{"8080", "0080"},
		{"65535", "00000", "00080", "65536", "65539", "65599", "66000", "70000", "99999"},
		{"000080", "065535"},
		{"0000080"},
	}
	bad := []byte{'/', ':', ';', '.', '0', '9', 0, '0' | 0x80, '9' | 0x80, '.' | 0x80, ':' | 0x80, '-', '+', ' ', 'a'}
	var lens [5]int
	var build func(k int)
	var b []byte
	build = func(k int) {
		if k < 5 {
			for lens[k] = range 8 {
				if k < 4 && lens[k] > 4 {
					break
				}
				build(k + 1)
			}
			return
		}
		// Each field and the port take each of their values in turn,
		// the others their first.
		for part := range 5 {
			vals := portsOf[lens[4]]
			if part < 4 {
				vals = fieldsOf[lens[part]]
			}
			for _, v := range vals {
				b = b[:0]
				for f := range 4 {
					if f == part {
						b = append(b, v...)
					} else {
						b = append(b, fieldsOf[lens[f]][0]...)
					}
					b = append(b, ".:"[f/3])
				}
				if part == 4 {
					b = append(b, v...)
				} else {
					b = append(b, portsOf[lens[4]][0]...)
				}
				s := string(b)
				checkIPv4Port(t, s)
				if part != 0 || v != vals[0] {
					continue
				}
				for i := range s {
					checkIPv4Port(t, s[:i])
					for _, c := range bad {
						checkIPv4Port(t, s[:i]+string([]byte{c})+s[i+1:])
					}
				}
			}
		}
	}
	build(0)
}
