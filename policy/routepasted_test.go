package policy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestRoutePastedRunes: a route whose path holds, outside a chi regexp's
// braces, a rune that prints as nothing or as a blank (a zero-width space,
// a non-breaking space, a direction override) or a typographic double
// quote is refused, in code and in a file (quoted, which YAML and JSON
// keep as written): pasted from a page or a chat, it looks like /login
// where it is printed and matches no request a client sends for /login,
// so its policy would never apply. A path of other non-ASCII letters
// (/café), and such a rune inside a chi regexp, are routes as before.
func TestRoutePastedRunes(t *testing.T) {
	key := keyfunc.Must(keyfunc.IP())
	for _, tc := range []struct {
		route, want string
	}{
		{"/login\u200b", "U+200B"},
		{"POST /a\u00a0b", "U+00A0"},
		{"/x\u202e", "U+202E"},
		{"/\ufefflogin", "U+FEFF"},
		{"/login\u201d", "typographic quote (U+201D)"},
		{"\u201c/login", ""}, // not a path at all: refused for that
		{"/café", "-"},
		{"/u/{id:[\u200b]+}", "-"},
	} {
		_, err := policy.Per("p", 1, time.Second, key, policy.WithRoutes(tc.route))
		switch {
		case tc.want == "-" && err != nil:
			t.Errorf("WithRoutes(%q): %v; want the route", tc.route, err)
		case tc.want == "-":
		case err == nil:
			t.Errorf("WithRoutes(%q) = nil error; want it refused", tc.route)
		case !strings.Contains(err.Error(), tc.want):
			t.Errorf("WithRoutes(%q): %v; want it to name %s", tc.route, err, tc.want)
		}
	}
	// In a file, the same: the JSON escape and the YAML one are the rune.
	for _, doc := range []string{
		"policies:\n  - {name: a, limit: 1, window: 1s, routes: [\"/login\\u200b\"]}\n",
		`{"policies": [{"name": "a", "limit": 1, "window": "1s", "routes": ["/login\u00a0"]}]}`,
	} {
		_, err := policy.ParseConfig([]byte(doc), map[bool]string{true: "f.json", false: "f.yaml"}[strings.HasPrefix(doc, "{")])
		errs := policy.ConfigErrors(err)
		if len(errs) != 1 || errs[0].Field != "policies[0].routes" || !strings.Contains(errs[0].Reason, "prints as nothing or as a blank") {
			t.Errorf("ParseConfig(%q) = %v; want one error at policies[0].routes naming the invisible rune", doc, err)
		}
	}
}

// wantRouteRefused checks that each of policies, fields of a policy
// written as in a file, is refused at policies[0].routes with a reason
// holding want: the route's own, not the file's text checks'.
func wantRouteRefused(t *testing.T, want string, policies ...string) {
	t.Helper()
	const head = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	for _, fields := range policies {
		_, err := policy.ParseConfig([]byte(head+"    "+fields), "c.yaml")
		errs := policy.ConfigErrors(err)
		if len(errs) != 1 || errs[0].Field != "policies[0].routes" || !strings.Contains(errs[0].Reason, want) {
			t.Errorf("%s: %v; want one error at policies[0].routes saying %q", fields, err, want)
		}
	}
}
