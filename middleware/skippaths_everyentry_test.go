package middleware_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/middleware"
)

// TestSkipPathsNamesEveryBadEntry: SkipPaths panics on an entry that can
// never match, naming it; given several, it named the first only. It
// names each now, one per line.
func TestSkipPathsNamesEveryBadEntry(t *testing.T) {
	const never = `: want a path beginning with "/", or a method, a space and such a path: it would never match`
	for _, tc := range []struct {
		paths []string
		want  []string
	}{
		{[]string{"healthz", "/ok", "GET readyz", "POST /x", ""}, []string{
			`middleware: SkipPaths: entry "healthz"` + never,
			`middleware: SkipPaths: entry "GET readyz"` + never,
			`middleware: SkipPaths: entry ""` + never,
		}},
		{[]string{"/ok", "healthz"}, []string{
			`middleware: SkipPaths: entry "healthz"` + never,
		}},
	} {
		t.Run(fmt.Sprintf("%q", tc.paths), func(t *testing.T) {
			defer func() {
				r := recover()
				if want := strings.Join(tc.want, "\n"); r != want {
					t.Errorf("SkipPaths(%q) panicked with %v, want:\n%s", tc.paths, r, want)
				}
			}()
			middleware.SkipPaths(tc.paths...)
		})
	}
}
