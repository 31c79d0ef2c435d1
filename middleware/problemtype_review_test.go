package middleware_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestProblemTypeMustBeAURIReference: WithProblemType checked only the
// characters, so strings made of them that are no URI reference (RFC 3986
// section 4.1) were sent as the "type" of every 429: "::" and "1x:y" (a
// colon in a first segment that no valid scheme precedes), "%zz" and "a%2"
// (a percent not followed by two hex digits). Clients resolve the type as a
// URI; each is now refused, naming the option, while relative references,
// fragments and tags stay accepted.
func TestProblemTypeMustBeAURIReference(t *testing.T) {
	store, _ := newStore(t)
	p := fixed("p", 1, time.Second, remote)
	for _, bad := range []string{"::", "1x:y", "%zz", "a%2", "https://example.com/%g0"} {
		_, err := middleware.New(store, []*policy.Policy{p}, middleware.WithProblemType(bad))
		if err == nil || !strings.HasPrefix(err.Error(), "middleware: WithProblemType: ") || !strings.Contains(err.Error(), bad) {
			t.Errorf("WithProblemType(%q): New error = %v; want one naming the option and the value", bad, err)
		}
	}
	for _, good := range []string{"about:blank", "/problems/quota", "quota#x", "tag:example.com,2026:quota", "urn:x:y", "https://example.com/a%20b", middleware.ProblemTypeQuotaExceeded} {
		if _, err := middleware.New(store, []*policy.Policy{p}, middleware.WithProblemType(good)); err != nil {
			t.Errorf("WithProblemType(%q): %v; want it accepted", good, err)
		}
	}
}
