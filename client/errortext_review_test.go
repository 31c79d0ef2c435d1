package client_test

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/client"
)

// A RetryError's message ends with the last status's code and text; for
// 529, which net/http has no text for, with the code alone, or the name
// the package gives it: never a trailing space.
func TestRetryErrorMessageLastStatus(t *testing.T) {
	for _, tc := range []struct {
		status int
		want   string
	}{
		{429, "last status 429 Too Many Requests"},
		{403, "last status 403 Forbidden"},
		{529, "last status 529 overloaded"},
		{599, "last status 599"},
	} {
		err := &client.RetryError{Attempts: 4, LastStatus: tc.status, Reason: "retries exhausted"}
		if got := err.Error(); !strings.HasSuffix(got, tc.want) {
			t.Errorf("RetryError{LastStatus: %d}.Error() = %q, want it to end %q", tc.status, got, tc.want)
		}
	}
}
