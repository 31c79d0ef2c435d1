package policy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestNameCannotSplitOrForgeHeaders: a policy name is written into the
// RateLimit and RateLimit-Policy fields as a Structured Field string, into
// the 429's JSON body, and before ':' in every store key. A name that could
// hold CR or LF would split the response (or be refused by net/http,
// dropping the headers); '"' or '\' would end or escape the sf-string and
// let the name forge parameters (q=, r=) or list members; ',' and ';'
// would do the same in a lax parser; ':' would make "a:b"+"c" and
// "a"+"b:c" one store key. Every such name is refused, by policy.Per and
// by ParseConfig, with the name's field named.
func TestNameCannotSplitOrForgeHeaders(t *testing.T) {
	for _, name := range []string{
		"per-ip\r\nSet-Cookie: a=b",
		"per-ip\nX: y",
		"per-ip\r",
		`per-ip";q=999999;w=1`,
		`per-ip\`,
		"per-ip,other",
		"per-ip;q=1",
		"per:ip",
		"per#ip",
		"per=ip",
		"per-ip\x00",
		"per-ip\x7f",
		"per/ip",
		"<script>",
		strings.Repeat("a", policy.MaxNameLen+1),
	} {
		if _, err := policy.Per(name, 1, time.Minute, remoteKey); err == nil {
			t.Errorf("Per(%q) = nil error, want the name refused", name)
		}
		doc := `{"policies": [{"name": "` + jsonEscape(name) + `", "limit": 1, "window": "1m"}]}`
		_, err := policy.ParseConfig([]byte(doc), "n.json")
		ces := policy.ConfigErrors(err)
		if len(ces) != 1 || ces[0].Field != "policies[0].name" {
			t.Errorf("ParseConfig(%s) = %v, want one error at policies[0].name", doc, err)
		}
	}
	// The whole allowed alphabet, at the longest length, is accepted.
	ok := strings.Repeat("Az09-_.", policy.MaxNameLen/7+1)[:policy.MaxNameLen]
	if _, err := policy.Per(ok, 1, time.Minute, remoteKey); err != nil {
		t.Errorf("Per(%q) = %v, want the name accepted", ok, err)
	}
}

// jsonEscape escapes s for a JSON string, control characters included.
func jsonEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[c>>4])
			b.WriteByte("0123456789abcdef"[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
