package policy_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigRepeatedKeyPartIsRefused: a part written twice in one key
// (key: [ip, ip]; header names in any case, as they are one header) was
// accepted and keyed nothing more than once: most likely a slip for
// another part. It is refused at the repeat, naming the first.
func TestConfigRepeatedKeyPartIsRefused(t *testing.T) {
	const head = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"ip twice", head + "    key: [ip, ip]\n",
			[]string{"5:15 policies[0].key[1]: repeats key[0] (ip): a part read twice adds nothing to the key"}},
		{"a header in another case", head + "    key: [header:X-A, user, header:x-a]\n",
			[]string{"5:29 policies[0].key[2]: repeats key[0] (header:X-A): a part read twice adds nothing to the key"}},
		{"in a fallback", head + "    key: user\n    fallback: [[ip, cookie:s, cookie:s]]\n",
			[]string{"6:31 policies[0].fallback[0][2]: repeats fallback[0][1] (cookie:s): a part read twice adds nothing to the key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantRefused(t, tc.doc, "c.yaml", tc.want)
		})
	}
	// Cookie names are case-sensitive: two cookies.
	if _, err := policy.ParseConfig([]byte(head+"    key: [cookie:s, cookie:S]\n"), "c.yaml"); err != nil {
		t.Errorf("key [cookie:s, cookie:S]: %v; want it accepted (two cookies)", err)
	}
}
