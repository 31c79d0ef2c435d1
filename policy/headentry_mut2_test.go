package policy_test

import (
	"net/http"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestMatchHEADEntryNotApplyingLeavesGET: a HEAD route whose policy does
// not apply to a HEAD request (its predicate says no) leaves that request
// under the GET routes of its path, those of a policy that holds a HEAD
// route elsewhere too: with "HEAD /x" + "GET /y" in one policy and a
// "HEAD /y" whose predicate is false in another, HEAD /y is under the
// first, as it is under a plain "GET /y" policy. The first was left out:
// decided among the HEAD entries, its GET route yielded to every HEAD
// route of the Set on /y, applying or not.
func TestMatchHEADEntryNotApplyingLeavesGET(t *testing.T) {
	headXGetY := policy.Must(policy.PerMinute("head-x-get-y", 1, remoteKey, policy.WithRoutes("HEAD /x", "GET /y")))
	never := policy.Must(policy.PerMinute("head-y-never", 1, remoteKey, policy.WithRoutes("HEAD /y"),
		policy.WithMatch(func(*http.Request) bool { return false })))
	getY := policy.Must(policy.PerMinute("get-y", 1, remoteKey, policy.WithRoutes("GET /y")))
	checkMatches(t, headerPatternSet(t, headXGetY, never, getY), []matchCase{
		{"HEAD", "/y", 0b101},
		{"HEAD", "/x", 0b001},
		{"GET", "/y", 0b101},
	})
	// The HEAD route applying, it takes HEAD /y from both GET routes.
	always := policy.Must(policy.PerMinute("head-y", 1, remoteKey, policy.WithRoutes("HEAD /y")))
	checkMatches(t, headerPatternSet(t, headXGetY, always, getY), []matchCase{
		{"HEAD", "/y", 0b010},
	})
}
