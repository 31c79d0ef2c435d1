package policy_test

import "testing"

// TestConfigEmptyJSONFile: an empty .json file (or one of blanks, or a
// byte order mark alone) is reported as empty, as an empty YAML file is,
// not as "invalid JSON: unexpected end of input" on a line past the end.
func TestConfigEmptyJSONFile(t *testing.T) {
	for _, doc := range []string{"", "\n", " \r\n\t\n", "\ufeff"} {
		wantErrorsIn(t, doc, "c.json", doc, []string{"policy: c.json:1:1: the document is empty"})
	}
}
