package policy_test

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigBlockNestingBoundedByIndent pins what Load's doc says of a
// document's depth in YAML: the 64-level bound counts flow collections
// ([ ], { }), while block collections, which nest by indentation, are
// bounded by the 256 columns a line may be indented. A block mapping 200
// levels deep within them is parsed and judged field by field (its only
// problems are the fields'), and a line indented one column more than 256
// is refused, as is a flow collection one level deeper than 64.
func TestConfigBlockNestingBoundedByIndent(t *testing.T) {
	block := func(levels int) string {
		var b strings.Builder
		b.WriteString("x:\n")
		for i := range levels {
			b.WriteString(strings.Repeat(" ", 1+i) + "a:\n")
		}
		b.WriteString(strings.Repeat(" ", 1+levels) + "b: 1\n")
		return b.String()
	}
	flow := func(levels int) string {
		return "x: " + strings.Repeat("[", levels) + strings.Repeat("]", levels) + "\n"
	}
	for _, tt := range []struct {
		name, doc string
		bound     string // the bound's reason, or "" for none
	}{
		{"block 200 levels", block(200), ""},
		{"block indented 256", block(255), ""},
		{"block indented 257", block(256), "indented more than 256 columns"},
		{"flow 64 levels", flow(64), ""},
		{"flow 65 levels", flow(65), "nests more than 64 levels"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := policy.ParseConfig([]byte(tt.doc), "deep.yaml")
			ces := policy.ConfigErrors(err)
			if tt.bound != "" {
				if len(ces) != 1 || !strings.Contains(ces[0].Reason, tt.bound) {
					t.Errorf("error %v; want one, that it is %s", err, tt.bound)
				}
				return
			}
			// Parsed: the unknown field x and the missing policies.
			if len(ces) != 2 || ces[0].Field != "x" || ces[1].Field != "policies" {
				t.Errorf("error %v; want x's unknown field and the missing policies, no bound", err)
			}
		})
	}
}
