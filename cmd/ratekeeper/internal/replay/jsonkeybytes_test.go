package replay

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestWriteJSONKeysNotUTF8: a rejected key that is not UTF-8 (a Latin-1
// user name in an old log) is given in the JSON report by its bytes too
// (key_bytes, base64, as JSON gives bytes), so that two such keys stay
// two: JSON has no string for those bytes, and each became U+FFFD, "jörg"
// and "jürg" in Latin-1 both "j\ufffdrg". A UTF-8 key has no key_bytes.
func TestWriteJSONKeysNotUTF8(t *testing.T) {
	const doc = "policies:\n  - {name: u, limit: 1, window: 1m, key: user}\n"
	users := []string{"j\xf6rg", "j\xfcrg", "jörg"}
	var entries []logparse.Entry
	for i := range 2 * len(users) {
		entries = append(entries, logparse.Entry{Time: t0.Add(time.Duration(i) * time.Millisecond), Addr: "192.0.2.1", User: users[i%len(users)], Method: "GET", Path: "/"})
	}
	rep := replayEntries(t, doc, Options{}, entries)
	var b strings.Builder
	if err := rep.WriteJSON(&b, Input{Files: []string{"access.log"}}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Policies []struct {
			Top []struct {
				Key      string `json:"key"`
				KeyBytes []byte `json:"key_bytes"`
			} `json:"top_rejected"`
		} `json:"policies"`
	}
	if err := json.Unmarshal([]byte(b.String()), &got); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, k := range got.Policies[0].Top {
		key := k.Key
		if k.KeyBytes != nil {
			key = string(k.KeyBytes)
		}
		seen[key] = true
	}
	for _, u := range users {
		if !seen[u] {
			t.Errorf("user %q is no key of top_rejected (read by its key_bytes when it has them):\n%s", u, b.String())
		}
	}
	if strings.Count(b.String(), "key_bytes") != 2 {
		t.Errorf("key_bytes given %d times, want 2 (the keys not UTF-8):\n%s", strings.Count(b.String(), "key_bytes"), b.String())
	}
}
