package errtext_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/internal/errtext"
)

// TestCutAndQuote: a value of MaxQuoted characters (not bytes) is written
// whole, one longer is cut to Keep characters and marked with its length
// in bytes, quoted by Quote as %q quotes it.
func TestCutAndQuote(t *testing.T) {
	whole := strings.Repeat("é", errtext.MaxQuoted)
	long := whole + "é"
	kept := strings.Repeat("é", errtext.Keep)
	for _, c := range []struct{ got, want string }{
		{errtext.Cut(whole), whole},
		{errtext.Cut(long), kept + "… (130 bytes)"},
		{errtext.Quote(whole), strconv.Quote(whole)},
		{errtext.Quote("a\"b\n"), `"a\"b\n"`},
		{errtext.Quote(long), strconv.Quote(kept) + "… (130 bytes)"},
		{errtext.CutAt("héllo", 2), "hé"},
		{errtext.CutAt("hé", 5), "hé"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
