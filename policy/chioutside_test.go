package policy_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestChiPatternAroundTheRouter: a limiter wrapping a whole chi router
// from outside (http.ListenAndServe(addr, m.Handler(r)), as one wraps a
// ServeMux with ServeMuxPattern) with ChiPattern(r) as its pattern
// function gets chi's patterns, trailing slash trimmed ("/login" for
// r.Post("/login/")), so a route written as registered ("POST /login/")
// must match them as it does within chi. It did not: the Set told chi's
// patterns by chi's route context in the request, which chi makes only
// once the request reaches it, and every login escaped the policy.
func TestChiPatternAroundTheRouter(t *testing.T) {
	login := policy.Must(policy.PerMinute("login", 5, remoteKey, policy.WithRoutes("POST /login/")))
	api := policy.Must(policy.PerMinute("api", 5, remoteKey, policy.WithRoutes("GET /api/", "GET /x/")))
	head := policy.Must(policy.PerMinute("head", 5, remoteKey, policy.WithRoutes("HEAD /x/")))
	r := chi.NewRouter()
	s, err := policy.NewSet([]*policy.Policy{login, api, head}, policy.WithPatternFunc(policy.ChiPattern(r)))
	if err != nil {
		t.Fatal(err)
	}
	nop := func(http.ResponseWriter, *http.Request) {}
	r.Post("/login/", nop)
	r.Get("/x/", nop)
	r.Head("/x/", nop)
	r.Route("/api", func(sub chi.Router) { sub.Get("/", nop) })
	var masks []uint64
	limiter := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		masks = append(masks, s.Match(req))
		r.ServeHTTP(w, req)
	})
	for _, req := range []*http.Request{
		httptest.NewRequest("POST", "/login/", nil),
		httptest.NewRequest("GET", "/api/", nil),
		httptest.NewRequest("GET", "/x/", nil),
		httptest.NewRequest("HEAD", "/x/", nil),
	} {
		w := httptest.NewRecorder()
		limiter.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Fatalf("%s %s: status %d", req.Method, req.URL.Path, w.Code)
		}
	}
	if want := []uint64{1, 2, 2, 4}; !slices.Equal(masks, want) {
		t.Errorf("masks %v, want %v", masks, want)
	}
}
