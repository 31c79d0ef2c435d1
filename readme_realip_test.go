package ratekeeper_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	chimw "github.com/go-chi/chi/v5/middleware"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestReadmeChiRealIP: the README tells a chi user to leave chi's
// middleware.RealIP out of a router whose limiter keys by keyfunc.IP():
// with it, a client that sends a new X-Forwarded-For with each request is
// never limited, and the forwarding check says nothing. Its replacement,
// ClientIPFromXFF with keyfunc.FromContext(middleware.GetClientIPAddr),
// reads the header from the proxies named only: a client's own header
// changes nothing, and two clients behind the proxy count apart.
func TestReadmeChiRealIP(t *testing.T) {
	readme := readmeText(t)
	for _, want := range []string{
		"Leave chi's `RealIP` middleware out of such a router",
		"`chimw.ClientIPFromXFF(\"10.0.0.0/8\")`",
		"`keyfunc.IP(keyfunc.FromContext(chimw.GetClientIPAddr))`",
		"`TestReadmeChiRealIP` runs both",
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README lacks %q", want)
		}
	}

	serve := func(h http.Handler, peer, xff string) int {
		req := httptest.NewRequest("GET", "/", nil)
		req.RemoteAddr = peer
		req.Header.Set("X-Forwarded-For", xff)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	router := func(ip keyfunc.Func, before func(http.Handler) http.Handler) http.Handler {
		_, store := clockedStore(t)
		m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.PerSecond("per-second", 2, ip))})
		r := chi.NewRouter()
		r.Use(before)
		r.Use(m.Handler)
		r.Get("/", hello)
		return r
	}

	t.Run("RealIP", func(t *testing.T) {
		log := captureDefaultLog(t)
		//lint:ignore SA1019 chi deprecates RealIP, but servers still install it: this is what the README warns of
		h := router(keyfunc.Must(keyfunc.IP()), chimw.RealIP)
		for i := range 10 {
			if code := serve(h, "192.0.2.1:41000", "203.0.113."+strconv.Itoa(i+1)); code != http.StatusOK {
				t.Fatalf("request %d with a new X-Forwarded-For: %d, want 200 (the client picks its key)", i, code)
			}
		}
		if out := log(); strings.Contains(out, "setup warning") {
			t.Errorf("the forwarding check warned behind RealIP; the README says it says nothing:\n%s", out)
		}
	})

	t.Run("ClientIPFromXFF", func(t *testing.T) {
		h := router(keyfunc.Must(keyfunc.IP(keyfunc.FromContext(chimw.GetClientIPAddr))), chimw.ClientIPFromXFF("10.0.0.0/8"))
		codes := func(peer string, xffs ...string) []int {
			var got []int
			for _, xff := range xffs {
				got = append(got, serve(h, peer, xff))
			}
			return got
		}
		// A client reaching the server directly: its own headers are ignored.
		if got := codes("192.0.2.1:41000", "203.0.113.1", "203.0.113.2", "203.0.113.3"); got[2] != http.StatusTooManyRequests {
			t.Errorf("a direct client's own X-Forwarded-For: %v, want the third refused 429", got)
		}
		// Two clients behind the proxy count apart.
		if got := codes("10.0.0.5:41000", "198.51.100.7", "198.51.100.7", "198.51.100.9"); got[0] != http.StatusOK || got[1] != http.StatusOK || got[2] != http.StatusOK {
			t.Errorf("two clients behind the proxy: %v, want all 200", got)
		}
	})
}
