package quote_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/quote"
)

func TestIfNeeded(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// Graphic: as it is.
		{"/tmp/chart.svg", "/tmp/chart.svg"},
		{"my chart (2).svg", "my chart (2).svg"},
		{"/tmp/café\u00a0menu.svg", "/tmp/café\u00a0menu.svg"},
		{"", ""},
		// Anything else: quoted.
		{"a\nb.svg", `"a\nb.svg"`},
		{"a\tb", `"a\tb"`},
		{"a\x1b[2Jb", `"a\x1b[2Jb"`},
		{"a\u2028b", `"a\u2028b"`},
		{"a\xffb", `"a\xffb"`},
	} {
		if got := quote.IfNeeded(tc.in); got != tc.want {
			t.Errorf("IfNeeded(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
