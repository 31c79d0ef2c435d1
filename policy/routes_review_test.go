package policy_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestWithRoutesChiRegexpSpaceNoMethod: a route without a method whose chi
// regexp holds a space is a path, as RoutePattern reads it; WithRoutes cut
// it at the space and refused "/names/{n:[a-z" as a method.
func TestWithRoutesChiRegexpSpaceNoMethod(t *testing.T) {
	p, err := policy.PerMinute("names", 1, remoteKey, policy.WithRoutes("/names/{n:[a-z ]+}"))
	if err != nil {
		t.Fatalf("WithRoutes(chi pattern with a space) = %v", err)
	}
	s, err := policy.NewSet([]*policy.Policy{p})
	if err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	var got []uint64
	r.Get("/names/{n:[a-z ]+}", func(w http.ResponseWriter, req *http.Request) { got = append(got, s.Match(req)) })
	r.Post("/names/{n:[a-z ]+}", func(w http.ResponseWriter, req *http.Request) { got = append(got, s.Match(req)) })
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/names/a%20b", nil))
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/names/c", nil))
	if want := []uint64{1, 1}; !slices.Equal(got, want) {
		t.Errorf("Match under the chi pattern = %v, want %v", got, want)
	}
}
