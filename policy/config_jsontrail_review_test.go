package policy_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestJSONSeparatorAfterTopLevelValue: a ',' or ':' after a JSON file's
// object is not JSON, and is refused where it stands, as any other data
// after the top-level value is. A file cut out of a list of objects
// ("{...},") or two files joined with a comma between them ("{...},\n{...}"
// is refused already) must not load as if the separator were not there.
func TestJSONSeparatorAfterTopLevelValue(t *testing.T) {
	const obj = `{"policies": [{"name": "a", "limit": 1, "window": "1s"}]}`
	for _, tc := range []struct {
		doc       string
		line, col int
	}{
		{obj + ",", 1, len(obj) + 1},
		{obj + ",\n", 1, len(obj) + 1},
		{obj + "\n:\n", 2, 1},
		{obj + " , ", 1, len(obj) + 2},
	} {
		cfg, err := policy.ParseConfig([]byte(tc.doc), "c.json")
		ces := policy.ConfigErrors(err)
		if cfg != nil || len(ces) != 1 || ces[0].Line != tc.line || ces[0].Column != tc.col || ces[0].Reason != "unexpected data after the top-level value" {
			t.Errorf("ParseConfig(%q): error %v (a Config: %t); want one error at %d:%d: unexpected data after the top-level value", tc.doc, err, cfg != nil, tc.line, tc.col)
		}
	}
	// Blanks after it are no data.
	if _, err := policy.ParseConfig([]byte(obj+" \r\n\t\n"), "c.json"); err != nil {
		t.Errorf("blanks after the object: %v", err)
	}
}
