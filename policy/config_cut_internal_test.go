package policy

import (
	"strconv"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/internal/errtext"
)

// TestErrorText: errorText cuts a quoted value longer than errtext.MaxQuoted
// characters, a run without blanks as long, and, last, a text longer than
// maxReason (a value with blanks written unquoted), each marked; a short
// text is kept as it is.
func TestErrorText(t *testing.T) {
	long := strings.Repeat("é", errtext.MaxQuoted+1) // characters, not bytes, are counted
	for _, tc := range []struct{ in, want string }{
		{"unknown value " + strconv.Quote(strings.Repeat("é", errtext.MaxQuoted)) + "; want x", "unknown value " + strconv.Quote(strings.Repeat("é", errtext.MaxQuoted)) + "; want x"},
		{"unknown value " + strconv.Quote(long) + "; want x", "unknown value " + strconv.Quote(strings.Repeat("é", errtext.Keep)) + "… (130 bytes); want x"},
		{"got " + long + " here", "got " + strings.Repeat("é", errtext.Keep) + "… (130 bytes) here"},
		{"a \"half quote " + long, "a \"half quote " + strings.Repeat("é", errtext.Keep) + "… (130 bytes)"},
		{"tab\there", `tab\there`},
	} {
		if got := errorText(tc.in); got != tc.want {
			t.Errorf("errorText(%.80q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	spaced := "got " + strings.Repeat("a ", 10_000)
	got := errorText(spaced)
	if len(got) > maxReason || !strings.HasSuffix(got, "… (20004 bytes)") || !strings.HasPrefix(got, "got a a a") {
		t.Errorf("errorText of %d bytes with blanks = %d bytes, ending %q; want at most %d, marked", len(spaced), len(got), got[max(0, len(got)-30):], maxReason)
	}
}
