package replay

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// replayRoutes replays one request per "METHOD /path" of reqs, a second
// apart, under config, and returns each policy's requests and rejections.
func replayRoutes(t *testing.T, config string, opts Options, reqs ...[2]string) map[string][2]int64 {
	t.Helper()
	e, err := New(parse(t, config), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	for i, r := range reqs {
		en := logparse.Entry{Time: t0.Add(time.Duration(i) * time.Second), Addr: "192.0.2.1", Method: r[0], Path: r[1]}
		if err := e.Add(&en); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := e.Finish()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][2]int64{}
	for _, p := range rep.Policies {
		out[p.Name] = [2]int64{p.Requests, p.Rejected}
	}
	return out
}

// TestRoutesOfDifferentMethods: a rule table whose routes differ by method
// and name their wildcards differently ("GET /items/{id}", "DELETE
// /items/{item}") is valid (check accepts it, a ServeMux registers both),
// and each request is under the policy of its method's route. Replay
// registered the patterns by their paths alone, which conflict, and
// refused the configuration.
func TestRoutesOfDifferentMethods(t *testing.T) {
	got := replayRoutes(t, `policies:
  - {name: read, limit: 5, window: 1m, routes: ["GET /items/{id}"]}
  - {name: del, limit: 1, window: 1m, routes: ["DELETE /items/{item}"]}
  - {name: rk, limit: 100, window: 1m, key: route}
`, Options{},
		[2]string{"GET", "/items/3"}, [2]string{"DELETE", "/items/3"}, [2]string{"DELETE", "/items/4"},
		[2]string{"HEAD", "/items/5"}, [2]string{"POST", "/items/6"})
	want := map[string][2]int64{
		"read": {2, 0}, // GET and HEAD
		"del":  {2, 1}, // the second DELETE rejected
		"rk":   {5, 0}, // every request has a route (POST: by its path alone), none rejected by rk
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: requests, rejected = %v, want %v", name, got[name], w)
		}
	}
}

// TestChiRoutePatterns: a policy's routes may be chi route patterns
// (policy.WithRoutes, README): regexp wildcards, wildcards within a
// segment, a catch-all "/*". A ServeMux cannot register them, and replay
// refused such a valid configuration (exit 2); it resolves them as chi
// does.
func TestChiRoutePatterns(t *testing.T) {
	got := replayRoutes(t, `policies:
  - {name: num, limit: 5, window: 1m, routes: ["GET /items/{id:[0-9]+}"]}
  - {name: file, limit: 5, window: 1m, routes: ["/files/{name}.{ext}"]}
  - {name: api, limit: 1, window: 1m, routes: ["/api/*"]}
  - {name: rk, limit: 100, window: 1m, key: route}
`, Options{Routes: []string{"/items/{slug}"}},
		[2]string{"GET", "/items/12"},       // num
		[2]string{"GET", "/items/ab"},       // not num: /items/{slug}
		[2]string{"HEAD", "/items/13"},      // not num: chi routes a HEAD to /items/{slug}, of every method, not to a GET route
		[2]string{"POST", "/items/14"},      // not num (GET only)
		[2]string{"GET", "/files/a.txt"},    // file
		[2]string{"PUT", "/api/x/y"},        // api
		[2]string{"GET", "/api/"},           // api: rejected
		[2]string{"GET", "/nowhere/at/all"}, // no route: rk keys it (none), as the middleware with policy.ChiPattern
	)
	want := map[string][2]int64{
		"num":  {1, 0},
		"file": {1, 0},
		"api":  {2, 1},
		"rk":   {8, 0},
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: requests, rejected = %v, want %v", name, got[name], w)
		}
	}
}
