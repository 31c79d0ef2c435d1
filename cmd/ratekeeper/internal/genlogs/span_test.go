package main

import (
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"
)

// TestRequestsWithinSpan: every request falls within -span of -start,
// whatever the span's length. The scrapers' requests, bunched in the last
// tenth of a minute, were placed a whole minute after the start of the
// span's last (partial) minute: "-span 10s" wrote requests up to 59 s
// after the start, "-span 90s" up to 119 s.
func TestRequestsWithinSpan(t *testing.T) {
	t0 := time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, span := range []time.Duration{10 * time.Second, 90 * time.Second, 150 * time.Second, 10 * time.Minute, time.Hour} {
		g := &gen{rng: rand.New(rand.NewPCG(1, 1^0x5eed)), t0: t0, span: span, format: "combined"}
		var late int
		var latest time.Time
		for _, r := range g.requests(3000) {
			if r.t.Before(t0) || r.t.After(t0.Add(span)) {
				late++
				if r.t.After(latest) {
					latest = r.t
				}
			}
		}
		if late > 0 {
			t.Errorf("-span %s: %d of 3000 requests outside it, the latest %s after the start", span, late, latest.Sub(t0))
		}
	}
}

// TestClientAddrValid: every ordinary client's address is a valid IP
// address of its own (its /64 for IPv6, whose interface ID is random),
// IPv6 for every seventh client and IPv4 for the others, however many
// clients there are (a client per 40 lines: 140000 of them for -n
// 5600000). Client 63500's was 192.0.256.1 and client 65541's
// 2001:db8:10005::…, which logparse reads as malformed lines.
func TestClientAddrValid(t *testing.T) {
	g := &gen{rng: rand.New(rand.NewPCG(7, 7^0x5eed))}
	seen := map[netip.Prefix]int{}
	for c := range 140000 {
		a, err := netip.ParseAddr(g.clientAddr(c))
		if err != nil {
			t.Fatalf("client %d: %v", c, err)
		}
		if a.Is6() != (c%7 == 0) {
			t.Fatalf("client %d: %s; want IPv6 for every seventh client only", c, a)
		}
		p := netip.PrefixFrom(a, a.BitLen())
		if a.Is6() {
			p, _ = a.Prefix(64)
		}
		if d, ok := seen[p]; ok {
			t.Fatalf("clients %d and %d share %s", d, c, p)
		}
		seen[p] = c
	}
}
