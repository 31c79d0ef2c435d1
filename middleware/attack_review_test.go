package middleware_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	chimw "github.com/go-chi/chi/v5/middleware"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// rawRequest writes one request on a fresh connection to srv exactly as
// given (no cleaning, no re-encoding) and returns the status.
func rawRequest(t *testing.T, srv *httptest.Server, method, target, host string) int {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", method, target, host)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s %s (Host %s): %v", method, target, host, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestAttackMountedPathVariants: the login limit of a router mounted in
// another (chi's r.Mount and r.Route with the sub-router's ChiPattern in
// its r.Use, a ServeMux behind StripPrefix with its ServeMuxPattern, a
// ServeMux host pattern) holds against every spelling of the path.
func TestAttackMountedPathVariants(t *testing.T) {
	paths := []string{"/api/login", "/api/log%69n", "/api/%6cogin", "/api//login", "//api/login", "/api/login/",
		"/api/./login", "/api/x/../login", "/api/LOGIN", "/api/login%2f", "/api%2flogin", "/api/login;x",
		"/api/login%20", "/api/login/.", "/api/login//", "/api/login?x=1", "http://example.com/api/login",
		"/API/login", "/api/login#x", "/api/login%00"}
	hosts := []string{"example.com", "EXAMPLE.COM", "example.com:80", "example.com.", "other.example"}
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Minute}
	routers := []string{"chi Mount", "chi Route", "chi StripSlashes", "ServeMux StripPrefix", "ServeMux host"}
	for _, router := range routers {
		t.Run(router, func(t *testing.T) {
			store, _ := newStore(t)
			route := "POST /api/login"
			if router == "ServeMux StripPrefix" {
				route = "POST /login"
			}
			login := policy.Must(policy.New("login", spec, keyfunc.Global(), policy.WithRoutes(route)))
			var served atomic.Int64
			lh := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served.Add(1) })
			var h http.Handler
			switch router {
			case "chi Mount":
				sub := chi.NewRouter()
				sub.Use(middleware.MustNew(store, []*policy.Policy{login}, middleware.WithPatternFunc(policy.ChiPattern(sub))).Handler)
				sub.Post("/login", lh)
				sub.Post("/{page}", ok)
				r := chi.NewRouter()
				r.Mount("/api", sub)
				r.Post("/{a}/{b}", ok)
				r.Post("/{a}", ok)
				h = r
			case "chi Route":
				r := chi.NewRouter()
				r.Route("/api", func(sub chi.Router) {
					sub.Use(middleware.MustNew(store, []*policy.Policy{login}, middleware.WithPatternFunc(policy.ChiPattern(sub))).Handler)
					sub.Post("/login", lh)
					sub.Post("/{page}", ok)
				})
				r.Post("/{a}/{b}", ok)
				h = r
			case "chi StripSlashes":
				r := chi.NewRouter()
				r.Use(chimw.CleanPath, chimw.StripSlashes)
				r.Use(middleware.MustNew(store, []*policy.Policy{login}, middleware.WithPatternFunc(policy.ChiPattern(r))).Handler)
				r.Post("/api/login", lh)
				r.Post("/api/{page}", ok)
				r.Post("/{a}", ok)
				h = r
			case "ServeMux StripPrefix":
				inner := http.NewServeMux()
				inner.Handle("POST /login", lh)
				inner.Handle("POST /{page}", ok)
				outer := http.NewServeMux()
				outer.Handle("/api/", http.StripPrefix("/api", middleware.MustNew(store, []*policy.Policy{login},
					middleware.WithPatternFunc(policy.ServeMuxPattern(inner))).Handler(inner)))
				outer.Handle("POST /{a}", ok)
				h = outer
			default:
				mux := http.NewServeMux()
				mux.Handle("POST example.com/api/login", lh)
				mux.Handle("POST /api/{page}", ok)
				mux.Handle("POST /{a}/{b}", ok)
				h = middleware.MustNew(store, []*policy.Policy{login}, middleware.WithPatternFunc(policy.ServeMuxPattern(mux))).Handler(mux)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			for _, host := range hosts {
				for _, method := range []string{"POST", "post"} {
					for _, p := range paths {
						before := served.Load()
						code := rawRequest(t, srv, method, p, host)
						if n := served.Load(); n > 1 && n > before {
							t.Errorf("%s %s (Host %s): %d, served by the login handler past its limit (%d logins)", method, p, host, code, n)
						}
					}
				}
			}
			if n := served.Load(); n != 1 {
				t.Errorf("the login handler served %d requests, want 1", n)
			}
		})
	}
}

// h2Server starts h on a TLS server speaking HTTP/2 and returns it with a
// client that speaks HTTP/2 to it.
func h2Server(t *testing.T, h http.Handler) (*httptest.Server, *http.Client) {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	c := srv.Client()
	return srv, c
}

// TestAttackHTTP2: over HTTP/2 (one connection, many streams) a rule
// table's login limit holds on chi and ServeMux as over HTTP/1.1, its
// headers are those of HTTP/1.1, a leaky_queue request whose stream the
// client resets while held gives its place back, and a denied request
// sent with Expect: 100-continue is refused as any other.
func TestAttackHTTP2(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 2, Window: time.Minute}
	queue := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: 10 * time.Second}
	for _, router := range []string{"chi", "ServeMux"} {
		t.Run(router, func(t *testing.T) {
			store, _ := newStore(t)
			login := policy.Must(policy.New("login", spec, keyfunc.Global(), policy.WithRoutes("POST /login")))
			shaped := policy.Must(policy.New("shaped", queue, keyfunc.Global(), policy.WithRoutes("GET /slow")))
			held := make(chan time.Duration, 10)
			wait := func(ctx context.Context, d time.Duration) error {
				held <- d
				<-ctx.Done() // held until the client resets the stream
				return ctx.Err()
			}
			var served atomic.Int64
			lh := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.ProtoMajor != 2 {
					t.Errorf("served over HTTP/%d", r.ProtoMajor)
				}
				served.Add(1)
			})
			var h http.Handler
			if router == "chi" {
				r := chi.NewRouter()
				r.Use(middleware.MustNew(store, []*policy.Policy{login, shaped}, middleware.WithPatternFunc(policy.ChiPattern(r)), middleware.WithWait(wait)).Handler)
				r.Post("/login", lh)
				r.Get("/slow", ok)
				h = r
			} else {
				mux := http.NewServeMux()
				mux.Handle("POST /login", lh)
				mux.Handle("GET /slow", ok)
				h = middleware.MustNew(store, []*policy.Policy{login, shaped}, middleware.WithPatternFunc(policy.ServeMuxPattern(mux)), middleware.WithWait(wait)).Handler(mux)
			}
			done := make(chan struct{}, 10) // a /slow request the middleware is through with
			inner := h
			h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				inner.ServeHTTP(w, r)
				if r.URL.Path == "/slow" {
					done <- struct{}{}
				}
			})
			srv, c := h2Server(t, h)
			post := func(expect bool) *http.Response {
				t.Helper()
				req, _ := http.NewRequest("POST", srv.URL+"/login", strings.NewReader("username=ann"))
				if expect {
					req.Header.Set("Expect", "100-continue")
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.ProtoMajor != 2 {
					t.Fatalf("answered over HTTP/%d", resp.ProtoMajor)
				}
				return resp
			}
			for i, want := range []string{`"login";r=1;t=60`, `"login";r=0;t=60`} {
				resp := post(false)
				if resp.StatusCode != 200 || resp.Header.Get("RateLimit") != want {
					t.Errorf("login %d: %d RateLimit %q, want 200 %q", i, resp.StatusCode, resp.Header.Get("RateLimit"), want)
				}
			}
			for _, expect := range []bool{false, true} {
				resp := post(expect)
				if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "60" || resp.Header.Get("Content-Type") != middleware.ContentTypeProblem {
					t.Errorf("login past the limit (Expect %v): %d Retry-After %q %s", expect, resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("Content-Type"))
				}
			}
			if n := served.Load(); n != 2 {
				t.Errorf("login handler served %d, want 2", n)
			}

			// The queue: the first request passes at once, the second is
			// held a second; its client resets the stream, and its place
			// comes back: the next one is held a second again, not two.
			get := func(ctx context.Context) (*http.Response, error) {
				req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/slow", nil)
				return c.Do(req)
			}
			resp, err := get(context.Background())
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("first queued request: %v %v", resp, err)
			}
			resp.Body.Close()
			<-done
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() {
				resp, err := get(ctx)
				if err == nil {
					resp.Body.Close()
				}
				errc <- err
			}()
			if d := <-held; d != time.Second {
				t.Errorf("second request held %v, want 1s", d)
			}
			cancel()
			if err := <-errc; err == nil {
				t.Error("cancelled request: no error")
			}
			<-done // the server saw the reset: the hold ended and its place went back
			ctx3, cancel3 := context.WithCancel(context.Background())
			defer cancel3()
			go func() {
				resp, err := get(ctx3)
				if err == nil {
					resp.Body.Close()
				}
			}()
			if d := <-held; d != time.Second {
				t.Errorf("after the reset, the next request held %v, want 1s (the place given back)", d)
			}
			cancel3()
		})
	}
}

// attackServer serves h at method and path behind m alone, on a server
// closed when t ends: through chi ("chi": m in r.Use) or a ServeMux (m
// around the mux).
func attackServer(t *testing.T, router string, m *middleware.Middleware, method, path string, h http.Handler) *httptest.Server {
	t.Helper()
	var root http.Handler
	if router == "chi" {
		r := chi.NewRouter()
		r.Use(m.Handler)
		r.Method(method, path, h)
		root = r
	} else {
		mux := http.NewServeMux()
		mux.Handle(method+" "+path, h)
		root = m.Handler(mux)
	}
	srv := httptest.NewServer(root)
	t.Cleanup(srv.Close)
	return srv
}

// TestAttackQueueHoldsBounded: a leaky_queue policy holds at most its
// capacity less one of a key's requests at once (floor(MaxDelay·Limit/
// Window) + 1 places, the first passing at once): a client firing more
// gets 429s, not more held goroutines. Each key has its own queue, so
// clients rotating keys hold that many per key: the bound across keys is
// a coarser policy's (here a per-peer one stacked beside it).
func TestAttackQueueHoldsBounded(t *testing.T) {
	queue := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 2, Window: time.Second, MaxDelay: 2 * time.Second}
	client := func(r *http.Request) (string, error) { return r.Header.Get("X-Client"), nil }
	for _, router := range []string{"chi", "ServeMux"} {
		t.Run(router, func(t *testing.T) {
			store, _ := newStore(t)
			shaped := policy.Must(policy.New("shaped", queue, client))
			// The coarse bound: 8 queued places per peer (all the test's
			// requests come from one).
			coarse := policy.Must(policy.New("per-peer", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 4, Window: time.Second, MaxDelay: 2 * time.Second}, keyfunc.Global()))
			if shaped.Capacity() != 5 || coarse.Capacity() != 9 {
				t.Fatalf("capacities %d, %d, want 5, 9", shaped.Capacity(), coarse.Capacity())
			}
			held := make(chan struct{}, 64)
			release := make(chan struct{})
			wait := func(ctx context.Context, d time.Duration) error {
				held <- struct{}{}
				select {
				case <-release:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			m := middleware.MustNew(store, []*policy.Policy{shaped, coarse}, middleware.WithWait(wait))
			srv := attackServer(t, router, m, "GET", "/", ok)
			codes := make(chan int, 64)
			// send sends one request and returns "held" or its status.
			send := func(c string) string {
				go func() {
					req, _ := http.NewRequest("GET", srv.URL+"/", nil)
					req.Header.Set("X-Client", c)
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						codes <- 0
						return
					}
					resp.Body.Close()
					codes <- resp.StatusCode
				}()
				select {
				case <-held:
					return "held"
				case code := <-codes:
					return strconv.Itoa(code)
				}
			}
			var got []string
			for range 7 {
				got = append(got, send("a"))
			}
			want := "200 held held held held 429 429"
			if g := strings.Join(got, " "); g != want {
				t.Errorf("one client's 7 requests: %s, want %s", g, want)
			}
			got = got[:0]
			for _, c := range []string{"b", "c", "d", "e", "f"} {
				got = append(got, send(c))
			}
			// "a" took 5 places of the peer's 9 (its 429s took none); b
			// to e take the other 4; f finds the peer's queue full.
			if g, want := strings.Join(got, " "), "held held held held 429"; g != want {
				t.Errorf("rotated clients: %s, want %s", g, want)
			}
			close(release)
			for range 8 {
				if code := <-codes; code != 200 {
					t.Errorf("a held request answered %d, want 200", code)
				}
			}
		})
	}
}

// TestAttackExpectContinue: a request past the limit that announces its
// body with Expect: 100-continue is answered 429 at once, its body never
// asked for (no 100 Continue): the middleware decides on the headers and
// reads no body (the key reads none), so a client cannot make the server
// take a body the limit refuses.
func TestAttackExpectContinue(t *testing.T) {
	for _, router := range []string{"chi", "ServeMux"} {
		t.Run(router, func(t *testing.T) {
			store, _ := newStore(t)
			m := middleware.MustNew(store, []*policy.Policy{fixed("upload", 1, time.Minute, keyfunc.Global())})
			read := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) })
			srv := attackServer(t, router, m, "POST", "/upload", read)
			for i, want := range []int{http.StatusContinue, http.StatusTooManyRequests} {
				conn, err := net.Dial("tcp", srv.Listener.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(conn, "POST /upload HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
				br := bufio.NewReader(conn)
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					conn.Close()
					t.Fatalf("request %d: %v", i, err)
				}
				if resp.StatusCode != want {
					t.Errorf("request %d: first answer %d, want %d", i, resp.StatusCode, want)
				}
				if resp.StatusCode == http.StatusContinue {
					io.WriteString(conn, "hello")
					if resp, err = http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
						t.Errorf("request %d after its body: %v %v, want 200", i, resp, err)
					}
				}
				conn.Close()
			}
		})
	}
}
