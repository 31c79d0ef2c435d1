package policy_test

import (
	"net/http/httptest"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestPrepareIgnoresBitsPastTheSet: a mask with bits past the Set's
// policies prepares the policies the Set has, as their own mask does.
func TestPrepareIgnoresBitsPastTheSet(t *testing.T) {
	s := setOf(t, 2)
	r := httptest.NewRequest("GET", "/", nil)
	var res policy.Result
	if err := s.Prepare(r, 0b11|1<<5|1<<63, &res); err != nil {
		t.Fatal(err)
	}
	if res.Len() != 2 || res.Mask() != 0b11 {
		t.Errorf("Prepare(mask with bits 5 and 63) evaluated %d policies, mask %b; want 2, 11", res.Len(), res.Mask())
	}
}
