package replay

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
	"github.com/ratekeeper/ratekeeper/middleware"
)

// agreeWithRouter replays one request per "METHOD /path" of reqs, a second
// apart, under the configuration doc (one policy) with the application's
// further routes app (--route), and serves the same
// requests at the same instants through the middleware built from doc,
// wrapping the handler of every route of the policy and of app in the
// router that routes registers (see muxRoutes, chiRoutes): the policy must decide the
// requests the middleware limits (those answered with a RateLimit
// header), and reject those it answers 429.
func agreeWithRouter(t *testing.T, doc string, app []string, routes func(patterns []string, wrap func(http.Handler) http.Handler) http.Handler, reqs ...[2]string) {
	t.Helper()
	cfg := parse(t, doc)
	var entries []logparse.Entry
	for i, mp := range reqs {
		entries = append(entries, logparse.Entry{Time: t0.Add(time.Duration(i) * time.Second), Addr: "192.0.2.1", Method: mp[0], Path: mp[1], Status: 200})
	}
	rep := replayEntries(t, doc, Options{Routes: app}, entries)

	clock := algotest.NewClock(t0)
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	m, err := middleware.FromConfig(store, cfg, middleware.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	h := routes(append(cfg.Definitions[0].Routes, app...), m.Handler)
	var requests, rejected int64
	for _, en := range entries {
		clock.Set(en.Time)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(en.Method, en.Path, nil))
		if w.Header().Get("RateLimit") != "" {
			requests++
		}
		if w.Code == http.StatusTooManyRequests {
			rejected++
		}
	}
	if requests == 0 || rejected == 0 {
		t.Fatalf("middleware: %d requests limited, %d rejected; the test wants some of each", requests, rejected)
	}
	if p := rep.Policies[0]; p.Requests != requests || p.Rejected != rejected {
		t.Errorf("replay: policy %s decided %d requests, rejected %d (%d unmatched); middleware: %d limited, %d answered 429", p.Name, p.Requests, p.Rejected, rep.Unmatched, requests, rejected)
	}
}

// muxRoutes registers the route patterns in a ServeMux, each serving an
// empty 200 through wrap.
func muxRoutes(patterns []string, wrap func(http.Handler) http.Handler) http.Handler {
	mux := http.NewServeMux()
	ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, r := range patterns {
		mux.Handle(r, wrap(ok))
	}
	return mux
}

// chiRoutes registers the route patterns in a chi router ("POST /login"
// on POST only), each serving an empty 200 through wrap.
func chiRoutes(patterns []string, wrap func(http.Handler) http.Handler) http.Handler {
	r := chi.NewRouter()
	ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, p := range patterns {
		r.With(wrap).Handle(p, ok)
	}
	return r
}

// TestRouteOfOneMethodDoesNotShadowAnother: under routes of which one
// has a method ("POST /login") and another matches every method ("/"), a
// GET /login is the "/" route's in a ServeMux (the "POST /login" route is
// not GET's), so the policy on both routes limits it; the replay also
// registered "/login" by its path alone, gave GET /login that route, and
// left the request unmatched: it reported fewer rejections than the
// middleware answers 429.
func TestRouteOfOneMethodDoesNotShadowAnother(t *testing.T) {
	reqs := [][2]string{{"GET", "/login"}, {"POST", "/login"}, {"GET", "/login"}, {"GET", "/other"}, {"POST", "/login"}}
	for _, tc := range []struct{ name, routes string }{
		{"method route first", `["POST /login", "/"]`},
		{"catch-all first", `["/", "POST /login"]`},
		{"GET route", `["POST /login", "GET /"]`},
		{"route key", `["POST /login", "/"], key: route`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agreeWithRouter(t, "policies:\n  - {name: a, limit: 1, window: 1m, routes: "+tc.routes+"}\n", nil, muxRoutes, reqs...)
		})
	}
}

// TestChiRouteOfOneMethodDoesNotShadowAnother is the same through chi,
// with routes only chi registers (a regexp wildcard makes the replay
// resolve them with chi): a GET to the path of a route on POST only falls
// to the catch-all "/*" in chi, and a HEAD to one on GET only to a route
// of every method of the same path ("/items/{slug}"; chi has no HEAD for
// a GET route, and its GetHead middleware leaves a request a HEAD route
// matches alone). The replay looked every path up for GET alone.
func TestChiRouteOfOneMethodDoesNotShadowAnother(t *testing.T) {
	for _, tc := range []struct {
		name, routes string
		app          []string
		reqs         [][2]string
	}{
		{"catch-all", `["POST /login", "/*", "/items/{id:[0-9]+}"]`, nil,
			[][2]string{{"GET", "/login"}, {"POST", "/login"}, {"GET", "/login"}, {"GET", "/other"}, {"GET", "/items/1"}}},
		{"HEAD", `["GET /items/{id:[0-9]+}"]`, []string{"/items/{slug}"},
			[][2]string{{"GET", "/items/12"}, {"HEAD", "/items/13"}, {"GET", "/items/14"}, {"HEAD", "/items/15"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agreeWithRouter(t, "policies:\n  - {name: a, limit: 1, window: 1m, routes: "+tc.routes+"}\n", tc.app, chiRoutes, tc.reqs...)
		})
	}
}

// TestMuxRedirectIsNoRoute: a request the application's ServeMux answers
// with a redirect of its own (to the cleaned path: /a/../login, //login;
// to the path with a trailing slash: /items for "/items/") never reaches
// a route's handler, and the client sends it again to the new path, which
// the log has on a line of its own. The middleware does not count the
// redirect under the route's policies (policy.MuxRedirect); the replay
// counted it under the route it leads to, so that each such request
// counted twice and the replay rejected requests the middleware admits.
func TestMuxRedirectIsNoRoute(t *testing.T) {
	reqs := [][2]string{{"GET", "/a/../login"}, {"GET", "/login"}, {"GET", "//login"}, {"GET", "/items"}, {"GET", "/items/"}, {"POST", "/login"}, {"GET", "/items/./"}, {"GET", "/items/"}}
	for _, routes := range []string{`["/login", "/items/"]`, `["GET /login", "/items/"]`, `["POST /login", "/login", "GET /items/"]`} {
		t.Run(routes, func(t *testing.T) {
			agreeWithRouter(t, "policies:\n  - {name: a, limit: 1, window: 1m, routes: "+routes+"}\n", nil, muxRoutes, reqs...)
		})
	}
}

// TestServeMuxRouteKeyKeepsMethod: a ServeMux route pattern is the route
// key as registered, its method kept (keyfunc.Route): under "GET
// /items/{id}" and "DELETE /items/{id}" a client's GETs and DELETEs are
// two keys, and a HEAD request routed to a "HEAD /x" pattern is not under
// a policy on "GET /x" (policy.Set.Match). The replay keyed every route
// by its path alone, so that the GETs and DELETEs shared one key and it
// rejected requests the middleware admits, and it put the HEAD request
// under the GET route's policy.
func TestServeMuxRouteKeyKeepsMethod(t *testing.T) {
	reqs := [][2]string{{"GET", "/items/1"}, {"DELETE", "/items/1"}, {"GET", "/items/2"}, {"DELETE", "/items/3"}}
	for _, key := range []string{"route", "[ip, route]", "[route, method]"} {
		t.Run(key, func(t *testing.T) {
			agreeWithRouter(t, "policies:\n  - {name: a, limit: 1, window: 1m, key: "+key+", routes: [\"GET /items/{id}\", \"DELETE /items/{id}\"]}\n", nil, muxRoutes, reqs...)
		})
	}
	t.Run("HEAD pattern", func(t *testing.T) {
		agreeWithRouter(t, "policies:\n  - {name: a, limit: 1, window: 1m, routes: [\"GET /x\"]}\n", []string{"HEAD /x"}, muxRoutes,
			[][2]string{{"GET", "/x"}, {"HEAD", "/x"}, {"GET", "/x"}, {"HEAD", "/x"}}...)
	})
}

// TestJoinedRouteKeyReadable: a ServeMux pattern with its method holds a
// space, so keyfunc.Join writes it in a key as a digest; the replay's
// report shows the route, not the digest.
func TestJoinedRouteKeyReadable(t *testing.T) {
	var entries []logparse.Entry
	for i := range 3 {
		entries = append(entries, logparse.Entry{Time: t0.Add(time.Duration(i) * time.Second), Addr: "192.0.2.1", Method: "GET", Path: "/items/1", Status: 200})
	}
	rep := replayEntries(t, "policies:\n  - {name: a, limit: 1, window: 1m, key: [ip, route], routes: [\"GET /items/{id}\"]}\n", Options{}, entries)
	top := rep.Policies[0].Top
	if want := "192.0.2.1 + GET /items/{id}"; len(top) != 1 || top[0].Key != want || top[0].Count != 2 {
		t.Errorf("most rejected keys %+v, want %q rejected 2 times", top, want)
	}
}
