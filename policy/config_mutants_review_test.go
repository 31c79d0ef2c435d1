package policy_test

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigTabInBlockScalarIsKept: a tab inside a block scalar (| or >)
// is text the lexer keeps as written, so checkTabs lets it through: a
// route written as a literal or folded block holding "POST<TAB>/login"
// loads as that route (a method and a path, as WithRoutes reads it), not
// as an error about a tab.
func TestConfigTabInBlockScalarIsKept(t *testing.T) {
	const head = "policies:\n  - name: a\n    limit: 10\n    window: 1s\n    routes:\n"
	for _, block := range []string{"|-", ">-"} {
		doc := head + "      - " + block + "\n        POST\t/login\n"
		cfg, err := policy.ParseConfig([]byte(doc), "x.yaml")
		if err != nil {
			t.Errorf("block %s: %v; want the route loaded with its tab", block, err)
			continue
		}
		if r := cfg.Definitions[0].Routes; len(r) != 1 || r[0] != "POST\t/login" {
			t.Errorf("block %s: routes %q; want [%q]", block, r, "POST\t/login")
		}
	}
}

// TestConfigTabAdviceFitsTheQuoting: the error for a tab says what to
// write instead, and that depends on the value's quoting: an unquoted
// value is told to write a space (or to quote the value and write \t); a
// double-quoted one, where \t is the escape, to write \t.
func TestConfigTabAdviceFitsTheQuoting(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want, not string
	}{
		{"unquoted", "policies:\n  - name: per\tip\n    limit: 10\n    window: 1s\n", "write a space", "write it as \\t"},
		{"double-quoted", "policies:\n  - name: \"per\tip\"\n    limit: 10\n    window: 1s\n", "write it as \\t", "write a space"},
	} {
		_, err := policy.ParseConfig([]byte(tc.doc), "x.yaml")
		if err == nil {
			t.Errorf("%s: loaded; want an error naming the tab", tc.name)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, tc.want) || strings.Contains(msg, tc.not) {
			t.Errorf("%s: error %q; want the advice %q (not %q)", tc.name, msg, tc.want, tc.not)
		}
	}
}

// TestLoadDirectoryNamesItOnce: Load given a directory reports
// "policy: DIR: is a directory", naming the path once, not
// "DIR: read DIR: is a directory".
func TestLoadDirectoryNamesItOnce(t *testing.T) {
	dir := t.TempDir()
	_, err := policy.Load(dir)
	if err == nil {
		t.Fatalf("Load(%s): no error; want one saying it is a directory", dir)
	}
	msg := err.Error()
	if n := strings.Count(msg, dir); n != 1 || !strings.HasSuffix(msg, dir+": is a directory") {
		t.Errorf("Load(dir): %q (path %d times); want %q", msg, n, "policy: "+dir+": is a directory")
	}
}
