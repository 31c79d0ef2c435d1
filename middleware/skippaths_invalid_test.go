package middleware_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/middleware"
)

// TestSkipPathsRefusesEntriesThatCannotMatch: an entry whose path does not
// begin with "/" ("healthz", a method-only "GET", "GET healthz") can never
// match a request's path, so the exemption it was written for silently
// never happens. SkipPaths panics at construction, as ServeMux.Handle does
// on a bad pattern, naming the entry; good entries ("/healthz",
// "POST /hooks/deploy", "OPTIONS *") are taken.
func TestSkipPathsRefusesEntriesThatCannotMatch(t *testing.T) {
	for _, bad := range []string{"healthz", "", "GET", "GET healthz", "get  healthz", " /healthz"} {
		t.Run(fmt.Sprintf("%q", bad), func(t *testing.T) {
			defer func() {
				r := recover()
				msg, _ := r.(string)
				if r == nil || !strings.Contains(msg, "SkipPaths") || !strings.Contains(msg, fmt.Sprintf("%q", bad)) {
					t.Fatalf("SkipPaths(%q): recovered %v; want a panic naming SkipPaths and the entry", bad, r)
				}
			}()
			middleware.SkipPaths("/ok", bad)
		})
	}
	for _, good := range []string{"/healthz", "POST /hooks/deploy", "HEAD /x", "OPTIONS *", "GET\t/tab"} {
		if skip := middleware.SkipPaths(good); skip == nil {
			t.Fatalf("SkipPaths(%q) = nil", good)
		}
	}
}
