package replay

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestOnePartKeyNotDecoded: a key of one part is the value as it is, not
// keyfunc.Join's encoding, so the report shows it whole even when it reads
// like that encoding: user "3:abc" is "3:abc", not "abc".
func TestOnePartKeyNotDecoded(t *testing.T) {
	const doc = "policies:\n  - {name: u, limit: 1, window: 1m, key: user}\n"
	var entries []logparse.Entry
	for i := range 2 {
		en := at(float64(i), "192.0.2.1", "/")
		en.User = "3:abc"
		entries = append(entries, en)
	}
	p := replayEntries(t, doc, Options{}, entries).Policies[0]
	if len(p.Top) != 1 || p.Top[0] != (KeyCount{"3:abc", 1}) {
		t.Errorf("top keys %v, want [{3:abc 1}]", p.Top)
	}
}

// TestJoinedKeyShownByParts: a key of two parts reads "part + part".
func TestJoinedKeyShownByParts(t *testing.T) {
	const doc = "policies:\n  - {name: iu, limit: 1, window: 1m, key: [ip, user]}\n"
	var entries []logparse.Entry
	for i := range 2 {
		en := at(float64(i), "192.0.2.1", "/")
		en.User = "ann"
		entries = append(entries, en)
	}
	p := replayEntries(t, doc, Options{}, entries).Policies[0]
	if len(p.Top) != 1 || p.Top[0] != (KeyCount{"192.0.2.1 + ann", 1}) {
		t.Errorf("top keys %v, want [{192.0.2.1 + ann 1}]", p.Top)
	}
}
