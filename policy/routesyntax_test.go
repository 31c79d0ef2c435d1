package policy_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/policy"
)

// routeError checks that err is the *policy.Error of WithRoutes naming
// the policy "login", the field Routes and route.
func routeError(t *testing.T, route string, err error) {
	t.Helper()
	var pe *policy.Error
	if !errors.As(err, &pe) || pe.Policy != "login" || pe.Field != "Routes" || !strings.Contains(pe.Reason, `"`+route+`"`) &&
		!strings.Contains(pe.Reason, strings.ReplaceAll(strings.ReplaceAll(route, "\t", `\t`), "\n", `\n`)) {
		t.Errorf("WithRoutes(%q) = %v; want a *policy.Error naming the policy, Routes and the route", route, err)
	}
}

// TestWithRoutesRefusesBlanks: a route holding a blank in its path, such
// as "POST /login " (a trailing space) or "/login POST" (the method after
// the path), was accepted, and the policy never applied to the route
// meant: a login limit that let every attempt through. ServeMux and chi
// take the first blank for the end of the method, so "/login POST" is
// refused by both (the method "/login"), and "POST /login " is the route
// of /login%20 for ServeMux. They are now refused with an error naming
// the policy, the field and the route.
func TestWithRoutesRefusesBlanks(t *testing.T) {
	for _, route := range []string{"POST /login ", "/login POST", "POST /login\t", "POST /login\n", "POST /log in", "POST /login /", "POST /a}/b c"} {
		p, err := policy.Login(remoteKey, policy.WithRoutes(route))
		if err == nil {
			// What the policy did: it never applied to POST /login,
			// under ServeMux nor chi.
			s, _ := policy.NewSet([]*policy.Policy{p})
			var got []uint64
			match := func(w http.ResponseWriter, r *http.Request) { got = append(got, s.Match(r)) }
			mux := http.NewServeMux()
			mux.HandleFunc("POST /login", match)
			mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/login", nil))
			r := chi.NewRouter()
			r.Post("/login", match)
			r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/login", nil))
			t.Errorf("WithRoutes(%q) accepted; Match of POST /login under ServeMux and chi = %v", route, got)
			continue
		}
		routeError(t, route, err)
	}
}

// TestWithRoutesAsRoutersRegister: a route is accepted exactly when
// ServeMux or chi registers it (Handle does not panic), for routes with a
// method and a path (hosts aside, which a route may not name, and blanks,
// see TestWithRoutesRefusesBlanks). Unclosed braces, duplicate names and
// bad regexps, which both routers refuse, were accepted: such a policy
// never applied. A chi pattern (a regexp, a mid-segment parameter, "/*")
// and a ServeMux one ({$}, {name...}) are accepted.
func TestWithRoutesAsRoutersRegister(t *testing.T) {
	routes := []string{
		// refused by both
		"/users/{id", "GET /users/{id", "/{id:[0-9}", "/{a}/{a}", "POST /{a}/x/{a}", "/x/{y}*/z",
		"/a}b{", "GET /users/{id:(}", "/{", "/x/{y}{", "/*/{id", "GET /{a:x{}",
		// accepted by ServeMux
		"/", "POST /login", "GET /a/{$}", "/b/{rest...}", "/c/{x}/", "/a/*/b", "/*/{id}", "/x/../y",
		"CONNECT /x/../y", "/a}", "/%7Bx%7D", "/{x...}/y", "/{$}/x", "/{}",
		// accepted by chi
		"/files/{name}.{ext}", "GET /items/{id:[0-9]+}", "/api/*", "GET /names/{n:[a-z ]+}",
		"/{id:[0-9]{3}}", "GET /a/../b", "/x//y", "/u{id}", "/{a:x*}/{b}", "/{id:}",
		// mixed
		"GET /{x...}", "GET /{$}", "/{1}",
		// refused by chi (a '*' inside the path), so ServeMux decides
		"/a*b/{$}/c", "/a*b/{x...}/c", "/a*b/{}", "/a*b/{1x}", "/a*b/{x1}", "/a*b/{_}", "/a*b/{é}",
		"/a*b/x{y}", "/a*b/{x}y", "/a*b/{x}/{x}", "/a*b/{x}", "/a*b/{x...}", "/a*b/{$}", "/a*b/",
		"GET /a*b/../c", "CONNECT /a*b/../c", "/a*b/../c", "GET /a*b//c", "GET /a*b/c/", "/a*b//{x}",
		// refused by ServeMux (a wildcard not a whole segment), so chi decides
		"/u{id}/*", "/u{id}*", "/u{id}/x*/y", "/u{id}/{x:a{2}}", "/u{id}/{x:^a$}", "/u{id}/{x:^a}",
		"/u{id}/{x:a$}", "/u{id}/{x:(}", "/u{id}/{x:a*}", "/u{id}/{x:a*}*", "/u{id}/{x}{y:a*}",
		"/u{id}/{id}", "/u{id}/{x:}",
	}
	nop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	registers := func(register func()) (ok bool) {
		defer func() { ok = recover() == nil }()
		register()
		return true
	}
	for _, route := range routes {
		byMux := registers(func() { http.NewServeMux().Handle(route, nop) })
		byChi := registers(func() { chi.NewRouter().Handle(route, nop) })
		_, err := policy.Login(remoteKey, policy.WithRoutes(route))
		switch {
		case (byMux || byChi) && err != nil:
			t.Errorf("WithRoutes(%q) = %v; ServeMux registers it: %v, chi: %v", route, err, byMux, byChi)
		case !byMux && !byChi && err == nil:
			t.Errorf("WithRoutes(%q) accepted; neither ServeMux nor chi registers it", route)
		case err != nil:
			routeError(t, route, err)
		}
	}
}

// TestWithRoutesChiPatternsApply: routes only chi registers apply under
// chi, as before.
func TestWithRoutesChiPatternsApply(t *testing.T) {
	for _, tt := range []struct{ route, register, target string }{
		{"GET /files/{name}.{ext}", "/files/{name}.{ext}", "/files/a.txt"},
		{"GET /items/{id:[0-9]{3}}", "/items/{id:[0-9]{3}}", "/items/123"},
		{"GET /api/*", "/api/*", "/api/x/y"},
	} {
		p, err := policy.Login(remoteKey, policy.WithRoutes(tt.route))
		if err != nil {
			t.Fatalf("WithRoutes(%q) = %v", tt.route, err)
		}
		s, _ := policy.NewSet([]*policy.Policy{p})
		var got uint64
		r := chi.NewRouter()
		r.Get(tt.register, func(w http.ResponseWriter, req *http.Request) { got = s.Match(req) })
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", tt.target, nil))
		if got != 1 {
			t.Errorf("%s: Match of GET %s under chi = %b, want 1", tt.route, tt.target, got)
		}
	}
}

// TestConfigRouteWithTrailingBlank: in a config file a quoted route with
// a trailing space ("POST /login ") is refused at its entry, as WithRoutes
// refuses it.
func TestConfigRouteWithTrailingBlank(t *testing.T) {
	const doc = "policies:\n  - name: login\n    limit: 5\n    window: 1m\n    routes:\n      - \"POST /login \"\n      - POST /register\n"
	_, err := policy.ParseConfig([]byte(doc), "c.yaml")
	errs := policy.ConfigErrors(err)
	if len(errs) != 1 || errs[0].Field != "policies[0].routes" || errs[0].Line != 6 || !strings.Contains(err.Error(), `"POST /login "`) {
		t.Errorf("ParseConfig = %v; want one error at policies[0].routes, line 6, naming the route", err)
	}
}
