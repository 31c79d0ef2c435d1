package middleware_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// keepBodyRouters are the routers of the keepBody tests: the middleware
// wraps a router (ServeMux, chi sub-router) mounted in another, so that
// the request it gets carries the outer router's pattern ("/api/",
// "/api/*"), and the policy's route key is read on a copy of the request
// (the route the Set's own pattern function finds).
var keepBodyRouters = []string{"ServeMux in ServeMux", "ServeMux in chi", "chi in chi"}

// TestRouteKeyCopyWritesNoBodyOfTheCaller: a key function reading the
// route (keyfunc.Route) is handed it on a copy of the request when an
// outer router's pattern is on it. What the key function left on the
// copy (a body it put back, a form it parsed) is given to the request,
// but the body was given always, unchanged, which raced (go test -race)
// with a goroutine of the caller reading its request's Body while the
// handler served it: no router serving the request writes its Body, nor
// may the middleware. Through a server under net/http.
func TestRouteKeyCopyWritesNoBodyOfTheCaller(t *testing.T) {
	for _, router := range keepBodyRouters {
		t.Run(router, func(t *testing.T) {
			const body = "payload"
			got := keepBodyServe(t, router, keyfunc.Must(keyfunc.Join(remote, keyfunc.Route())), body,
				func(r *http.Request) string {
					// A watcher of the caller's request, as a logger of
					// whether it has a body.
					if r.Body == nil {
						return "no body"
					}
					return "body"
				}, nil)
			if got.watched != "body" {
				t.Errorf("the caller's goroutine read %q, want %q", got.watched, "body")
			}
			if got.handler != body {
				t.Errorf("the handler read the body %q, want %q", got.handler, body)
			}
		})
	}
}

// TestRouteKeyCopyHandsOnTheBodyAKeyPutBack: a key function that reads
// the body and puts back a reader of what it read, on the copy Prepare
// hands it the route on, still leaves the handler the whole body (what
// keepBody is for), through every router: the body it put back is the
// request's.
func TestRouteKeyCopyHandsOnTheBodyAKeyPutBack(t *testing.T) {
	// jsonName is a key part read from a JSON body, which it puts back
	// for the handler, as a key function reading the body must.
	jsonName := func(r *http.Request) (string, error) {
		b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			return "", err
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		var v struct{ Username string }
		if json.Unmarshal(b, &v) != nil || v.Username == "" {
			return "", keyfunc.ErrNoUser
		}
		return v.Username, nil
	}
	for _, order := range []struct {
		name string
		key  keyfunc.Func
	}{
		{"route before the body", keyfunc.Must(keyfunc.Join(remote, keyfunc.Route(), jsonName))},
		{"body before the route", keyfunc.Must(keyfunc.Join(remote, jsonName, keyfunc.Route()))},
	} {
		for _, router := range keepBodyRouters {
			t.Run(order.name+"/"+router, func(t *testing.T) {
				const body = `{"username":"ann"}`
				got := keepBodyServe(t, router, order.key, body, nil, nil)
				if got.handler != body {
					t.Errorf("the handler read the body %q, want %q", got.handler, body)
				}
			})
		}
	}
}

// keepBodySeen is what keepBodyServe saw: the handler's body, and what
// the caller's goroutine read of its request while the handler ran.
type keepBodySeen struct{ handler, watched string }

// keepBodyServe serves POST /api/items/7 with body through router (see
// keepBodyRouters), the middleware (one policy keyed by key, its pattern
// function the inner router's) between the caller and the inner router,
// whose handler reads the body. With watch, a goroutine of the caller
// reads its request by watch while the middleware and handler serve it;
// with outer, the caller is outer's handler too (outer runs first).
func keepBodyServe(t *testing.T, router string, key keyfunc.Func, body string, watch func(*http.Request) string, outer func(http.Handler) http.Handler) keepBodySeen {
	t.Helper()
	var seen keepBodySeen
	caller := func(next http.Handler) http.Handler {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if watch == nil {
				next.ServeHTTP(w, r)
				return
			}
			done := make(chan string)
			go func() { done <- watch(r) }()
			next.ServeHTTP(w, r)
			seen.watched = <-done
		})
		if outer != nil {
			return outer(h)
		}
		return h
	}
	handler := func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("the handler's body: %v", err)
		}
		seen.handler = string(b)
	}
	store, clock := newStore(t)
	p := fixed("p", 100, 60e9, key)
	var h http.Handler
	switch router {
	case "ServeMux in ServeMux", "ServeMux in chi":
		inner := http.NewServeMux()
		inner.HandleFunc("POST /api/items/{id}", handler)
		m := middleware.MustNew(store, []*policy.Policy{p}, middleware.WithClock(clock),
			middleware.WithPatternFunc(policy.ServeMuxPattern(inner)))
		if router == "ServeMux in ServeMux" {
			outer := http.NewServeMux()
			outer.Handle("/api/", caller(m.Handler(inner)))
			h = outer
		} else {
			outer := chi.NewRouter()
			outer.Handle("/api/*", caller(m.Handler(inner)))
			h = outer
		}
	case "chi in chi":
		sub := chi.NewRouter()
		m := middleware.MustNew(store, []*policy.Policy{p}, middleware.WithClock(clock),
			middleware.WithPatternFunc(policy.ChiPattern(sub)))
		sub.Use(caller, m.Handler)
		sub.Post("/items/{id}", handler)
		outer := chi.NewRouter()
		outer.Mount("/api", sub)
		h = outer
	default:
		t.Fatalf("unknown router %q", router)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	res, err := srv.Client().Post(srv.URL+"/api/items/7", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", res.StatusCode)
	}
	return seen
}

// valueBody is a body held by value whose type == panics on (it holds a
// slice), as a middleware or key function may put one back.
type valueBody struct {
	b   []byte
	off *int
}

func (v valueBody) Read(p []byte) (int, error) {
	if *v.off >= len(v.b) {
		return 0, io.EOF
	}
	n := copy(p, v.b[*v.off:])
	*v.off += n
	return n, nil
}

func (v valueBody) Close() error { return nil }

// TestRouteKeyCopyTakesABodyOfAnIncomparableType: the body a key function
// puts back on the route copy is told from the request's without ==
// panicking when both are of one type == panics on (a valueBody, which a
// middleware further out put on the request): the handler gets the one
// the key function put back.
func TestRouteKeyCopyTakesABodyOfAnIncomparableType(t *testing.T) {
	putBack := func(r *http.Request) (string, error) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return "", err
		}
		r.Body = valueBody{b: append(b, " (read by the key)"...), off: new(int)}
		return string(b), nil
	}
	for _, router := range keepBodyRouters {
		t.Run(router, func(t *testing.T) {
			const body = "ann"
			got := keepBodyServe(t, router, keyfunc.Must(keyfunc.Join(keyfunc.Route(), putBack)), body, nil,
				func(next http.Handler) http.Handler {
					return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						b, _ := io.ReadAll(r.Body)
						r.Body = valueBody{b: b, off: new(int)}
						next.ServeHTTP(w, r)
					})
				})
			if want := body + " (read by the key)"; got.handler != want {
				t.Errorf("the handler read the body %q, want %q", got.handler, want)
			}
		})
	}
}

// TestRouteKeyCopyPanicGoesThroughKeepBody: a key function that puts a
// body back on the route copy and then panics still gives the request
// its body (keepBody runs deferred, for a caller that recovers), and its
// panic goes on to that caller: the recover that tells two bodies apart
// (sameBody, where == panics on their type) does not stop it.
func TestRouteKeyCopyPanicGoesThroughKeepBody(t *testing.T) {
	inner := http.NewServeMux()
	inner.HandleFunc("POST /api/items/{id}", func(http.ResponseWriter, *http.Request) {})
	var key keyfunc.Func = func(r *http.Request) (string, error) {
		b, _ := io.ReadAll(r.Body)
		r.Body = valueBody{b: append(b, " (read by the key)"...), off: new(int)}
		panic("key function bug")
	}
	s, err := policy.NewSet([]*policy.Policy{fixed("p", 100, 60e9, keyfunc.Must(keyfunc.Join(keyfunc.Route(), key)))},
		policy.WithPatternFunc(policy.ServeMuxPattern(inner)))
	if err != nil {
		t.Fatal(err)
	}
	var recovered any
	var body string
	outer := http.NewServeMux()
	outer.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = valueBody{b: b, off: new(int)} // of the type the key puts back
		func() {
			defer func() { recovered = recover() }()
			var res policy.Result
			s.Prepare(r, s.Match(r), &res)
		}()
		b, _ = io.ReadAll(r.Body)
		body = string(b)
	})
	outer.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/api/items/7", strings.NewReader("ann")))
	if recovered != "key function bug" {
		t.Errorf("Prepare's caller recovered %v, want the key function's panic", recovered)
	}
	if want := "ann (read by the key)"; body != want {
		t.Errorf("the request's body read %q after the panic, want %q", body, want)
	}
}

// TestRouteKeyCopyWritesNoFormOfTheCaller: Prepare, handing a route key
// its route on a copy, gives the request the forms a key function parsed
// there; when none did, it writes none of the request's form fields (it
// wrote them nil over nil), which a goroutine of the caller may be
// reading (go test -race). Prepare alone: the middleware gives the caller
// the forms its handler parsed too, after it (reqcopy.Back).
func TestRouteKeyCopyWritesNoFormOfTheCaller(t *testing.T) {
	inner := http.NewServeMux()
	inner.HandleFunc("POST /api/items/{id}", func(http.ResponseWriter, *http.Request) {})
	s, err := policy.NewSet([]*policy.Policy{fixed("p", 100, 60e9, keyfunc.Must(keyfunc.Join(remote, keyfunc.Route())))},
		policy.WithPatternFunc(policy.ServeMuxPattern(inner)))
	if err != nil {
		t.Fatal(err)
	}
	var watched string
	outer := http.NewServeMux()
	outer.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		done := make(chan string)
		go func() { // a watcher of the caller's request
			if r.Form == nil && r.PostForm == nil && r.MultipartForm == nil {
				done <- "no form"
				return
			}
			done <- "a form"
		}()
		var res policy.Result
		if err := s.Prepare(r, s.Match(r), &res); err != nil || res.Len() != 1 {
			t.Errorf("Prepare = %v, %d checks", err, res.Len())
		}
		watched = <-done
	})
	outer.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/api/items/7", strings.NewReader("x")))
	if watched != "no form" {
		t.Errorf("the caller's goroutine read %q, want %q", watched, "no form")
	}
}
