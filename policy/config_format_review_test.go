package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestLoadFormatByNameThenContent pins how Load picks the parser, as its
// doc says: the name's extension decides (.json JSON, .yaml and .yml
// YAML), and only a name with neither is JSON when its content starts
// with '{'. The parser shows in the nesting bound it applies: a document
// nesting lists 80 deep is refused by the YAML bound (64) and passes the
// JSON one (100), its only problem then being the policies' type.
func TestLoadFormatByNameThenContent(t *testing.T) {
	doc := `{"policies": ` + strings.Repeat("[", 79) + strings.Repeat("]", 79) + "}\n"
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		json bool
	}{
		{"c.json", true},
		{"c.JSON", true},
		{"c.conf", true},
		{"c", true},
		{"c.yaml", false},
		{"c.yml", false},
	} {
		path := filepath.Join(dir, tt.name)
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := policy.Load(path)
		ces := policy.ConfigErrors(err)
		asJSON := len(ces) == 1 && ces[0].Field == "policies[0]" // the bound passed: a list is no policy
		asYAML := len(ces) == 1 && strings.Contains(ces[0].Reason, "nests more than 64 levels")
		if asJSON != tt.json || asYAML == tt.json {
			t.Errorf("%s: %v; want it parsed as JSON: %v", tt.name, err, tt.json)
		}
	}
}
