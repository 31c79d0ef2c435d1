package middleware_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestRulesReviewCheckRoutesWildcardBesideEscapedSlash pins CheckRoutes
// on a route holding both a wildcard and an escaped character the path's
// default encoding would not keep ("%2F"): a request for it (/7/a%2Fb)
// reaches it, and so must the request CheckRoutes builds, whose wildcard
// is written as its own text ("{n}"), which a URL's raw path may not hold
// as such.
func TestRulesReviewCheckRoutesWildcardBesideEscapedSlash(t *testing.T) {
	routes := []string{"GET /{n}/a%2Fb", "GET /caf%C3%A9/a%2Fb/{n}", "/x/{n}/a%2Fb/{rest...}"}
	store, _ := newStore(t)
	var ps []*policy.Policy
	mux := http.NewServeMux()
	r := chi.NewRouter()
	for i, rt := range routes {
		mux.Handle(rt, ok)
		ps = append(ps, fixed(string(rune('a'+i)), 10, time.Minute, remote, policy.WithRoutes(rt)))
	}
	r.Get("/{n}/a%2Fb", ok)
	r.Get("/café/a%2Fb/{n}", ok)
	r.Handle("/x/{n}/a%2Fb/*", ok)
	m := middleware.MustNew(store, ps)
	if err := m.CheckRoutes(policy.ServeMuxPattern(mux)); err != nil {
		t.Errorf("CheckRoutes(ServeMuxPattern(mux)) = %v, want nil", err)
	}
	for _, target := range []string{"/7/a%2Fb", "/caf%C3%A9/a%2Fb/7", "/x/7/a%2Fb/y"} {
		if w := serve(mux, "GET", target); w.Code != http.StatusOK {
			t.Errorf("the mux answers GET %s %d, want 200", target, w.Code)
		}
	}
	chiPs := []*policy.Policy{
		fixed("a", 10, time.Minute, remote, policy.WithRoutes("GET /{n}/a%2Fb")),
		fixed("b", 10, time.Minute, remote, policy.WithRoutes("GET /café/a%2Fb/{n}")),
		fixed("c", 10, time.Minute, remote, policy.WithRoutes("/x/{n}/a%2Fb/*")),
	}
	if err := middleware.MustNew(store, chiPs).CheckRoutes(policy.ChiPattern(r)); err != nil {
		t.Errorf("CheckRoutes(ChiPattern(r)) = %v, want nil", err)
	}
}
