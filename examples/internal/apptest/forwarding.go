package apptest

import (
	"bytes"
	"log"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// CheckBehindProxy runs the handler newHandler builds as if deployed
// behind a reverse proxy at 10.0.0.5, which the example's client-IP key
// does not trust: every client then has the proxy's address, and all share
// one limit. The example must say so in its log (the standard logger, which
// log/slog's default handler also writes to) once, naming the header and
// the proxy, over two requests of two clients.
func CheckBehindProxy(t *testing.T, newHandler func(algorithms.Store) (http.Handler, error)) {
	t.Helper()
	var mu sync.Mutex
	var buf bytes.Buffer
	out, flags := log.Writer(), log.Flags()
	log.SetOutput(lockedWriter{&mu, &buf})
	t.Cleanup(func() { log.SetOutput(out); log.SetFlags(flags) })

	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	h, err := newHandler(store)
	if err != nil {
		t.Fatal(err)
	}
	for i, client := range []string{"203.0.113.7", "198.51.100.9"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "10.0.0.5:41000"
		r.Header.Set("X-Forwarded-For", client)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("request %d behind the proxy: %d, want 200", i, w.Code)
		}
	}
	mu.Lock()
	got := buf.String()
	mu.Unlock()
	if n := strings.Count(got, "carries X-Forwarded-For"); n != 1 || !strings.Contains(got, "10.0.0.5") {
		t.Errorf("behind a proxy the key ignores: %d warnings naming X-Forwarded-For and 10.0.0.5, want 1; log:\n%s", n, got)
	}
}

// lockedWriter serializes writes to w under mu.
type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Proxies are the trusted proxies CheckTrustedProxies gives the example.
var Proxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}

// CheckTrustedProxies runs the handler newHandler builds with Proxies as
// its trusted proxies (the example's -trusted-proxies): two clients behind
// a proxy at 10.0.0.5 get a limit each, read from its X-Forwarded-For; a
// client reaching the server directly is keyed by its own address whatever
// X-Forwarded-For it sends; a request from the proxy without the header
// is answered 400; and the log says nothing of a forwarding header ignored
// (the forwarding check is given the proxies too).
func CheckTrustedProxies(t *testing.T, newHandler func(algorithms.Store) (http.Handler, error)) {
	t.Helper()
	var mu sync.Mutex
	var buf bytes.Buffer
	out, flags := log.Writer(), log.Flags()
	log.SetOutput(lockedWriter{&mu, &buf})
	t.Cleanup(func() { log.SetOutput(out); log.SetFlags(flags) })

	store, err := algorithms.NewMemoryStore(algorithms.WithClock(algotest.NewClock(time.Unix(1_700_000_040, 0))))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	h, err := newHandler(store)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, peer, xff, want string }{
		{"client 1 behind the proxy", "10.0.0.5:41000", "203.0.113.7", `"per-second";r=9;t=2, "per-minute";r=99;t=120`},
		{"client 1 again", "10.0.0.5:41000", "203.0.113.7", `"per-second";r=8;t=2, "per-minute";r=98;t=90`},
		{"client 2 behind the proxy: a limit of its own", "10.0.0.5:41000", "198.51.100.9", `"per-second";r=9;t=2, "per-minute";r=99;t=120`},
		{"a direct client naming client 1: its own address", "192.0.2.44:50000", "203.0.113.7", `"per-second";r=9;t=2, "per-minute";r=99;t=120`},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.peer
		r.Header.Set("X-Forwarded-For", c.xff)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if got := w.Header().Get("RateLimit"); w.Code != http.StatusOK || got != c.want {
			t.Errorf("%s: %d, RateLimit %q; want 200, %q", c.name, w.Code, got, c.want)
		}
	}
	// The proxy's own request, without the header (a load balancer's
	// health check), names no client: 400, never the proxy's bucket
	// shared by all.
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.0.0.5:41000"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusBadRequest || w.Header().Get("Content-Type") != "application/problem+json" {
		t.Errorf("a request from the proxy without X-Forwarded-For: %d %q, want 400 application/problem+json", w.Code, w.Header().Get("Content-Type"))
	}
	mu.Lock()
	got := buf.String()
	mu.Unlock()
	if got != "" {
		t.Errorf("behind the trusted proxies, the log says:\n%s\nwant nothing", got)
	}
}
