package apptest

import (
	"bytes"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
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
