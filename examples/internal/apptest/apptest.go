// Package apptest is the scenario both example servers (examples/chi and
// examples/stdlib) must pass: the same limits, the same answers; and the
// checks of an example's command, run in a child process (Main, Command):
// a port in use, an argument after the flags, Ctrl-C or SIGTERM.
package apptest

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// Run builds a server with newHandler on an in-memory store with a manual
// clock and checks, over real HTTP: the global policies' headers, the sixth
// login of one user within a minute refused with Retry-After 61 while
// another user passes, a login without a user or with a form past 64 KiB
// answered 400, and a
// signed-in user's comments limited to a burst of 3.
func Run(t *testing.T, newHandler func(algorithms.Store) (http.Handler, error)) {
	t.Helper()
	clock := algotest.NewClock(time.Unix(1_700_000_040, 0))
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	h, err := newHandler(store)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	resp, err := srv.Client().Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got, want := resp.Header.Get("RateLimit-Policy"), `"per-second";q=10;w=1, "per-minute";q=100;w=60`; resp.StatusCode != 200 || got != want {
		t.Errorf("GET /: %d RateLimit-Policy %q, want 200 %q", resp.StatusCode, got, want)
	}

	login := func(user string) *http.Response {
		resp, err := srv.Client().PostForm(srv.URL+"/login", url.Values{"username": {user}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for i := range 5 {
		if resp := login("ann"); resp.StatusCode != 200 {
			t.Fatalf("login %d: %d", i+1, resp.StatusCode)
		}
	}
	resp = login("ann")
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "61" || resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("6th login: %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if got := strings.Join(resp.Header.Values("RateLimit"), ", "); !strings.HasSuffix(got, `"login";r=0;t=61`) {
		t.Errorf("6th login RateLimit %q", got)
	}
	if resp := login("bob"); resp.StatusCode != 200 {
		t.Errorf("another user: %d", resp.StatusCode)
	}
	if resp := login(""); resp.StatusCode != 400 {
		t.Errorf("login without a user: %d, want 400", resp.StatusCode)
	}
	// The user name is read before the limit is decided, from at most
	// 64 KiB of the body: past it, the form has no user.
	resp, err = srv.Client().PostForm(srv.URL+"/login", url.Values{"username": {"carol"}, "pad": {strings.Repeat("x", 64<<10)}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("login form past 64 KiB: %d, want 400", resp.StatusCode)
	}

	// Comments: a signed-in user gets a burst of 3 (two seconds on: the
	// nine requests above still weigh on the next second's sliding window).
	clock.Advance(2 * time.Second)
	codes := ""
	for range 4 {
		r, _ := http.NewRequest("POST", srv.URL+"/comments", nil)
		r.SetBasicAuth("ann", "x")
		resp, err := srv.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codes += " " + resp.Status[:3]
	}
	if codes != " 200 200 200 429" {
		t.Errorf("comments: %s", codes)
	}
}
