package policy_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigKeyCountBounded: a document of many mapping keys is refused
// before it is parsed. The YAML parser takes time quadratic in the number
// of keys of a block mapping (each key's rest of the mapping is copied
// again), so a 256 KB file of short distinct keys held ParseConfig for
// seconds; and the JSON decoder counted each key's line and column from
// the start of the file again. No valid configuration has more than a
// few hundred keys (64 policies of 12 fields, and the settings).
func TestConfigKeyCountBounded(t *testing.T) {
	const n = 5000
	var block, flow, js strings.Builder
	flow.WriteString("{")
	js.WriteString("{")
	for i := range n {
		fmt.Fprintf(&block, "k%d: 1\n", i)
		fmt.Fprintf(&flow, "k%d: 1, ", i)
		if i > 0 {
			js.WriteString(",\n")
		}
		fmt.Fprintf(&js, "%q: 1", fmt.Sprint("k", i))
	}
	flow.WriteString("}")
	js.WriteString("}")
	for _, tc := range []struct {
		name, doc string
		line, col int
	}{
		{"block.yaml", block.String(), 4097, 1},
		{"flow.yaml", flow.String(), 1, 2 + len(strings.Join(strings.SplitAfterN(flow.String()[1:], ", ", 4097)[:4096], ""))},
		{"keys.json", js.String(), 4097, 1},
	} {
		_, err := policy.ParseConfig([]byte(tc.doc), tc.name)
		ces := policy.ConfigErrors(err)
		if len(ces) != 1 || ces[0].Line != tc.line || ces[0].Column != tc.col || !strings.Contains(ces[0].Reason, "more than 4096 keys") {
			t.Errorf("%s: %.300v; want one error, at %d:%d, that the document holds more than 4096 keys", tc.name, err, tc.line, tc.col)
		}
	}
}
