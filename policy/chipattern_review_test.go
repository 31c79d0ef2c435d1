package policy_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestChiPatternEmptyPath: a request in absolute form without a path
// ("GET http://host HTTP/1.1") reaches the handler with an empty URL.Path;
// chi routes it as "/", so ChiPattern must answer "/" too. It asked Find
// with "" and answered "", so such requests escaped the policies of the
// root route (and of a catch-all "/*"). Sent over a real connection to a
// real server.
func TestChiPatternEmptyPath(t *testing.T) {
	r := chi.NewRouter()
	find := policy.ChiPattern(r)
	type seen struct{ path, asked, served string }
	got := make(chan seen, 1)
	var asked string
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			asked = find(req)
			next.ServeHTTP(w, req)
		})
	})
	r.Get("/", func(w http.ResponseWriter, req *http.Request) {
		got <- seen{req.URL.Path, asked, chi.RouteContext(req.Context()).RoutePattern()}
	})
	srv := httptest.NewServer(r)
	defer srv.Close()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET http://%s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", srv.Listener.Addr(), srv.Listener.Addr())
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200 (chi serves the root route)", resp.StatusCode)
	}
	s := <-got
	if s.path != "" {
		t.Fatalf("URL.Path = %q, the test needs the empty path", s.path)
	}
	if s.asked != s.served || s.served != "/" {
		t.Errorf("ChiPattern = %q, chi routed to %q", s.asked, s.served)
	}
}
