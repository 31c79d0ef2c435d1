package policy_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigMergeOfAList: a merge key given a list of mappings, YAML's
// form for merging several (<<: [*a, *b]), loads: each mapping is merged
// in turn, the keys of one earlier in the list winning over a later one's,
// and the mapping's own keys over all of them. It was refused as "the
// merge key << needs a mapping, not a list", as if the file were wrong.
func TestConfigMergeOfAList(t *testing.T) {
	const doc = `policies:
  - &window {name: a, limit: 5, window: 1m}
  - &bucket {name: b, limit: 9, window: 1s, algorithm: token_bucket, burst: 20}
  - <<: [*window, *bucket]
    name: c
`
	cfg, err := policy.ParseConfig([]byte(doc), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Minute, Burst: 20}
	if got := cfg.Policies[2].Spec(); got != want || cfg.Policies[2].Name() != "c" {
		t.Errorf("policy %s = %v, want c %v", cfg.Policies[2].Name(), got, want)
	}
}

// TestConfigMergeRefusals: a merge key written twice in one mapping is
// refused at the second, as any key written twice is: the first was
// merged and the second's keys that the first sets too were dropped
// unseen (<<: *a then <<: *b took a's limit, whatever b said). A list to
// merge must hold mappings alone.
func TestConfigMergeRefusals(t *testing.T) {
	const head = "policies:\n  - &a {name: a, limit: 5, window: 1m}\n  - &b {name: b, limit: 9, window: 1s}\n"
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"<< twice", head + "  - <<: *a\n    <<: *b\n    name: c\n",
			[]string{"5:5 : the merge key << appears twice; the first is at line 4, column 5: merge several mappings with one, as <<: [*a, *b]"}},
		{"a list holding a string", head + "  - <<: [*a, x]\n    name: c\n",
			[]string{"4:14 : the merge key << needs a mapping or a list of mappings, not a list holding a string"}},
		{"a string", head + "  - <<: x\n    name: c\n",
			[]string{"4:9 : the merge key << needs a mapping or a list of mappings, not a string"}},
		{"a key twice across the list is fine, twice in one mapping is not", head + "  - <<: [*a, {limit: 1, limit: 2}]\n    name: c\n",
			[]string{`4:25 : key "limit" appears twice in the mapping merged by <<; the first is at line 4, column 15`}},
		{"a list of one string", head + "  - <<: [x]\n    name: c\n",
			[]string{"4:10 : the merge key << needs a mapping or a list of mappings, not a list holding a string"}},
	} {
		t.Run(tc.name, func(t *testing.T) { wantRefused(t, tc.doc, "m.yaml", tc.want) })
	}
}
