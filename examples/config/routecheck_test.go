package main

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
)

// typoSample returns the sample configuration with the login policy's
// route misspelt ("POST /logn"), and with per-minute's limit changed to
// limit, so that a test can see whether the rest of the file applied.
func typoSample(t *testing.T, limit string) []byte {
	t.Helper()
	sample, err := os.ReadFile("ratekeeper.yaml")
	if err != nil {
		t.Fatal(err)
	}
	typo := bytes.Replace(sample, []byte(`routes: ["POST /login"]`), []byte(`routes: ["POST /logn"]`), 1)
	typo = bytes.Replace(typo, []byte("limit: 300"), []byte("limit: "+limit), 1)
	if bytes.Equal(typo, sample) || !bytes.Contains(typo, []byte("POST /logn")) {
		t.Fatal("the sample changed: no login route to misspell")
	}
	return typo
}

// TestRouteTypoRefusedAtStart: a file whose login policy names a route
// the server lacks would serve without a login limit, silently; the
// server refuses to start, the error naming the file and the route.
func TestRouteTypoRefusedAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ratekeeper.yaml")
	save(t, path, typoSample(t, "300"))
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	s, err := newServer(path, serverOptions{store: store, reg: prometheus.NewRegistry(), log: slog.New(slog.DiscardHandler)})
	if err == nil {
		s.Close()
		t.Fatal("newServer with a login route the server lacks = nil error, want it refused")
	}
	if !errors.Is(err, middleware.ErrUnknownRoute) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `route "POST /logn"`) {
		t.Errorf("newServer = %v, want ErrUnknownRoute naming %s and the route", err, path)
	}
}

// TestRouteTypoRefusedAtReload: a reload whose file names a route the
// server lacks is refused whole, as a broken file is: the error is
// logged ("config rejected", naming the route), and the rules in
// force keep running, login's limit with them; the rest of the file (a
// per-minute limit of 3) is not applied either.
func TestRouteTypoRefusedAtReload(t *testing.T) {
	w := serveSample(t, nil)
	path, srv, events, logs := w.path, w.srv, w.events, w.logs

	save(t, path, typoSample(t, "3"))
	e := await(t, events, "the file changed; no reload")
	if !errors.Is(e.err, middleware.ErrUnknownRoute) || !strings.Contains(e.err.Error(), `route "POST /logn"`) {
		t.Fatalf("reload of a file with a login route the server lacks = %v, want ErrUnknownRoute naming it", e.err)
	}
	if log := logs.String(); !strings.Contains(log, "config rejected") || !strings.Contains(log, "POST /logn") {
		t.Errorf("log after the refused reload does not say so, nor name the route:\n%s", log)
	}
	req, _ := http.NewRequest("POST", srv.URL+"/login", nil)
	req.Header.Set("X-Login-User", "ann")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got, want := resp.Header.Get("RateLimit-Policy"), `"per-second";q=20;w=1, "per-minute";q=300;w=60, "login";q=5;w=60`; got != want {
		t.Errorf("POST /login after the refused reload: RateLimit-Policy %q, want the rules in force %q", got, want)
	}
}
