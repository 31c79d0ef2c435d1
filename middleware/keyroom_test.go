package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestKeyRoom checks the package documentation's figures: the namespaced
// keys of the policies that apply ("p0:" and the key, for each) share the
// request's one allocation when they take at most 56 bytes in all with one
// policy, 104, 88 and 72 with two, three and four; a byte more costs one
// allocation more.
func TestKeyRoom(t *testing.T) {
	bare := allocsPerRequest(ok)
	for n, room := range map[int]int{1: 56, 2: 104, 3: 88, 4: 72} {
		for _, extra := range []int{0, 1} {
			// Every policy's namespaced key is 3 bytes of "pI:" and its key;
			// the first policy's key takes what the others leave.
			const other = "abcdef"
			first := strings.Repeat("k", room+extra-3*n-len(other)*(n-1))
			store, _ := newStore(t)
			var ps []*policy.Policy
			for i := range n {
				key := other
				if i == 0 {
					key = first
				}
				kf := func(*http.Request) (string, error) { return key, nil }
				ps = append(ps, policy.Must(policy.Per("p"+strconv.Itoa(i), 1_000_000, time.Duration(i+1)*time.Minute, kf)))
			}
			h := middleware.MustNew(store, ps).Handler(ok)
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil)) // the store's first sight of the keys allocates
			got := allocsPerRequest(h)
			if want := bare + 1 + float64(extra); got != want {
				t.Errorf("%d policies, keys of %d bytes in all: %v allocations per request, want %v", n, room+extra, got, want)
			}
		}
	}
}
