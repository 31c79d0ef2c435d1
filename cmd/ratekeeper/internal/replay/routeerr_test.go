package replay

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestRouteErrorsNameTheirSource: a route the replay cannot resolve (two
// spellings of one ServeMux route, a bad chi pattern) is reported with
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
    routes: ["GET /items/{id}"]
  - name: b
    limit: 5
    window: 1s
    routes: ["GET /items/{name}"]
`)
	plain := parse(t, "policies:\n  - {name: a, limit: 1, window: 1s}\n")
	for _, tc := range []struct {
		name   string
		err    error
		source string
	}{
		{"two policies", newErr(t, conflicting, nil), `policy "b" (line 6)`},
		{"--route against --route", newErr(t, plain, []string{"/a/{x}", "/a/{y}"}), `--route "/a/{y}"`},
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
