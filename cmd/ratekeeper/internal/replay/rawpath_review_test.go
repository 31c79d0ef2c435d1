package replay

import (
	"net/http"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestReplayRoutesEscapedPathAsServer: a logged path whose escapes are
// those Go writes itself ("/items/caf%C3%A9", "%20") reaches the
// application's router as net/http parses it: r.URL.Path decoded and
// RawPath empty, so chi routes on the decoded path. The replay set RawPath
// to the logged path whenever it held a '%', so chi routed on the escapes:
// under "/items/{slug:[^0-9]+}" the replay found no route for café
// ("%C3%A9" has digits) and the policy never applied, where the
// middleware rejected. A path escaped otherwise ("%c3%a9", lower case)
// keeps its RawPath both ways, and chi routes on it.
func TestReplayRoutesEscapedPathAsServer(t *testing.T) {
	const doc = "policies:\n  - {name: a, limit: 2, window: 10s, routes: [\"/items/{slug:[^0-9]+}\"]}\n"
	var entries []logparse.Entry
	for i := range 12 {
		path := []string{"/items/caf%C3%A9", "/items/caf%c3%a9", "/items/caf%C3%A9%20au%20lait"}[i%3]
		entries = append(entries, logparse.Entry{Time: t0.Add(time.Duration(i) * time.Second), Addr: "192.0.2.1", Method: "GET", Path: path, Status: 200})
	}
	router := func(h http.Handler, routes []string) http.Handler {
		r := chi.NewRouter()
		for _, p := range routes {
			r.Handle(p, h)
		}
		return r
	}
	chiPattern := func(h http.Handler) func(*http.Request) string { return policy.ChiPattern(h.(chi.Router)) }
	agreeWithMiddleware(t, doc, entries, router, chiPattern)
}
