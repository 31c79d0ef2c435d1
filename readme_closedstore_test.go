package ratekeeper_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestReadmeQuickStartStoreClosedTooEarly: the README's quick start is "the
// body of your main", whose defer closes the store when main returns. A new
// user who puts it in a function that builds and returns the router (as
// readmeQuickStartStore does here with the README's lines) closes the store
// before the first request: the middleware fails open on every request,
// with no header, and must say so on slog.Default (it has neither a logger
// nor an observer), once, as it says that a failing store lifts the limits.
// It said nothing: every limit was gone, unseen.
func TestReadmeQuickStartStoreClosedTooEarly(t *testing.T) {
	log := captureDefaultLog(t)

	var h http.Handler
	readmeQuickStartStore(func(store algorithms.Store) { h = readmeQuickStart(store, hello, hello) })
	for i := range 12 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		if w.Code != http.StatusOK || w.Header().Get("RateLimit") != "" {
			t.Fatalf("request %d: %d, RateLimit %q; want 200 without a header (fail open)", i, w.Code, w.Header().Get("RateLimit"))
		}
	}
	out := log()
	if n := strings.Count(out, "ratekeeper: store closed"); n != 1 || !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "per-second") {
		t.Errorf("log of 12 requests to a closed store: %d records saying \"ratekeeper: store closed\", want 1 at ERROR naming the policies; log:\n%s", n, out)
	}
}
