package policy_test

import (
	"strings"
	"testing"
	"unicode"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigTabInsideAValueIsRefused: a tab character inside a YAML value
// (pasted from a table, say) was dropped by the YAML lexer from an
// unquoted value, so that the file loaded as something it does not say:
// "limit: 1<TAB>0" as limit 10, "header:X-Api<TAB>Key" as the header
// X-ApiKey, and "POST<TAB>/login" as "POST/login", refused with advice
// to write "/login" (dropping the method). YAML 1.2 readers keep the tab
// (a string "1\t0", a header name no request has). Inside a quoted value
// the lexer lost track of the line and the parser reported an unrelated
// error at a column past the line's end. Each is now an error at the
// value, naming the tab.
func TestConfigTabInsideAValueIsRefused(t *testing.T) {
	const head = "policies:\n  - name: a\n    limit: 10\n    window: 1s\n"
	for _, tc := range []struct {
		name, doc, at string
	}{
		{"unquoted integer", "policies:\n  - name: a\n    limit: 1\t0\n    window: 1s\n", "x.yaml:3:12"},
		{"unquoted header in a flow list", head + "    key: [ip, header:X-Api\tKey]\n", "x.yaml:5:15"},
		{"unquoted route in a block list", head + "    routes:\n      - POST\t/login\n", "x.yaml:6:9"},
		{"unquoted name", "policies:\n  - name: per\tip\n    limit: 10\n    window: 1s\n", "x.yaml:2:11"},
		{"double-quoted name", "policies:\n  - name: \"per\tip\"\n    limit: 10\n    window: 1s\n", "x.yaml:2:11"},
		{"double-quoted route in a flow list", head + "    routes: [\"POST\t/login\"]\n", "x.yaml:5:14"},
	} {
		_, err := policy.ParseConfig([]byte(tc.doc), "x.yaml")
		if err == nil {
			t.Errorf("%s: loaded; want an error naming the tab", tc.name)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.at+":") || !strings.Contains(msg, "tab") {
			t.Errorf("%s: error %q; want one at %s naming the tab", tc.name, msg, tc.at)
		}
		if strings.ContainsFunc(msg, unicode.IsControl) {
			t.Errorf("%s: error %q holds a control character", tc.name, msg)
		}
	}
}

// TestConfigTabAroundAValueIsBlank: a tab where YAML allows blanks (after
// the colon, before a comment, at the end of a line), a tab written as an
// escape in a double-quoted value ("POST\t/login", which WithRoutes reads
// as a method and a path) and a tab inside a single-quoted value, which
// the lexer keeps, stay valid.
func TestConfigTabAroundAValueIsBlank(t *testing.T) {
	for _, doc := range []string{
		"policies:\n  - name: a\n    limit:\t10\n    window: 1s\t# per second\n",
		"policies:\n  - name: a\t\n    limit: 10\n    window: 1s\n",
		"policies:\n  - name: a\n    limit: 10\n    window: 1s\n    routes: [\"POST\\t/login\"]\n",
		"policies:\n  - name: a # a\tcomment\n    limit: 10\n    window: 1s\n",
		"policies:\n  - name: a\n    limit: 10\n    window: 1s\n    routes: ['POST\t/login']\n",
	} {
		cfg, err := policy.ParseConfig([]byte(doc), "x.yaml")
		if err != nil {
			t.Errorf("%q: %v", doc, err)
			continue
		}
		if d := cfg.Definitions[0]; d.Name != "a" || d.Spec.Limit != 10 {
			t.Errorf("%q: loaded name %q, limit %d; want a, 10", doc, d.Name, d.Spec.Limit)
		}
		if d := cfg.Definitions[0]; len(d.Routes) > 0 && d.Routes[0] != "POST\t/login" {
			t.Errorf("%q: loaded route %q, want %q", doc, d.Routes[0], "POST\t/login")
		}
	}
}
