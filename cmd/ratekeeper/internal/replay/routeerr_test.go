package replay

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestRouteErrorsNameTheirSource: a route the replay cannot resolve (two
// ServeMux routes neither of which is more specific, a bad chi pattern)
// is reported with
// where it comes from, the policy (and its line) or --route, on one line,
// without ServeMux's "registered at" (the replay's own source file and
// line, which say nothing to the user). The error named the pattern only:
// a "valid" configuration (ratekeeper check) with one route spelled
// /items/{id} in one policy and /items/{name} in another failed the replay
// with "replay: route "GET /items/{name}": pattern ... (registered at
// .../engine.go:397) conflicts with ...", over two lines.
func TestRouteErrorsNameTheirSource(t *testing.T) {
	conflicting := parse(t, `policies:
  - name: a
    limit: 5
    window: 1s
    routes: ["GET /items/{id}/edit"]
  - name: b
    limit: 5
    window: 1s
    routes: ["GET /items/new/{tab}"]
`)
	plain := parse(t, "policies:\n  - {name: a, limit: 1, window: 1s}\n")
	for _, tc := range []struct {
		name   string
		err    error
		source string
	}{
		{"two policies", newErr(t, conflicting, nil), `policy "b" (line 6)`},
		{"--route against --route", newErr(t, plain, []string{"/a/{x}/b", "/a/c/{y}"}), `--route "/a/c/{y}"`},
		{"bad --route", newErr(t, plain, []string{"/a/{"}), `--route "/a/{"`},
	} {
		msg := tc.err.Error()
		if !strings.Contains(msg, tc.source) || strings.Contains(msg, "registered at") || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q; want it to name %s, on one line, without \"registered at\"", tc.name, msg, tc.source)
		}
	}
}

func newErr(t *testing.T, cfg *policy.Config, routes []string) error {
	t.Helper()
	_, err := New(cfg, Options{Routes: routes})
	if err == nil {
		t.Fatalf("New accepted routes %v and the config's", routes)
	}
	return err
}

// TestRouteSpelledTwiceWarns: one ServeMux route spelled two ways in two
// policies (/items/{id}, /items/{name}) passes ratekeeper check, yet
// failed the replay (exit 2, "conflicts with"). An application's router
// registers one spelling, and the policy routed by the other never
// applies: the replay now does the same, and says so.
func TestRouteSpelledTwiceWarns(t *testing.T) {
	cfg := parse(t, `policies:
  - {name: a, limit: 5, window: 1s, routes: ["GET /items/{id}"]}
  - {name: b, limit: 5, window: 1s, routes: ["GET /items/{name}"]}
  - {name: c, limit: 5, window: 1s, routes: ["/files/{path...}", "/files/{rest...}"]}
`)
	e, err := New(cfg, Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ws := e.Warnings()
	if len(ws) != 2 || !strings.Contains(ws[0], `policy "b" (line 3), route "GET /items/{name}"`) || !strings.Contains(ws[0], `"GET /items/{id}"`) ||
		!strings.Contains(ws[1], `"/files/{rest...}"`) || !strings.Contains(ws[1], `"/files/{path...}"`) {
		t.Errorf("warnings %q, want one per second spelling, naming both", ws)
	}
	if got := WildcardShape("GET /a/{x}/{y...}/{$}"); got != "GET /a/{}/{...}/{$}" {
		t.Errorf("WildcardShape = %q", got)
	}
}
