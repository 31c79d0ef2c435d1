package policy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestNameErrorShowsTheCharacter: a policy name holding a character
// outside A-Z a-z 0-9 - _ . is refused with that character, as the file
// has it. The check walked the name's bytes and quoted the first bad one
// as a rune: for a non-ASCII character it showed the rune of that byte
// alone, a character nowhere in the file ("per–ip", an en dash pasted from
// a document, was said to contain 'â'; "café" to contain 'Ã'; a no-break
// space, invisible in the file, 'Â').
func TestNameErrorShowsTheCharacter(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"per–ip", `"per–ip" contains '–';`},
		{"café", `"café" contains 'é';`},
		{"per\u00a0ip", `"per\u00a0ip" contains '\u00a0';`}, // a no-break space, escaped
		{"per minute", `"per minute" contains ' ';`},
		{"a\xffb", `"a\xffb" contains '\xff';`}, // not UTF-8: the byte
	} {
		_, err := policy.Per(tc.name, 1, time.Minute, remoteKey)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Per(%q) = %v, want an error saying %s", tc.name, err, tc.want)
		}
		doc := "policies:\n  - {name: " + `"` + tc.name + `"` + ", limit: 1, window: 1m}\n"
		if tc.name == "a\xffb" {
			continue // not a valid YAML document
		}
		_, err = policy.ParseConfig([]byte(doc), "n.yaml")
		ces := policy.ConfigErrors(err)
		if len(ces) != 1 || ces[0].Field != "policies[0].name" || !strings.Contains(ces[0].Reason, tc.want) {
			t.Errorf("ParseConfig(%q) = %v, want one error at policies[0].name saying %s", doc, err, tc.want)
		}
	}
}
