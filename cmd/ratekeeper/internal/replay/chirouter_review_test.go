package replay

import (
	"net/http"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestReplayAgreesWithChiAppOfServeMuxPatterns: an application routed by
// chi whose routes are all ServeMux patterns too ("/", "/items/{id}",
// "POST /login", "/docs/", as the README's quick start has) is replayed
// with Options.Router "chi" as chi routes it: "/" only the root, "/docs/"
// only itself, no path cleaned or redirected. The replay had ServeMux
// route every such configuration: "/" took every path, so a policy on the
// home page limited every request of the application.
func TestReplayAgreesWithChiAppOfServeMuxPatterns(t *testing.T) {
	configs := []string{
		"policies:\n  - {name: home, limit: 2, window: 10s, routes: [\"/\"]}\n  - {name: login, limit: 2, window: 1m, key: user, fallback: [ip], routes: [\"POST /login\"]}\n",
		"policies:\n  - {name: a, limit: 1, window: 30s, key: [ip, route], routes: [\"/items/{id}\", \"POST /login\", \"/\", \"/docs/\"]}\n",
		"policies:\n  - {name: a, limit: 2, window: 10s, key: route, routes: [\"GET /items/{id}\", \"/login\", \"/docs/\"]}\n  - {name: b, limit: 3, window: 10s}\n",
	}
	paths := []string{"/", "/login", "/login/", "/items/1", "/items/1/", "/other", "//login", "/docs/", "/docs/a", "/items/./1", "/a/../login"}
	router := func(h http.Handler, routes []string) http.Handler {
		r := chi.NewRouter()
		for _, p := range routes {
			r.Handle(p, h)
		}
		return r
	}
	chiPattern := func(h http.Handler) func(*http.Request) string { return policy.ChiPattern(h.(chi.Router)) }
	for i, doc := range configs {
		for seed := range 4 {
			entries := randomLog(uint64(100*i+seed), 300, []string{"GET", "POST", "DELETE"}, paths)
			agreeWithMiddlewareOpts(t, doc, Options{Router: RouterChi}, entries, router, chiPattern)
		}
	}
}
