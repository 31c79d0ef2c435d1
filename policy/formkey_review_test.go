package policy_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// formUser is a key part read from the request's form, as the README's
// login example reads the user name tried.
func formUser(r *http.Request) (string, error) {
	if v := r.PostFormValue("username"); v != "" {
		return v, nil
	}
	return "", keyfunc.ErrNoUser
}

// TestPrepareKeepsTheFormAKeyParsedUnderAnOuterMux: the same, around a
// ServeMux mounted in another, where Prepare hands every key function the
// route on a copy (the outer mux's "/api/" is not the route).
func TestPrepareKeepsTheFormAKeyParsedUnderAnOuterMux(t *testing.T) {
	inner := http.NewServeMux()
	var got string
	inner.HandleFunc("POST /login", func(w http.ResponseWriter, req *http.Request) { got = req.PostFormValue("username") })
	key := keyfunc.Must(keyfunc.Join(remoteKey, formUser, keyfunc.Route()))
	p := policy.Must(policy.PerMinute("login", 5, key, policy.WithRoutes("POST /login")))
	s, err := policy.NewSet([]*policy.Policy{p}, policy.WithPatternFunc(policy.ServeMuxPattern(inner)))
	if err != nil {
		t.Fatal(err)
	}
	outer := http.NewServeMux()
	outer.Handle("/api/", http.StripPrefix("/api", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var res policy.Result
		if err := s.Prepare(req, s.Match(req), &res); err != nil || res.Len() != 1 {
			t.Fatalf("Prepare = %v, %d checks", err, res.Len())
		}
		inner.ServeHTTP(w, req)
	})))
	req := httptest.NewRequest("POST", "/api/login", strings.NewReader("username=ann"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	outer.ServeHTTP(httptest.NewRecorder(), req)
	if got != "ann" {
		t.Errorf("the handler read the user name %q, want %q", got, "ann")
	}
}

// TestPrepareKeepsTheFormAKeyParsed: a key function that reads the form
// (the README's login name) parses the request's body, which can be read
// once. Where Prepare hands the key function the route on a copy of the
// request (a pattern function of the Set's own, before routing: a route
// part's ErrNoRoute retried, an outer router's pattern replaced), the form
// was parsed into the copy only: the request the middleware passes on had
// its body read and no form, so the login handler behind it found no user
// name. The form the key function parsed is now the request's too.
func TestPrepareKeepsTheFormAKeyParsed(t *testing.T) {
	for _, tt := range []struct {
		name string
		key  keyfunc.Func
	}{
		{"route before the form", keyfunc.Must(keyfunc.Join(remoteKey, keyfunc.Route(), formUser))},
		{"form before the route", keyfunc.Must(keyfunc.Join(remoteKey, formUser, keyfunc.Route()))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := chi.NewRouter()
			p := policy.Must(policy.PerMinute("login", 5, tt.key, policy.WithRoutes("POST /login")))
			s, err := policy.NewSet([]*policy.Policy{p}, policy.WithPatternFunc(policy.ChiPattern(r)))
			if err != nil {
				t.Fatal(err)
			}
			var key string
			r.Use(func(next http.Handler) http.Handler { // the limiter, before chi routes
				return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
					var res policy.Result
					if err := s.Prepare(req, s.Match(req), &res); err != nil || res.Len() != 1 {
						t.Fatalf("Prepare = %v, %d checks", err, res.Len())
					}
					key = strings.Clone(res.Key(0))
					next.ServeHTTP(w, req)
				})
			})
			var got string
			r.Post("/login", func(w http.ResponseWriter, req *http.Request) { got = req.PostFormValue("username") })
			req := httptest.NewRequest("POST", "/login", strings.NewReader(url.Values{"username": {"ann"}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.ServeHTTP(httptest.NewRecorder(), req)
			if got != "ann" {
				t.Errorf("the handler read the user name %q, want %q (the key was %q)", got, "ann", key)
			}
			parts := []keyfunc.Func{remoteKey, keyfunc.Must(keyfunc.Const("/login")), keyfunc.Must(keyfunc.Const("ann"))}
			if tt.name == "form before the route" {
				parts[1], parts[2] = parts[2], parts[1]
			}
			k, err := keyfunc.Must(keyfunc.Join(parts...))(httptest.NewRequest("GET", "/", nil))
			if err != nil {
				t.Fatal(err)
			}
			want := "login:" + k
			if key != want {
				t.Errorf("key %q, want %q", key, want)
			}
		})
	}
}

// jsonUser is a key part read from a JSON body, which it puts back for
// the handler, as a key function reading the body must.
func jsonUser(r *http.Request) (string, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return "", err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var v struct{ Username string }
	if json.Unmarshal(body, &v) != nil || v.Username == "" {
		return "", keyfunc.ErrNoUser
	}
	return v.Username, nil
}

// TestPrepareKeepsTheBodyAKeyPutBack: a key function that reads a JSON
// body and puts it back (r.Body = a reader of what it read) did so on
// Prepare's copy of the request when handed the route there, so the
// handler found the body read to its end. The body the key function left
// is now the request's.
func TestPrepareKeepsTheBodyAKeyPutBack(t *testing.T) {
	r := chi.NewRouter()
	key := keyfunc.Must(keyfunc.Join(remoteKey, keyfunc.Route(), jsonUser))
	p := policy.Must(policy.PerMinute("login", 5, key, policy.WithRoutes("POST /login")))
	s, err := policy.NewSet([]*policy.Policy{p}, policy.WithPatternFunc(policy.ChiPattern(r)))
	if err != nil {
		t.Fatal(err)
	}
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			var res policy.Result
			if err := s.Prepare(req, s.Match(req), &res); err != nil || res.Len() != 1 {
				t.Fatalf("Prepare = %v, %d checks", err, res.Len())
			}
			next.ServeHTTP(w, req)
		})
	})
	var got string
	r.Post("/login", func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		got = string(b)
	})
	const body = `{"username":"ann"}`
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/login", strings.NewReader(body)))
	if got != body {
		t.Errorf("the handler read the body %q, want %q", got, body)
	}
}
