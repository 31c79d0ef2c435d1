package middleware_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestUnroutedIsReported: a middleware wrapping a whole ServeMux without
// WithPatternFunc runs before the mux routes, so no request's route is
// known and a policy restricted to POST /login never applies. That went
// unnoticed: every login got through, with no error and no count. The
// middleware now counts such requests (Stats.Unrouted) and tells the
// error handler once, with ErrUnrouted.
func TestUnroutedIsReported(t *testing.T) {
	store, _ := newStore(t)
	login := policy.Must(policy.Login(remote, policy.WithRoutes("POST /login")))
	mux := http.NewServeMux()
	mux.Handle("POST /login", ok)
	mux.Handle("/", ok)
	var reported []error
	m := middleware.MustNew(store, []*policy.Policy{login},
		middleware.WithErrorHandler(func(_ *http.Request, err error) { reported = append(reported, err) }))
	h := m.Handler(mux)
	for range 7 {
		if w := serve(h, "POST", "/login"); w.Code != 200 {
			t.Fatalf("POST /login: %d; the unrouted policy was not expected to apply", w.Code)
		}
	}
	if got := m.Stats().Unrouted; got != 7 {
		t.Errorf("Stats().Unrouted = %d, want 7", got)
	}
	if len(reported) != 1 || !errors.Is(reported[0], middleware.ErrUnrouted) ||
		!strings.Contains(reported[0].Error(), `"login"`) || !strings.Contains(reported[0].Error(), "WithPatternFunc") {
		t.Errorf("reported %v, want ErrUnrouted once, naming the policy and WithPatternFunc", reported)
	}

	// Installed as documented, with the mux's patterns: routed requests
	// are not counted; a 404, whose route is unknown too, is.
	m = middleware.MustNew(store, []*policy.Policy{login}, middleware.WithPatternFunc(policy.ServeMuxPattern(mux)))
	h = m.Handler(mux)
	serve(h, "POST", "/login")
	serve(h, "GET", "/anything")
	if got := m.Stats().Unrouted; got != 0 {
		t.Errorf("with ServeMuxPattern, Stats().Unrouted = %d, want 0", got)
	}
	strict := http.NewServeMux()
	strict.Handle("POST /login", ok)
	m = middleware.MustNew(store, []*policy.Policy{login}, middleware.WithPatternFunc(policy.ServeMuxPattern(strict)))
	if w := serve(m.Handler(strict), "GET", "/nowhere"); w.Code != 404 {
		t.Fatalf("GET /nowhere: %d, want 404", w.Code)
	}
	if got := m.Stats().Unrouted; got != 1 {
		t.Errorf("a 404: Stats().Unrouted = %d, want 1", got)
	}
	// A Set without route-restricted policies never looks the route up.
	m = middleware.MustNew(store, []*policy.Policy{fixed("plain", 100, 1e9, remote)})
	serve(m.Handler(mux), "GET", "/")
	if got := m.Stats().Unrouted; got != 0 {
		t.Errorf("no routes: Stats().Unrouted = %d, want 0", got)
	}
}

// TestUnroutedReportHasNoPath: the ErrUnrouted report, which error
// handlers log, does not carry the request's path (a reset token, say):
// the handler has the request if it wants it.
func TestUnroutedReportHasNoPath(t *testing.T) {
	store, _ := newStore(t)
	login := policy.Must(policy.Login(remote, policy.WithRoutes("POST /login")))
	var reported []error
	m := middleware.MustNew(store, []*policy.Policy{login},
		middleware.WithErrorHandler(func(_ *http.Request, err error) { reported = append(reported, err) }))
	serve(m.Handler(ok), "GET", "/reset/s3cr3t-t0ken")
	if len(reported) != 1 || !errors.Is(reported[0], middleware.ErrUnrouted) {
		t.Fatalf("reported %v, want ErrUnrouted once", reported)
	}
	if msg := reported[0].Error(); strings.Contains(msg, "s3cr3t") || !strings.Contains(msg, "GET") {
		t.Errorf("report %q: want the method and not the path", msg)
	}
}

// TestUnroutedReportWithPatternFunc: a middleware given a pattern function
// (as examples/config and the README's configuration code are) meets a
// request no route serves, a 404 such as the /favicon.ico a browser asks
// for on its first visit. The report told it to "give it WithPatternFunc",
// which it has, as if the setup were wrong; then it said that the function
// found no route, still as a setup warning. The function found no route
// because there is none: the request is counted, and not reported (see
// TestUnrouted404NoSetupWarning).
func TestUnroutedReportWithPatternFunc(t *testing.T) {
	store, _ := newStore(t)
	login := policy.Must(policy.Login(remote, policy.WithRoutes("POST /login")))
	mux := http.NewServeMux()
	mux.Handle("POST /login", ok)
	var reported []error
	m := middleware.MustNew(store, []*policy.Policy{login},
		middleware.WithPatternFunc(policy.ServeMuxPattern(mux)),
		middleware.WithErrorHandler(func(_ *http.Request, err error) { reported = append(reported, err) }))
	if w := serve(m.Handler(mux), "GET", "/favicon.ico"); w.Code != 404 {
		t.Fatalf("GET /favicon.ico: %d, want 404", w.Code)
	}
	if len(reported) != 0 {
		t.Errorf("reported %v for the mux's 404, want nothing", reported)
	}
	if got := m.Stats().Unrouted; got != 1 {
		t.Errorf("Stats().Unrouted = %d, want 1", got)
	}
}
