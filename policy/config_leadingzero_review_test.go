package policy_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigLeadingZeroRefused: an integer written with a leading zero
// (limit: 010) is read differently by YAML readers: decimal 10 by YAML
// 1.2's core schema, octal 8 by YAML 1.1's (PyYAML, and the loader's own
// parser, which reads 017 as 15), and 08 is a string to some. The loader
// read it as decimal, silently, so the limit in force could differ from
// what another tool, or the reader of the file, took it for. It is
// refused, with the number to write. JSON has no such number.
func TestConfigLeadingZeroRefused(t *testing.T) {
	const head = "policies:\n  - name: a\n    window: 1s\n"
	for _, tc := range []struct{ name, doc, want string }{
		{"limit", head + "    limit: 010\n",
			"4:12 policies[0].limit: 010 has a leading zero, which YAML readers take for octal (8) or decimal (10); write 10, or 8"},
		{"not octal", head + "    limit: 08\n",
			"4:12 policies[0].limit: 08 has a leading zero, which YAML readers take for a string or decimal (8); write 8"},
		{"signed, underscored", head + "    limit: 5\n    burst: +0_17\n    algorithm: token_bucket\n",
			"5:12 policies[0].burst: +0_17 has a leading zero, which YAML readers take for octal (15) or decimal (17); write 17, or 15"},
		{"a setting", "ipv4_prefix: 024\n" + head + "    limit: 5\n",
			"1:14 ipv4_prefix: 024 has a leading zero, which YAML readers take for octal (20) or decimal (24); write 24, or 20"},
	} {
		t.Run(tc.name, func(t *testing.T) { wantRefused(t, tc.doc, "z.yaml", []string{tc.want}) })
	}
	// Zero itself, however signed, is zero to every reader.
	for _, doc := range []string{head + "    limit: 5\n    burst: 0\n    algorithm: token_bucket\n", head + "    limit: 5\ntrusted_hops: -0\n"} {
		if _, err := policy.ParseConfig([]byte(doc), "z.yaml"); err != nil {
			t.Errorf("%q: %v", doc, err)
		}
	}
}
