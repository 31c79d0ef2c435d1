package policy

import (
	"net/http"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestNameProblemAgreesWithKeyfunc: nameProblem, which refuses header and
// cookie names in the file's words, refuses exactly the names that
// keyfunc.Header, keyfunc.Cookie and keyfunc.FromHeader refuse, so that
// none of theirs reaches a file's author in keyfunc's words.
func TestNameProblemAgreesWithKeyfunc(t *testing.T) {
	names := []string{"X", "X-Real-IP", "a.b", "é", "X\u00a0Y", "Host", "Forwarded", "x-forwarded-for"}
	for c := range 256 {
		names = append(names, "X"+string(rune(c)), "X"+string([]byte{byte(c)}))
	}
	for _, name := range names {
		_, herr := keyfunc.Header(name)
		_, cerr := keyfunc.Cookie(name)
		_, ierr := keyfunc.IP(keyfunc.TrustedProxies(anyProxy), keyfunc.FromHeader(name))
		if got := nameProblem("header", name) != ""; got != (herr != nil) || got != (cerr != nil) {
			t.Errorf("nameProblem(%q) = %q; keyfunc.Header: %v, keyfunc.Cookie: %v", name, nameProblem("header", name), herr, cerr)
		}
		if nameProblem("header", name) == "" && ierr != nil && !listOrHost(name) {
			t.Errorf("nameProblem(%q) = \"\"; keyfunc.FromHeader: %v", name, ierr)
		}
	}
}

// listOrHost reports whether keyfunc.FromHeader refuses the valid header
// name for what it names (headerSourceProblem says so in its own words).
func listOrHost(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "X-Forwarded-For", "Forwarded", "Host":
		return true
	}
	return false
}
