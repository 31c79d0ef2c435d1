package policy_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestServeMuxPatternRedirect: for a request the ServeMux answers with a
// redirect of its own (the trailing-slash one, /login to /login/, and the
// one to the cleaned path, /a/../login/ to /login/), ServeMux.Handler
// reports the pattern that will match after the redirect, and
// ServeMuxPattern passed it on: a policy on "POST /login/" counted the
// redirect, then the client's POST to /login/ again, two units for one
// login. ServeMuxPattern now reports policy.MuxRedirect for such a
// request, which no route matches.
//
// The answer is checked against what the mux does with each request, for
// every path made of a few segments (dot, empty and escaped ones among
// them), with and without a trailing slash, for GET, POST and CONNECT:
// the mux redirected (307; the redirect registered as a route answers
// 301) exactly when ServeMuxPattern says MuxRedirect, and otherwise
// ServeMuxPattern reports the pattern the mux routed by.
func TestServeMuxPatternRedirect(t *testing.T) {
	mux := http.NewServeMux()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(299) // neither a redirect nor the mux's 404, 405 and 400
	})
	patterns := []string{
		"POST /login/", "GET /a/{$}", "/b/{rest...}", "/c/{x}/", "/c/{x}/d",
		"GET /e", "CONNECT /f/", "/g/%2F/", "/x/y/z/",
	}
	for _, p := range patterns {
		mux.Handle(p, h)
	}
	// A redirect registered as a route is the route's, not the mux's own.
	mux.Handle("/old/", http.RedirectHandler("/new", http.StatusMovedPermanently))
	pattern := policy.ServeMuxPattern(mux)

	segs := []string{"login", "a", "b", "c", "d", "e", "f", "g", "old", "x", "y", "z", "q", ".", "..", "", "%2F", "%2E%2E"}
	var paths []string
	var grow func(prefix string, depth int)
	grow = func(prefix string, depth int) {
		paths = append(paths, prefix, prefix+"/")
		if depth == 3 {
			return
		}
		for _, s := range segs {
			grow(prefix+"/"+s, depth+1)
		}
	}
	grow("", 0)
	redirects := 0
	for _, method := range []string{"GET", "POST", "CONNECT"} {
		for _, path := range paths {
			target := path
			if target == "" {
				if method == "CONNECT" {
					continue // its absolute form is an authority
				}
				target = "http://example.com" // absolute form, no path
			}
			r := httptest.NewRequest(method, target, nil)
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, r)
			routed := r.Pattern // ServeHTTP sets it
			got := pattern(httptest.NewRequest(method, target, nil))
			switch {
			case w.Code == http.StatusTemporaryRedirect:
				redirects++
				if got != policy.MuxRedirect {
					t.Errorf("%s %q: the mux redirected to %q; ServeMuxPattern = %q, want policy.MuxRedirect",
						method, target, w.Header().Get("Location"), got)
				}
			case w.Code == 299 || w.Code == http.StatusMovedPermanently:
				if got != routed {
					t.Errorf("%s %q: routed by %q; ServeMuxPattern = %q", method, target, routed, got)
				}
			default: // 404, 405
				if got != "" {
					t.Errorf("%s %q: the mux answered %d; ServeMuxPattern = %q, want \"\"", method, target, w.Code, got)
				}
			}
		}
	}
	if redirects == 0 {
		t.Fatal("no request was redirected; the test proves nothing")
	}

	// "OPTIONS *" is answered 400 by the mux, before routing.
	r := httptest.NewRequest("OPTIONS", "*", nil)
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	if got := pattern(r); w.Code != http.StatusBadRequest || got != "" {
		t.Errorf("OPTIONS *: the mux answered %d; ServeMuxPattern = %q, want \"\"", w.Code, got)
	}
}

// TestServeMuxRedirectNotUnderRoute: the redirect of POST /login to
// /login/ is under no policy with routes, and is not unrouted either (the
// Set's WithUnroutedFunc is not called): the mux knew what to do with it.
func TestServeMuxRedirectNotUnderRoute(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /login/", func(http.ResponseWriter, *http.Request) {})
	login := policy.Must(policy.PerMinute("login", 5, remoteKey, policy.WithRoutes("POST /login/")))
	unrouted := 0
	s, err := policy.NewSet([]*policy.Policy{login}, policy.WithPatternFunc(policy.ServeMuxPattern(mux)),
		policy.WithUnroutedFunc(func(*http.Request) { unrouted++ }))
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"/login", "/a/../login/", "//login/"} {
		if got := s.Match(httptest.NewRequest("POST", target, nil)); got != 0 {
			t.Errorf("Match(POST %s) = %b, want 0 (a redirect of the mux's own)", target, got)
		}
	}
	if got := s.Match(httptest.NewRequest("POST", "/login/", nil)); got != 1 {
		t.Errorf("Match(POST /login/) = %b, want 1", got)
	}
	if unrouted != 0 {
		t.Errorf("the unrouted func ran %d times, want 0", unrouted)
	}

	// A route key part keys the redirect apart from the route it leads to.
	perRoute := policy.Must(policy.PerMinute("per-route", 5, keyfunc.Must(keyfunc.Join(keyfunc.Route()))))
	s, err = policy.NewSet([]*policy.Policy{perRoute}, policy.WithPatternFunc(policy.ServeMuxPattern(mux)))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, target := range []string{"/login", "/login/"} {
		r := httptest.NewRequest("POST", target, nil)
		var res policy.Result
		if err := s.Prepare(r, s.Match(r), &res); err != nil || res.Len() != 1 {
			t.Fatalf("Prepare(POST %s) = %v, %d checks", target, err, res.Len())
		}
		keys = append(keys, res.Key(0))
	}
	if want := []string{"per-route:10:(redirect)", "per-route:#"}; keys[0] != want[0] || !strings.HasPrefix(keys[1], want[1]) {
		t.Errorf("route keys of POST /login (redirected) and POST /login/ = %q, want %q and a digest of the pattern", keys, want)
	}
}

// TestServeMuxPatternUnrootedPath: behind http.StripPrefix("/api/"), a
// request to /api/x reaches the mux with the unrooted path "x", which the
// mux redirects (to the rooted path) rather than routing it to "GET /x":
// ServeMuxPattern says MuxRedirect, as for any path the mux cleans. So
// for "files/a/b", whose route "GET /files/{rest...}" holds no more '/'
// than it (the redirect is not seen by counting them).
func TestServeMuxPatternUnrootedPath(t *testing.T) {
	mux := http.NewServeMux()
	routed := func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(299) }
	mux.HandleFunc("GET /x", routed)
	mux.HandleFunc("GET /files/{rest...}", routed) // no more '/' than "files/a/b"
	pattern := policy.ServeMuxPattern(mux)
	var got string
	h := http.StripPrefix("/api/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = pattern(r)
		mux.ServeHTTP(w, r)
	}))
	for _, tt := range []struct {
		target string
		code   int
		want   string
	}{
		{"/api/x", http.StatusTemporaryRedirect, policy.MuxRedirect},
		{"/api/files/a/b", http.StatusTemporaryRedirect, policy.MuxRedirect},
		{"/api//x", 299, "GET /x"},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", tt.target, nil))
		if w.Code != tt.code || got != tt.want {
			t.Errorf("GET %s behind StripPrefix(\"/api/\"): the mux answered %d, ServeMuxPattern = %q; want %d, %q", tt.target, w.Code, got, tt.code, tt.want)
		}
	}
}
