package ratekeeper_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// endlessBody is a request body that never ends: every Read fills p.
type endlessBody struct{ n int }

func (b *endlessBody) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	b.n += len(p)
	return len(p), nil
}

// TestReadmeLoginEndlessBody: the README's login key reads the user name
// from the body before the limit is decided. A client whose body never
// ends ("username=ann&pad=xxxx..." forever) must get its answer (400, no
// name within the bound) after at most 64 KiB + 1 bytes read, not keep
// the request reading (and the memory growing) for ever.
func TestReadmeLoginEndlessBody(t *testing.T) {
	_, store := clockedStore(t)
	h := readmeQuickStart(store, hello, hello)
	body := &endlessBody{}
	req := httptest.NewRequest(http.MethodPost, "/login", nil)
	req.Body = &multiReader{first: strings.NewReader("username=ann&pad="), rest: body}
	req.ContentLength = -1 // unknown, as for a chunked body
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	hangguard.Run(t, 10*time.Second, "the login request with an endless body answered", func() { h.ServeHTTP(rec, req) })
	if rec.Code != http.StatusBadRequest {
		t.Errorf("status %d, want 400 (no user name within 64 KiB)", rec.Code)
	}
	if body.n > 64<<10+1 {
		t.Errorf("read %d bytes of the endless body, want at most 64 KiB + 1", body.n)
	}
}

// multiReader reads first, then rest; Close does nothing.
type multiReader struct {
	first *strings.Reader
	rest  *endlessBody
}

func (m *multiReader) Read(p []byte) (int, error) {
	if m.first.Len() > 0 {
		return m.first.Read(p)
	}
	return m.rest.Read(p)
}

func (m *multiReader) Close() error { return nil }

// TestReadmeLoginKeyRotationKeepsTheLimit: the README's layout on a store
// bounded by WithMaxKeys. An attacker spends the 5 login attempts on one
// account, then floods the store with new keys (a new IPv6 /64 and a new
// user name for every request, 20 times the bound, three new keys each)
// to have its exhausted key evicted and its attempts back. The store stays
// within its bound, every flood request is served (the store refuses no
// one at the cap), and the attacker's sixth attempt on the account is
// still refused: rotating keys buys no eviction of a client being limited.
func TestReadmeLoginKeyRotationKeepsTheLimit(t *testing.T) {
	const bound = 1024
	clock := algotest.NewClock(t0)
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock), algorithms.WithMaxKeys(bound))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	h := readmeQuickStart(store, hello, hello)
	login := func(remoteAddr, name string) int {
		req := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(url.Values{"username": {name}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.RemoteAddr = remoteAddr
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	const attacker = "[2001:db8:ffff:1::7]:4000"
	for i := 1; i <= 5; i++ {
		if code := login(attacker, "victim"); code != http.StatusOK {
			t.Fatalf("attempt %d: %d, want 200", i, code)
		}
	}
	if code := login(attacker, "victim"); code != http.StatusTooManyRequests {
		t.Fatalf("attempt 6: %d, want 429", code)
	}
	for i := range 20 * bound {
		ra := fmt.Sprintf("[2001:db8:%x:%x::1]:4000", i>>16, i&0xffff)
		if code := login(ra, fmt.Sprintf("u%d", i)); code != http.StatusOK {
			t.Fatalf("flood request %d from %s: %d, want 200 (the store refused a new client at its bound)", i, ra, code)
		}
	}
	if n := store.Len(); n > bound {
		t.Errorf("store holds %d keys, above its bound %d", n, bound)
	}
	if code := login(attacker, "victim"); code != http.StatusTooManyRequests {
		t.Errorf("attempt 6 after the flood: %d, want 429: rotating keys evicted the exhausted login key", code)
	}
}

// TestRouteLimitHasNoPathVariantBypass: a policy on "POST /login" of 1 a
// minute, in a rule table in front of the router (chi's top-level r.Use
// with chi's Find; a whole ServeMux with the mux's patterns) and on the
// route itself (chi's r.With). After the one allowed login, no spelling of
// the path (percent-encoded letters, doubled or trailing slashes, dot
// segments, case, encoded slashes, parameters, a query, an absolute URI,
// the method in lower case)
// reaches the login handler again: each is denied, redirected, or served
// by another route (standards.md 7.1, path normalisation: coder's
// "//validate-password"). A wildcard route "/{page}" stands beside it, to
// which a path the limiter and the router read differently could escape.
func TestRouteLimitHasNoPathVariantBypass(t *testing.T) {
	paths := []string{"/login", "/log%69n", "/%6cogin", "//login", "/login/", "/./login", "/a/../login",
		"/Login", "/LOGIN", "/login%2f", "/%2flogin", "/login;x", "/login%00", "/login%20", "/login/.", "/login//",
		"/login?x=1", "http://example.com/login"}
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Minute}
	for _, router := range []string{"chi rule table", "chi With", "ServeMux rule table"} {
		t.Run(router, func(t *testing.T) {
			_, store := clockedStore(t)
			login := policy.Must(policy.New("login", spec, keyfunc.Global(), policy.WithRoutes("POST /login")))
			var served atomic.Int64 // written by the server's goroutines
			lh := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served.Add(1) })
			var h http.Handler
			switch router {
			case "chi rule table":
				r := chi.NewRouter()
				r.Use(middleware.MustNew(store, []*policy.Policy{login}, chiFind(r)).Handler)
				r.Post("/login", lh)
				r.Post("/{page}", hello)
				r.Post("/{a}/{b}", hello)
				h = r
			case "chi With":
				r := chi.NewRouter()
				r.With(middleware.MustNew(store, []*policy.Policy{login}).Handler).Post("/login", lh)
				r.Post("/{page}", hello)
				r.Post("/{a}/{b}", hello)
				h = r
			default:
				mux := http.NewServeMux()
				mux.Handle("POST /login", lh)
				mux.Handle("POST /{page}", hello)
				mux.Handle("POST /{a}/{b}", hello)
				h = middleware.MustNew(store, []*policy.Policy{login}, middleware.WithPatternFunc(policy.ServeMuxPattern(mux))).Handler(mux)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			type attempt struct{ method, path string }
			var attempts []attempt
			for _, p := range paths {
				attempts = append(attempts, attempt{"POST", p})
			}
			// Methods are case-sensitive: no router serves "post" from
			// "POST /login", and none may do so unlimited.
			attempts = append(attempts, attempt{"post", "/login"}, attempt{"Post", "/login"}, attempt{"PUT", "/login"})
			for _, a := range attempts {
				p := a.path
				// Written on the wire as it is: the client does not clean
				// or re-encode the path.
				conn, err := net.Dial("tcp", srv.Listener.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				before := served.Load()
				fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: example.com\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", a.method, p)
				resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
				if err != nil {
					conn.Close()
					t.Fatalf("%s %s: %v", a.method, p, err)
				}
				resp.Body.Close()
				conn.Close()
				if n := served.Load(); n > 1 && n > before {
					t.Errorf("%s %s: %d, served by the login handler past its limit (%d logins)", a.method, p, resp.StatusCode, n)
				}
			}
			if n := served.Load(); n != 1 {
				t.Errorf("the login handler served %d requests, want 1 (the first)", n)
			}
		})
	}
}
