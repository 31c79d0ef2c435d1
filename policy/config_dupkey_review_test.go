package policy_test

import (
	"fmt"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigDuplicateKeyNamesTheField: a key written twice in one
// mapping (a limit given twice, which one reader takes as the first and
// another as the last) is refused, as Load says, with the field it sets,
// as every problem is (README: "each with file, line, column and field"),
// at the second one, saying where the first is; and the file's other
// problems are reported with it, not hidden behind it.
func TestConfigDuplicateKeyNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		name, file, doc string
		want            []string // each problem: "line:col field: reason"
	}{
		{"yaml policy field", "c.yaml",
			"policies:\n  - name: a\n    limit: 1\n    window: 1s\n    limit: 1000\n  - name: b\n    limit: 0\n    window: 1s\n",
			[]string{"5:5 policies[0].limit: appears twice; the first is at line 3, column 5", "7:12 policies[1].limit: must be positive, got 0"}},
		{"yaml top-level field", "c.yaml",
			"headers: ietf\npolicies:\n  - {name: a, limit: 1, window: 1s}\nheaders: none\n",
			[]string{"4:1 headers: appears twice; the first is at line 1, column 1"}},
		{"yaml flow mapping", "c.yaml",
			"policies:\n  - {name: a, limit: 1, window: 1s, window: 1h}\n",
			[]string{"2:37 policies[0].window: appears twice; the first is at line 2, column 25"}},
		{"yaml merged mapping", "c.yaml", // no field: the merge is read before the schema
			"policies:\n  - <<: {limit: 1, limit: 2}\n    name: a\n    window: 1s\n",
			[]string{`2:20 : key "limit" appears twice in the mapping merged by <<; the first is at line 2, column 10`}},
		{"json policy field", "c.json",
			"{\"policies\": [{\"name\": \"a\", \"limit\": 1, \"window\": \"1s\", \"limit\": 1000}]}",
			[]string{"1:57 policies[0].limit: appears twice; the first is at line 1, column 29"}},
		{"json top-level field", "c.json",
			"{\"headers\": \"ietf\", \"headers\": \"none\", \"policies\": [{\"name\": \"a\", \"limit\": 0, \"window\": \"1s\"}]}",
			[]string{"1:21 headers: appears twice; the first is at line 1, column 2", "1:76 policies[0].limit: must be positive, got 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := policy.ParseConfig([]byte(tc.doc), tc.file)
			if err == nil {
				t.Fatalf("ParseConfig = %+v, want an error", cfg)
			}
			var got []string
			for _, ce := range policy.ConfigErrors(err) {
				got = append(got, fmt.Sprintf("%d:%d %s: %s", ce.Line, ce.Column, ce.Field, ce.Reason))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("ParseConfig problems:\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}
