package ratekeeper_test

import (
	"go/format"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/readmetest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// readmeText returns README.md.
func readmeText(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// curlResponse renders resp as `curl -si` prints it over HTTP/1.1, with
// the header lines named (in this order) and the body as sent: what the
// README shows a new user of a response.
func curlResponse(t *testing.T, resp *http.Response, names ...string) string {
	t.Helper()
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("HTTP/1.1 " + resp.Status + "\n")
	for _, name := range names {
		for _, v := range resp.Header.Values(name) {
			b.WriteString(http.CanonicalHeaderKey(name) + ": " + v + "\n")
		}
	}
	b.WriteString("\n")
	b.Write(body)
	return b.String()
}

// TestReadmeQuickStart429: the README shows the 429 that the eleventh
// request of its first curl command gets from the quick start, header
// lines as curl prints them (Date and Content-Length left out) and the
// problem+json body, byte for byte; eleven requests at 0.6 s into a
// minute give it. A user could only read that the body is "an RFC 9457
// application/problem+json body naming the violated policies" and had to
// run the server to see one.
func TestReadmeQuickStart429(t *testing.T) {
	want := readmetest.BlockAfter(t, readmeText(t), "The eleventh request of the first `curl` above", "")

	clock, store := clockedStore(t)
	clock.Advance(600 * time.Millisecond)
	srv := httptest.NewServer(readmeQuickStart(store, hello, hello))
	defer srv.Close()
	resp := eleventhGet(t, srv)
	got := curlResponse(t, resp, "Cache-Control", "Content-Type", "RateLimit", "RateLimit-Policy", "Retry-After")
	if got != want {
		t.Errorf("the quick start's eleventh GET:\n%s\nREADME shows:\n%s", got, want)
	}
}

// eleventhGet sends the eleven GETs of the quick start's curl command to
// srv and returns the last response, its body unread.
func eleventhGet(t *testing.T, srv *httptest.Server) *http.Response {
	t.Helper()
	for range 10 {
		r, err := srv.Client().Get(srv.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
	}
	resp, err := srv.Client().Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestReadmeQuickStart429EarlyInSecond: the README's 429 has Retry-After: 1,
// but the eleven requests of its curl command sent in the first tenth of a
// second (1 time in 10) get Retry-After: 2 and per-second's t=2: the ten
// admitted all fall in that second's window, and the sliding window counter
// still weighs them more than 9 on the next one until 0.1 s into it, more
// than a second away. Run by hand, a user met the 2 with nothing in the
// README saying it may come; the paragraph before the block says so now.
func TestReadmeQuickStart429EarlyInSecond(t *testing.T) {
	clock, store := clockedStore(t)
	clock.Advance(50 * time.Millisecond)
	srv := httptest.NewServer(readmeQuickStart(store, hello, hello))
	defer srv.Close()
	resp := eleventhGet(t, srv)
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" || !strings.HasPrefix(resp.Header.Get("RateLimit"), `"per-second";r=0;t=2,`) {
		t.Fatalf("eleventh GET 50 ms into a second: %s, Retry-After %q, RateLimit %q; want 429, 2, per-second's t=2",
			resp.Status, resp.Header.Get("Retry-After"), resp.Header.Get("RateLimit"))
	}
	text := readmeText(t)
	_, para, _ := strings.Cut(text, "\nThe eleventh request of the first `curl` above")
	para, _, _ = strings.Cut(para, "```")
	if !strings.Contains(strings.Join(strings.Fields(para), " "), "`Retry-After` are 2") {
		t.Errorf("the README's paragraph before the quick start's 429 does not say that per-second's t and Retry-After are 2 when the burst starts early in a second:%s", para)
	}
}

// readmeBehindProxy is the README's code for a service behind load
// balancers with a sign-in middleware of its own, verbatim (between the
// markers): auth, home and healthz are the user's.
func readmeBehindProxy(store algorithms.Store, auth func(http.Handler) http.Handler, home, healthz http.HandlerFunc) http.Handler {
	// README:begin behindproxy
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}     // your load balancers
	ip := keyfunc.Must(keyfunc.IP(keyfunc.TrustedProxies(proxies...))) // the client, from their X-Forwarded-For
	who := keyfunc.Must(keyfunc.FirstOf(keyfunc.User(), ip))           // the signed-in user, else the client IP
	perClient := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.PerMinute("per-client", 100, who)),
	}, middleware.CheckForwardingFrom("X-Forwarded-For", proxies...), // the forwarding check, told of them too
		middleware.WithSkip(middleware.SkipPaths("/healthz"))) // the balancers' health check names no client

	r := chi.NewRouter()
	r.Use(auth) // yours, before the limiter: for a valid session, r.WithContext(keyfunc.WithUser(ctx, id))
	r.Use(perClient.Handler)
	r.Get("/healthz", healthz)
	r.Get("/", home)
	// README:end
	return r
}

// TestReadmeBehindProxy runs the README's code for a service behind
// load balancers with users signed in: clients behind the balancer are
// limited apart, by their X-Forwarded-For; a signed-in user is one client
// from any address; a client reaching the server directly cannot choose
// its key by sending the header; the balancers' health check passes
// unlimited, and a request from them naming no client is answered 400;
// nothing is reported as a forwarding header ignored, until a request
// comes from a private peer the prefixes leave out (a balancer forgotten).
func TestReadmeBehindProxy(t *testing.T) {
	readme := strings.Split(strings.TrimSuffix(readmetest.BlockAfter(t, readmeText(t), "Behind load balancers, with users signed in", "go"), "\n"), "\n")
	if tested := markedCodeNamed(t, "readme_newuser_test.go", "behindproxy"); !slices.Equal(trimLines(readme), tested) {
		t.Fatalf("the README's block is not the code tested here:\nREADME:\n%s\ntested:\n%s",
			strings.Join(readme, "\n"), strings.Join(tested, "\n"))
	}

	log := captureDefaultLog(t)

	_, store := clockedStore(t)
	auth := func(next http.Handler) http.Handler { // a stand-in: X-Test-User taken on trust
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u := r.Header.Get("X-Test-User"); u != "" {
				r = r.WithContext(keyfunc.WithUser(r.Context(), u))
			}
			next.ServeHTTP(w, r)
		})
	}
	h := readmeBehindProxy(store, auth, hello, hello)
	for _, c := range []struct {
		name, path, peer, xff, user string
		status                      int
		rateLimit                   string
	}{
		{"client 1 through the balancer", "/", "10.0.0.5:41000", "203.0.113.7", "", 200, `"per-client";r=99;t=120`},
		{"client 1 again, through another balancer", "/", "10.2.0.9:41000", "203.0.113.7", "", 200, `"per-client";r=98;t=90`},
		{"client 2 through the balancer: its own limit", "/", "10.0.0.5:41000", "198.51.100.9", "", 200, `"per-client";r=99;t=120`},
		{"ann signed in, from client 1", "/", "10.0.0.5:41000", "203.0.113.7", "ann", 200, `"per-client";r=99;t=120`},
		{"ann signed in, from another address: the same limit", "/", "10.0.0.5:41000", "192.0.2.44", "ann", 200, `"per-client";r=98;t=90`},
		{"a direct client naming client 2: keyed by its own address", "/", "203.0.113.9:50000", "198.51.100.9", "", 200, `"per-client";r=99;t=120`},
		{"the balancers' health check", "/healthz", "10.0.0.5:41000", "", "", 200, ""},
		{"a request from a balancer naming no client", "/", "10.0.0.5:41000", "", "", 400, ""},
	} {
		req := httptest.NewRequest("GET", c.path, nil)
		req.RemoteAddr = c.peer
		if c.xff != "" {
			req.Header.Set("X-Forwarded-For", c.xff)
		}
		if c.user != "" {
			req.Header.Set("X-Test-User", c.user)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if got := w.Result().Header.Get("RateLimit"); w.Code != c.status || got != c.rateLimit {
			t.Errorf("%s: %d, RateLimit %q; want %d, %q", c.name, w.Code, got, c.status, c.rateLimit)
		}
	}
	if out := log(); out != "" {
		t.Errorf("behind the declared balancers, the log says:\n%s\nwant nothing", out)
	}
	req := httptest.NewRequest("GET", "/", nil)
	req.RemoteAddr = "192.168.7.7:41000" // a balancer the prefixes leave out
	req.Header.Set("X-Forwarded-For", "203.0.113.7")
	h.ServeHTTP(httptest.NewRecorder(), req)
	if out := log(); strings.Count(out, "ratekeeper: setup warning") != 1 || !strings.Contains(out, "192.168.7.7") {
		t.Errorf("a forwarding header from a private peer outside the prefixes: the log says:\n%s\nwant one setup warning naming the peer", out)
	}
}

// readmeRuleTable is the README's rule table, the quick start's limits as
// one middleware, verbatim between the markers; ip and ipUser are the
// quick start's keys, and log the test (its log.Fatal, the README's, is
// t.Fatal).
func readmeRuleTable(log interface{ Fatal(...any) }, store algorithms.Store, ip, ipUser keyfunc.Func, home, loginHandler http.HandlerFunc) http.Handler {
	// README:begin ruletable
	r := chi.NewRouter()
	limits := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.PerSecond("per-second", 10, ip)),
		policy.Must(policy.PerMinute("per-minute", 100, ip)),
		policy.Must(policy.Login(ipUser, policy.WithRoutes("POST /login"))),
	}, middleware.WithPatternFunc(policy.ChiPattern(r))) // r.Use runs before chi routes: ask r
	r.Use(limits.Handler)
	r.Get("/", home)
	r.Post("/login", loginHandler)
	if err := limits.CheckRoutes(nil); err != nil { // nil: ask r, as the pattern function does
		log.Fatal(err)
	}
	// README:end
	return r
}

// TestReadmeRuleTable runs the README's rule table with the quick start's
// keys: one decision per request, so that a login the login policy denies
// uses nothing of the global policies (under the quick start's nested
// middlewares it does), while GET / is limited by the global ones alone.
func TestReadmeRuleTable(t *testing.T) {
	readme := strings.Split(strings.TrimSuffix(readmetest.BlockAfter(t, readmeText(t), "The quick start's limits as one rule table", "go"), "\n"), "\n")
	if tested := markedCodeNamed(t, "readme_newuser_test.go", "ruletable"); !slices.Equal(trimLines(readme), tested) {
		t.Fatalf("the README's block is not the code tested here:\nREADME:\n%s\ntested:\n%s",
			strings.Join(readme, "\n"), strings.Join(tested, "\n"))
	}
	_, store := clockedStore(t)
	ip := keyfunc.Must(keyfunc.IP())
	loginName := func(r *http.Request) (string, error) {
		if name := r.PostFormValue("username"); name != "" {
			return name, nil
		}
		return "", keyfunc.ErrNoUser
	}
	srv := httptest.NewServer(readmeRuleTable(t, store, ip, keyfunc.Must(keyfunc.Join(ip, loginName)), hello, hello))
	defer srv.Close()
	check := func(name string, resp *http.Response, err error, status int, rateLimit string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := strings.Join(resp.Header.Values("RateLimit"), ", "); resp.StatusCode != status || got != rateLimit {
			t.Errorf("%s: %d, RateLimit %q; want %d, %q", name, resp.StatusCode, got, status, rateLimit)
		}
	}
	login := func() (*http.Response, error) {
		return srv.Client().PostForm(srv.URL+"/login", url.Values{"username": {"ann"}})
	}
	// n requests at the start of a minute: the per-minute quota grows
	// once n·(1−e/60) <= n−1 in the next one, 60 + 60/n s on.
	minuteT := []string{"", "120", "90", "80", "75", "72", "70", "69"}
	global := func(n int) string {
		return `"per-second";r=` + strconv.Itoa(10-n) + `;t=2, "per-minute";r=` + strconv.Itoa(100-n) + ";t=" + minuteT[n]
	}
	resp, err := srv.Client().Get(srv.URL + "/")
	check("GET /", resp, err, 200, global(1))
	for i := 1; i <= 5; i++ {
		resp, err := login()
		check("login "+strconv.Itoa(i), resp, err, 200, global(1+i)+`, "login";r=`+strconv.Itoa(5-i)+";t=61")
	}
	resp, err = login()
	check("login 6, denied by login alone", resp, err, 429, global(6)+`, "login";r=0;t=61`)
	resp, err = srv.Client().Get(srv.URL + "/")
	check("GET / after it: the denied login used nothing", resp, err, 200, global(7))
}

// TestReadmeGoBlocksFormatted: every Go block of the README is as gofmt
// writes it (read as a function body), so that code a user pastes stays
// put under their editor's gofmt: a comment column out of line moves.
func TestReadmeGoBlocksFormatted(t *testing.T) {
	blocks := strings.Split(readmeText(t), "```go\n")[1:]
	if len(blocks) < 5 {
		t.Fatalf("README.md has %d Go blocks, want the quick start's and the others", len(blocks))
	}
	for _, b := range blocks {
		code, _, _ := strings.Cut(b, "```")
		var src strings.Builder
		src.WriteString("package p\n\nfunc _() {\n")
		for _, l := range strings.Split(strings.TrimSuffix(code, "\n"), "\n") {
			if l != "" {
				src.WriteString("\t" + l)
			}
			src.WriteString("\n")
		}
		src.WriteString("}\n")
		formatted, err := format.Source([]byte(src.String()))
		if err != nil {
			t.Errorf("a Go block of README.md does not parse: %v\n%s", err, code)
			continue
		}
		if string(formatted) != src.String() {
			t.Errorf("a Go block of README.md is not as gofmt writes it:\n%s\ngofmt:\n%s", src.String(), formatted)
		}
	}
}

// TestReadmeCheckRoutesMessage: the README quotes what CheckRoutes says of
// a route the router does not have, its example being "/api/{id}" for
// chi's "/api/{ID}": the quote is a part of the error a new user gets for
// that mistake, byte for byte (it had a method in the pattern chi routes
// to, which chi's patterns never carry).
func TestReadmeCheckRoutesMessage(t *testing.T) {
	readme := readmeText(t)
	_, after, ok := strings.Cut(readme, "naming the policy and where the router sent it\n(`")
	if !ok {
		t.Fatal("README.md no longer quotes CheckRoutes after \"naming the policy and where the router sent it\"")
	}
	quote, _, _ := strings.Cut(after, "`")
	if !strings.Contains(readme, "`\"/api/{id}\"` for chi's `\"/api/{ID}\"`") {
		t.Fatal("README.md no longer gives \"/api/{id}\" for chi's \"/api/{ID}\" as the example of a route the router lacks")
	}
	_, store := clockedStore(t)
	r := chi.NewRouter()
	m := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.PerMinute("api", 100, keyfunc.Must(keyfunc.IP()), policy.WithRoutes("/api/{id}"))),
	}, middleware.WithPatternFunc(policy.ChiPattern(r)))
	r.Use(m.Handler)
	r.Get("/api/{ID}", hello)
	err := m.CheckRoutes(nil)
	if err == nil || !strings.Contains(err.Error(), quote) {
		t.Errorf("CheckRoutes = %v; the README quotes it as saying %q", err, quote)
	}
}

// TestReadmeSaysHowToGetIt: a new user copying the quick start into a module
// of their own is told how to add ratekeeper (and chi, which the quick start
// imports) to it, and that the README's first commands (go run
// ./cmd/ratekeeper, the tests) run in a clone of the repository. The README
// named the module path only: no go get, and nothing said where
// "go run ./cmd/ratekeeper demo" works.
func TestReadmeSaysHowToGetIt(t *testing.T) {
	_, quick, ok := strings.Cut(readmeText(t), "\n## Quick start (chi)\n")
	if !ok {
		t.Fatal("README.md has no quick start")
	}
	intro, _, _ := strings.Cut(quick, "```go")
	intro = strings.Join(strings.Fields(intro), " ")
	for _, want := range []string{"go get github.com/ratekeeper/ratekeeper", "github.com/go-chi/chi/v5", "clone",
		// Building on a clone: go get asks the proxy for a version even
		// with the replace directive (403 for one it lacks); tidy does not.
		"go mod edit -replace github.com/ratekeeper/ratekeeper=/path/to/clone", "go mod tidy"} {
		if !strings.Contains(intro, want) {
			t.Errorf("the quick start's introduction does not say %q:\n%s", want, intro)
		}
	}
}
