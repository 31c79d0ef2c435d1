package main

import (
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// TestTrafficMix checks the traffic the package documentation describes:
// the shares of the three kinds of client; n/40 ordinary clients (at
// least 10) making about 28 requests each, half of them always sending a
// user name and the others never, every seventh with an IPv6 address; four
// scrapers bunched in the last tenth of each minute, at 0.22·n/4 requests
// each over the span; a bot posting to /login under user0 to user4, one
// name per burst, in turn.
func TestTrafficMix(t *testing.T) {
	for _, tc := range []struct {
		n    int
		span time.Duration
	}{
		{2000, time.Hour}, // the defaults
		{40000, 30 * time.Minute},
	} {
		t0 := time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)
		g := &gen{rng: rand.New(rand.NewPCG(3, 3^0x5eed)), t0: t0, span: tc.span, format: "combined"}
		reqs := g.requests(tc.n)
		var bot, heavy, ordinary int
		scrapers := map[string]int{}
		clients := map[netip.Prefix]map[string]int{} // client -> user -> requests
		botUsers := map[int]map[string]bool{}        // burst -> users
		for _, r := range reqs {
			at := r.t.Sub(t0)
			switch {
			case r.ip == "203.0.113.66":
				bot++
				if r.method != "POST" || r.path != "/login" {
					t.Errorf("n=%d: a bot request %s %s, want POST /login", tc.n, r.method, r.path)
				}
				burst := int(at / (5 * time.Minute))
				if botUsers[burst] == nil {
					botUsers[burst] = map[string]bool{}
				}
				botUsers[burst][r.user] = true
			case strings.HasPrefix(r.ip, "198.51.100."):
				heavy++
				scrapers[r.ip]++
				if in := at % time.Minute; in < 54*time.Second {
					t.Errorf("n=%d: a scraper request %s into its minute, want in the last tenth (54s on)", tc.n, in)
				}
			default:
				ordinary++
				a := netip.MustParseAddr(r.ip)
				bits := 32
				if a.Is6() {
					bits = 64
				}
				p := netip.PrefixFrom(a, bits).Masked()
				if clients[p] == nil {
					clients[p] = map[string]int{}
				}
				clients[p][r.user]++
			}
		}
		share := func(what string, got int, want float64) {
			t.Helper()
			if f := float64(got) / float64(tc.n); f < want-0.02 || f > want+0.02 {
				t.Errorf("n=%d: %s %.3f of the requests, want about %.2f", tc.n, what, f, want)
			}
		}
		share("bot", bot, 0.08)
		share("scrapers", heavy, 0.22)
		share("ordinary clients", ordinary, 0.70)
		if len(scrapers) != 4 {
			t.Errorf("n=%d: %d scrapers, want 4", tc.n, len(scrapers))
		}
		perMinute := float64(heavy) / 4 / tc.span.Minutes()
		if want := 0.22 * float64(tc.n) / 4 / tc.span.Minutes(); perMinute < want*0.8 || perMinute > want*1.2 {
			t.Errorf("n=%d: a scraper makes %.1f requests a minute, want about %.1f", tc.n, perMinute, want)
		}
		if most := max(10, tc.n/40); len(clients) > most || len(clients) < most*9/10 {
			t.Errorf("n=%d: %d ordinary clients, want about %d", tc.n, len(clients), most)
		}
		if each := float64(ordinary) / float64(len(clients)); each < 24 || each > 32 {
			t.Errorf("n=%d: %.1f requests per ordinary client, want about 28", tc.n, each)
		}
		named, v6 := 0, 0
		for p, users := range clients {
			if p.Addr().Is6() {
				v6++
			}
			if len(users) != 1 {
				t.Errorf("n=%d: client %s sent users %v, want always the same (a name, or none)", tc.n, p, users)
			}
			if users["-"] == 0 {
				named++
			}
		}
		if f := float64(named) / float64(len(clients)); f < 0.4 || f > 0.6 {
			t.Errorf("n=%d: %.2f of the ordinary clients send a user name, want about half", tc.n, f)
		}
		if f := float64(v6) / float64(len(clients)); f < 0.1 || f > 0.2 {
			t.Errorf("n=%d: %.2f of the ordinary clients have an IPv6 address, want about 1/7", tc.n, f)
		}
		for burst, users := range botUsers {
			want := "user" + string(rune('0'+burst%5))
			if len(users) != 1 || !users[want] {
				t.Errorf("n=%d: the bot's burst %d tried users %v, want %s alone", tc.n, burst, users, want)
			}
		}
		t.Logf("n=%d over %s: bot %d, scrapers %d (%.1f a minute each), ordinary %d from %d clients", tc.n, tc.span, bot, heavy, perMinute, ordinary, len(clients))
	}
}

// TestRequestsWithinSpanFractionalStart: a -start with a fraction of a
// millisecond still has every request within -span of it. The times were
// truncated to the millisecond as absolute times, so a request in the
// span's first half millisecond fell before -start.
func TestRequestsWithinSpanFractionalStart(t *testing.T) {
	t0 := time.Date(2024, 3, 10, 12, 0, 0, 500_000, time.UTC)
	for _, span := range []time.Duration{time.Nanosecond, time.Millisecond, time.Hour} {
		g := &gen{rng: rand.New(rand.NewPCG(1, 1^0x5eed)), t0: t0, span: span, format: "json"}
		early := 0
		for _, r := range g.requests(3000) {
			if r.t.Before(t0) || r.t.After(t0.Add(span)) {
				early++
			}
		}
		if early > 0 {
			t.Errorf("-start %s -span %s: %d of 3000 requests outside the span", t0.Format(time.RFC3339Nano), span, early)
		}
	}
}
