package policy_test

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigDocumentsCounted: a configuration file holds one YAML document,
// and a file that holds more is refused at the first line of the second,
// however the documents are marked. The YAML parser reads two document
// headers in a row ("---\n---\n") as the end of the stream: the documents
// after them were dropped without a word (a file's policies after such a
// pair ignored), and a file that began with the pair was called empty.
func TestConfigDocumentsCounted(t *testing.T) {
	const a = "policies:\n  - {name: a, limit: 1, window: 1s}\n"
	const b = "policies:\n  - {name: b, limit: 2, window: 1s}\n"
	for _, tc := range []struct {
		doc  string
		line int
	}{
		{a + "---\n" + b, 4},
		{a + "---\n---\n" + b, 5},
		{"---\n---\n" + a, 3},
		{"---\n# nothing here\n---\n" + a, 4},
		{a + "...\n---\n---\n" + b, 6},
		{a + "...\n" + b, 4},
		{a + "---\n---\n# c\n---\n" + b, 7},
		{a + "---\n~\n", 4},
		{a + "---\n{}\n", 4},
		{"%YAML 1.2\n---\n" + a + "---\n---\n" + b, 7},
	} {
		_, err := policy.ParseConfig([]byte(tc.doc), "docs.yaml")
		errs := policy.ConfigErrors(err)
		if len(errs) != 1 || !strings.Contains(errs[0].Reason, "more than one YAML document") || errs[0].Line != tc.line {
			t.Errorf("ParseConfig(%q) = %v; want one error at line %d: more than one YAML document", tc.doc, err, tc.line)
		}
	}
	// One document, however it is marked.
	for _, doc := range []string{
		a,
		"---\n" + a,
		"--- # the limits\n" + a + "...\n# the end\n",
		"%YAML 1.2\n---\n" + a + "...\n",
		"# before\n---\n" + a,
		"policies: # --- not a header\n  - name: \"a\"\n    limit: 1\n    window: 1s\n",
	} {
		cfg, err := policy.ParseConfig([]byte(doc), "one.yaml")
		if err != nil {
			t.Errorf("ParseConfig(%q): %v", doc, err)
			continue
		}
		if len(cfg.Policies) != 1 || cfg.Policies[0].Name() != "a" {
			t.Errorf("ParseConfig(%q) = %d policies; want a alone", doc, len(cfg.Policies))
		}
	}
}

// TestConfigTrailingEmptyDocument: a file that ends with a document
// header and nothing after it but comments, blanks or end markers ("---"
// last, as tools that write multi-document YAML leave it) holds one
// document, not two: it was refused as "more than one YAML document". A
// file of empty documents alone is empty.
func TestConfigTrailingEmptyDocument(t *testing.T) {
	const a = "policies:\n  - {name: a, limit: 1, window: 1s}\n"
	for _, doc := range []string{
		a + "---\n",
		a + "---",
		"---\n" + a + "---\n",
		a + "--- # the end\n",
		a + "---\n# nothing more\n\n",
		a + "---\n...\n",
		a + "...\n---\n...\n---\n",
		a + "---\n---\n",
		"%YAML 1.2\n---\n" + a + "---\n",
		strings.ReplaceAll(a+"---\n", "\n", "\r\n"),
	} {
		cfg, err := policy.ParseConfig([]byte(doc), "trailing.yaml")
		if err != nil {
			t.Errorf("ParseConfig(%q): %v", doc, err)
			continue
		}
		if len(cfg.Policies) != 1 || cfg.Policies[0].Name() != "a" {
			t.Errorf("ParseConfig(%q) = %d policies; want a alone", doc, len(cfg.Policies))
		}
	}
	for _, doc := range []string{"---\n", "---\n---\n", "# c\n---\n...\n---\n"} {
		_, err := policy.ParseConfig([]byte(doc), "empty.yaml")
		if errs := policy.ConfigErrors(err); len(errs) != 1 || errs[0].Reason != "the document is empty" {
			t.Errorf("ParseConfig(%q) = %v; want one error: the document is empty", doc, err)
		}
	}
}
