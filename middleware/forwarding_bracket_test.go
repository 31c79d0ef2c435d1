package middleware_test

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// proxyHeaders sets RemoteAddr as gorilla/handlers' ProxyHeaders does
// (proxy_headers.go, getIP; emulated here, gorilla/handlers is no
// dependency of ours). It takes, from the first line of the first of these
// headers present, X-Forwarded-For: the text before the first ", ";
// X-Real-IP: the whole line; Forwarded: the first run of characters other
// than "(;|, )" after a case-insensitive "for=", its double quotes
// trimmed. A for= node with a port keeps it, and in brackets when IPv6:
// for="[2001:db8::1]:4711" gives "[2001:db8::1]:4711", the very form
// net/http gives a peer; for="[2001:db8::1]" gives "[2001:db8::1]". The
// value is not checked to be an address.
func proxyHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var addr string
		if v := r.Header.Get("X-Forwarded-For"); v != "" {
			addr, _, _ = strings.Cut(v, ", ")
		} else if v := r.Header.Get("X-Real-IP"); v != "" {
			addr = v
		} else if v := r.Header.Get("Forwarded"); v != "" {
			addr = strings.Trim(gorillaFor(v), `"`)
		}
		if addr != "" {
			r.RemoteAddr = addr
		}
		next.ServeHTTP(w, r)
	})
}

// gorillaFor returns the value ProxyHeaders reads in a Forwarded line v:
// the first non-empty run of bytes other than '(', ';', '|', ',', ' ' and
// ')' that directly follows "for=" (in any case), or "".
func gorillaFor(v string) string {
	for i := 0; i+4 <= len(v); i++ {
		if !strings.EqualFold(v[i:i+4], "for=") {
			continue
		}
		j := i + 4
		for j < len(v) && !strings.ContainsRune("(;|, )", rune(v[j])) {
			j++
		}
		if j > i+4 {
			return v[i+4 : j]
		}
	}
	return ""
}

// TestForwardingAppliedUpstreamBracketedIPv6: an IPv6 client that a
// middleware further out took from a Forwarded field is left in RemoteAddr
// in the field's brackets, "[2001:db8::1]", with no port. The ip key reads
// it as the client (each client, in its own /64, its own count), so the header is no
// misconfiguration; it was reported before (netip.ParseAddr refuses the
// brackets), while the IPv4 client of the same field was not. A peer's
// "[v6]:port" is still checked: without the middleware further out the
// report comes. Through a real server and a real chi router.
func TestForwardingAppliedUpstreamBracketedIPv6(t *testing.T) {
	upstreamForwarding(t, proxyHeaders, "Forwarded", `for="[2001:db8:1::7]";proto=http`, `for="[2001:db8:2::8]";proto=http`)
}

// TestSkipPrefixesBracketedIPv6: SkipPrefixes reads a RemoteAddr with no
// port as the address it is (a middleware further out put it there), and
// so an IPv6 one in brackets too, as gorilla's ProxyHeaders leaves a
// Forwarded for="[fd00::5]": before, the internal IPv6 health checker was
// limited (429 on its second request) while its IPv4 twin, for=10.0.0.5,
// was skipped. An address outside the prefixes is still limited. Through
// a real chi router.
func TestSkipPrefixesBracketedIPv6(t *testing.T) {
	store, _ := newStore(t)
	skip := middleware.SkipPrefixes(netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8"))
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 1, time.Minute, remote)}, middleware.WithSkip(skip))
	r := chi.NewRouter()
	r.Use(proxyHeaders, m.Handler)
	r.Get("/", ok)
	for _, tc := range []struct {
		forwarded string
		second    int
	}{
		{"for=10.0.0.5", http.StatusOK},
		{`for="[fd00::5]"`, http.StatusOK},
		{`for="[2001:db8::5]"`, http.StatusTooManyRequests},
	} {
		for i, want := range []int{http.StatusOK, tc.second} {
			if w := serve(r, "GET", "/", "Forwarded", tc.forwarded); w.Code != want {
				t.Errorf("Forwarded %s, request %d: %d, want %d", tc.forwarded, i, w.Code, want)
			}
		}
	}
}
