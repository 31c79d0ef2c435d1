package policy_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestMaxPoliciesIsSixtyFour: a Set's subsets are bit masks over a
// uint64, so a Set holds 64 policies, all of which apply, and not 65.
func TestMaxPoliciesIsSixtyFour(t *testing.T) {
	var ps []*policy.Policy
	for i := range 65 {
		ps = append(ps, policy.Must(policy.PerSecond("p"+strconv.Itoa(i), 1, remoteKey)))
	}
	s, err := policy.NewSet(ps[:64])
	if err != nil {
		t.Fatalf("NewSet(64 policies) = %v", err)
	}
	if got := s.Match(httptest.NewRequest("GET", "/", nil)); got != ^uint64(0) {
		t.Errorf("Match of 64 plain policies = %x, want every bit", got)
	}
	// 63 policies: the mask of all is 63 bits, not every bit.
	s63, err := policy.NewSet(ps[:63])
	if err != nil {
		t.Fatalf("NewSet(63 policies) = %v", err)
	}
	if got, want := s63.Match(httptest.NewRequest("GET", "/", nil)), uint64(1)<<63-1; got != want {
		t.Errorf("Match of 63 plain policies = %x, want %x", got, want)
	}
	var pe *policy.Error
	if _, err := policy.NewSet(ps); !errors.As(err, &pe) || pe.Field != "Policies" {
		t.Errorf("NewSet(65 policies) = %v, want a *policy.Error on Policies", err)
	}
}

// TestSetPolicy: Set.Policy(i) is the i-th of Set.Policies, the same
// *Policy as given to NewSet.
func TestSetPolicy(t *testing.T) {
	a := policy.Must(policy.PerSecond("a", 10, remoteKey))
	b := policy.Must(policy.PerMinute("b", 100, remoteKey))
	s, err := policy.NewSet([]*policy.Policy{a, b})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []*policy.Policy{a, b} {
		if got := s.Policy(i); got != want {
			t.Errorf("Policy(%d) = %s, want %s", i, got, want)
		}
	}
}

// TestMatchHEADEntryFirst: the HEAD entries take HEAD from the GET ones
// wherever they sit in the Set, the first policy too: a HEAD method
// policy before a GET one, a "HEAD /x" route before a "GET /x" one.
func TestMatchHEADEntryFirst(t *testing.T) {
	heads := policy.Must(policy.PerMinute("heads", 100, remoteKey, policy.WithMethods("HEAD")))
	gets := policy.Must(policy.PerMinute("gets", 1, remoteKey, policy.WithMethods("GET")))
	s, err := policy.NewSet([]*policy.Policy{heads, gets})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		method string
		want   uint64
	}{{"HEAD", 0b01}, {"GET", 0b10}} {
		if got := s.Match(httptest.NewRequest(tt.method, "/", nil)); got != tt.want {
			t.Errorf("Match(%s) with HEAD and GET method policies = %02b, want %02b", tt.method, got, tt.want)
		}
	}

	headX := policy.Must(policy.PerMinute("head-x", 100, remoteKey, policy.WithRoutes("HEAD /x")))
	getX := policy.Must(policy.PerMinute("get-x", 1, remoteKey, policy.WithRoutes("GET /x")))
	checkMatches(t, headerPatternSet(t, headX, getX), []matchCase{
		{"HEAD", "/x", 0b01},
		{"GET", "/x", 0b10},
	})
}

// TestMatchHEADEntryGETMethod: a policy holding a HEAD route is decided
// among the HEAD entries, where its GET method still covers HEAD (no
// policy's methods name HEAD), as its GET route does on a path no HEAD
// route takes: on "GET" with routes "HEAD /x" and "GET /y", HEAD /y is
// under it.
func TestMatchHEADEntryGETMethod(t *testing.T) {
	p := policy.Must(policy.PerMinute("get-y-head-x", 1, remoteKey,
		policy.WithMethods("GET"), policy.WithRoutes("HEAD /x", "GET /y")))
	checkMatches(t, headerPatternSet(t, p), []matchCase{
		{"HEAD", "/y", 1},
		{"HEAD", "/x", 1},
		{"GET", "/y", 1},
		{"GET", "/x", 0},
	})
}

// TestMatchAsksPredicatesOnce: Match asks each policy's predicate
// (WithMatch) once per request, whatever the method.
func TestMatchAsksPredicatesOnce(t *testing.T) {
	calls := 0
	api := policy.Must(policy.PerMinute("api", 5, remoteKey, policy.WithMatch(func(*http.Request) bool { calls++; return true })))
	sec := policy.Must(policy.PerSecond("sec", 5, remoteKey))
	s, err := policy.NewSet([]*policy.Policy{sec, api})
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{"GET", "HEAD", "POST"} {
		calls = 0
		if got := s.Match(httptest.NewRequest(method, "/", nil)); got != 0b11 || calls != 1 {
			t.Errorf("Match(%s) = %02b with %d predicate calls, want 11 with 1", method, got, calls)
		}
	}
	// A HEAD entry's predicate, on a HEAD request: asked among the HEAD
	// entries, not again.
	headAPI := policy.Must(policy.PerMinute("head-api", 5, remoteKey, policy.WithRoutes("HEAD /x"),
		policy.WithMatch(func(*http.Request) bool { calls++; return true })))
	s = headerPatternSet(t, sec, headAPI)
	r := httptest.NewRequest("HEAD", "/", nil)
	r.Header.Set("X-Pattern", "/x")
	calls = 0
	if got := s.Match(r); got != 0b11 || calls != 1 {
		t.Errorf("Match(HEAD /x) = %02b with %d predicate calls, want 11 with 1", got, calls)
	}
}
