package policy_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigCRLFErrorsWhereLF: a YAML file saved with CRLF line endings
// (a Windows editor) is reported as the same file with LF endings is,
// every error on its own line: the YAML lexer counted the line break
// after each comment twice, so that every line below a comment was
// reported one line too far down per comment above it ("# c\r\n" then a
// limit of 0 on line 3 was reported on line 4), and a double-quoted value
// over two lines was not folded into one ("/a\nb", not "/a b").
func TestConfigCRLFErrorsWhereLF(t *testing.T) {
	for _, doc := range []string{
		"# c\npolicies:\n  - {name: a, limit: 0, window: 1s}\n",
		"policies: # c\n  # d\n  # e\n  - {name: a, limit: 0, window: 1s}\n",
		"policies:\n  - name: a # the name\n    limit: 0 # c\n    window: 1s\n    # more\n    burst: 2\n",
		"policies:\n  - name: a\n    limit: 1\n    window: |\n      1s\n    # c\n    burst: 2\n",
		"# c\npolicies:\n  - name: a\n    limit: 1\n    window: 1s\n    routes: [\"/caf\\udce9\"]\n",
		"# c\nversion: 2\n\n# d\n\npolicies:\n  - name: \"a b\"\n    limit: 1\n    window: 1sec\n    key: [ip, ip]\n",
		"# c\npolicies:\n  - name: a\n    limit: 1\n    window: 1s\n  key: user\n",
		"# c\npolicies:\n  - name: a\n    limit: 1\n    window: 1s\n---\npolicies: []\n",
		// A quoted value over two lines is folded into one, "/a b".
		"policies:\n  - name: a\n    limit: 1\n    window: 1s\n    routes:\n      - \"/a\n        b\"\n",
	} {
		lf := crlfErrors(doc)
		if len(lf) == 0 {
			t.Fatalf("%q loads; want errors", doc)
		}
		crlf := strings.ReplaceAll(doc, "\n", "\r\n")
		if got := crlfErrors(crlf); fmt.Sprint(got) != fmt.Sprint(lf) {
			t.Errorf("ParseConfig(%q) = %q\nwant, as with LF, %q", crlf, got, lf)
		}
	}
}

// crlfErrors returns the errors of ParseConfig(doc), each as its text.
func crlfErrors(doc string) []string {
	_, err := policy.ParseConfig([]byte(doc), "c.yaml")
	var out []string
	for _, e := range policy.ConfigErrors(err) {
		out = append(out, e.Error())
	}
	return out
}
