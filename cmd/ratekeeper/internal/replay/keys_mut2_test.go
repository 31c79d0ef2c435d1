package replay

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestTopKeyShown: a key of one part is the value as it is, not
// keyfunc.Join's encoding, so the report shows it whole even when it reads
// like that encoding (user "3:abc" is "3:abc", not "abc"); a key of two
// parts reads "part + part".
func TestTopKeyShown(t *testing.T) {
	for _, tc := range []struct{ name, key, user, want string }{
		{"one part like the encoding", "user", "3:abc", "3:abc"},
		{"two parts", "[ip, user]", "ann", "192.0.2.1 + ann"},
	} {
		doc := "policies:\n  - {name: p, limit: 1, window: 1m, key: " + tc.key + "}\n"
		var entries []logparse.Entry
		for i := range 2 {
			en := at(float64(i), "192.0.2.1", "/")
			en.User = tc.user
			entries = append(entries, en)
		}
		p := replayEntries(t, doc, Options{}, entries).Policies[0]
		if want := (KeyCount{tc.want, 1}); len(p.Top) != 1 || p.Top[0] != want {
			t.Errorf("%s: top keys %v, want [%v]", tc.name, p.Top, want)
		}
	}
}
