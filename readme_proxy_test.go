package ratekeeper_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestReadmeQuickStartWarnsBehindProxy: the README's quick start, deployed
// as written behind a reverse proxy (keyfunc.IP() with no trusted proxy),
// keys every client by the proxy's address, so that all of them share one
// limit. It must say so, once, on slog.Default (it has neither a logger nor
// an error handler), naming the header it ignores, as a middleware built
// from a configuration file does; it said nothing.
func TestReadmeQuickStartWarnsBehindProxy(t *testing.T) {
	log := captureDefaultLog(t)

	_, store := clockedStore(t)
	h := readmeQuickStart(store, hello, hello)
	for i, client := range []string{"203.0.113.7", "198.51.100.9"} {
		req := httptest.NewRequest("GET", "/", nil)
		req.RemoteAddr = "10.0.0.5:41000" // the proxy
		req.Header.Set("X-Forwarded-For", client)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Fatalf("request %d: %d, want 200", i, w.Code)
		}
	}
	out := log()
	if n := strings.Count(out, "ratekeeper: setup warning"); n != 1 || !strings.Contains(out, "X-Forwarded-For") || !strings.Contains(out, "level=WARN") {
		t.Errorf("log behind a proxy: %d setup warnings naming X-Forwarded-For, want 1 at WARN; log:\n%s", n, out)
	}
}

// TestReadmeQuickStartNestedWarnsOnce: the README says that a middleware
// nested in another (the quick start's login in global) leaves the requests
// the outer one decided to the outer one's forwarding check, so that the
// quick start warns once, not twice, though both keys ignore the header:
// a forwarded POST /login, which both middlewares decide, then a GET.
func TestReadmeQuickStartNestedWarnsOnce(t *testing.T) {
	log := captureDefaultLog(t)

	_, store := clockedStore(t)
	h := readmeQuickStart(store, hello, hello)
	for i, path := range []string{"/login", "/"} {
		var req *http.Request
		if path == "/login" {
			req = httptest.NewRequest("POST", path, strings.NewReader("username=ann"))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		} else {
			req = httptest.NewRequest("GET", path, nil)
		}
		req.RemoteAddr = "10.0.0.5:41000" // the proxy
		req.Header.Set("X-Forwarded-For", "203.0.113.7")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Fatalf("request %d (%s): %d, want 200", i, path, w.Code)
		}
	}
	out := log()
	if n := strings.Count(out, "ratekeeper: setup warning"); n != 1 {
		t.Errorf("nested middlewares behind a proxy: %d setup warnings, want 1 (the outer one's); log:\n%s", n, out)
	}
}

// captureDefaultLog sends slog.Default's records, as text, to a buffer
// until the test ends (then the default is restored), and returns a
// function reading what was logged so far.
func captureDefaultLog(t *testing.T) func() string {
	var mu sync.Mutex
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return buf.String()
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
