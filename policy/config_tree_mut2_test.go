package policy_test

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigDocumentAfterEndMarker: an end marker ("...") closes a
// document, so content after it begins the second, and a file of three
// documents is refused at that one, the first line of the second
// document, not at the header of the third.
func TestConfigDocumentAfterEndMarker(t *testing.T) {
	const a = "policies:\n  - {name: a, limit: 1, window: 1s}\n"
	const b = "policies:\n  - {name: b, limit: 2, window: 1s}\n"
	doc := a + "...\n" + b + "---\n" + a
	_, err := policy.ParseConfig([]byte(doc), "docs.yaml")
	errs := policy.ConfigErrors(err)
	if len(errs) != 1 || !strings.Contains(errs[0].Reason, "more than one YAML document") || errs[0].Line != 4 {
		t.Errorf("ParseConfig(%q) = %v; want one error at line 4: more than one YAML document", doc, err)
	}
}

// TestConfigAliasOfScalarsWithinBound: an alias counts each scalar its
// anchor holds as one node, whatever its type: a list of 100 nulls,
// booleans, integers, floats, strings or block literals, aliased 150
// times, stands for about 15,000 nodes, within the bound of 20,000, and
// is not refused as too large (whatever the schema makes of the fields).
func TestConfigAliasOfScalarsWithinBound(t *testing.T) {
	const n, aliased = 100, 150
	aliases := "    fallback: [" + strings.TrimSuffix(strings.Repeat("*a, ", aliased), ", ") + "]\n"
	head := "policies:\n  - name: p\n    limit: 1\n    window: 1s\n"
	flow := func(s string) string {
		return "    key: &a [" + strings.TrimSuffix(strings.Repeat(s+", ", n), ", ") + "]\n"
	}
	for _, tc := range []struct{ name, anchor string }{
		{"nulls", flow("~")},
		{"booleans", flow("true")},
		{"integers", flow("7")},
		{"floats", flow("1.5")},
		{"strings", flow("ip")},
		{"block literals", "    key: &a\n" + strings.Repeat("      - |\n        ip\n", n)},
	} {
		_, err := policy.ParseConfig([]byte(head+tc.anchor+aliases), "scalars.yaml")
		for _, ce := range policy.ConfigErrors(err) {
			if strings.Contains(ce.Reason, "too large") {
				t.Errorf("%s: %d aliases of %d: %v; want it within the bound", tc.name, aliased, n, ce)
			}
		}
	}
}

// TestConfigJSONPositionsAfterLeadingSpace: the lines and columns of a
// JSON configuration's errors count every byte from the start of the
// file, blank lines and spaces before the top-level value included.
func TestConfigJSONPositionsAfterLeadingSpace(t *testing.T) {
	for _, tc := range []struct {
		doc       string
		line, col int
	}{
		{`{"policies": 5}`, 1, 14},
		{"\n\n" + `{"policies": 5}`, 3, 14},
		{"   " + `{"policies": 5}`, 1, 17},
		{"\n  " + `{"policies": 5}`, 2, 16},
	} {
		_, err := policy.ParseConfig([]byte(tc.doc), "c.json")
		ces := policy.ConfigErrors(err)
		if len(ces) != 1 || ces[0].Line != tc.line || ces[0].Column != tc.col {
			t.Errorf("ParseConfig(%q) = %v; want one error at %d:%d", tc.doc, err, tc.line, tc.col)
		}
	}
}
