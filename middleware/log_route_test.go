package middleware_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// logRecords returns the records with message msg logged as JSON to buf
// (a bytes.Buffer, or a lockedBuffer).
func logRecords(t *testing.T, buf fmt.Stringer, msg string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == msg {
			recs = append(recs, rec)
		}
	}
	return recs
}

// TestLogRouteNotPath: a denial record and a no-key record give the
// request's route pattern, as the middleware knows it (r.Pattern after a
// ServeMux routed, chi's pattern, or its WithPatternFunc before routing),
// never its path, which may carry a token or personal data
// (/reset/<token>, /users/<email>): the path only with LogRawPaths. A
// request whose route is not known gets neither. Before, each record held
// "path":"/reset/tok_9f86d081884c7d65".
func TestLogRouteNotPath(t *testing.T) {
	const token = "tok_9f86d081884c7d65"
	tokenKey := keyfunc.Must(keyfunc.Header("X-Client"))
	for _, tt := range []struct {
		name    string
		handler func(m func(http.Handler) http.Handler, opt func(func(*http.Request) string) middleware.Option) (http.Handler, middleware.Option)
		route   string // "" for none
	}{
		{"ServeMux, middleware in the route", func(m func(http.Handler) http.Handler, _ func(func(*http.Request) string) middleware.Option) (http.Handler, middleware.Option) {
			mux := http.NewServeMux()
			mux.Handle("POST /reset/{token}", m(ok))
			return mux, nil
		}, "POST /reset/{token}"},
		{"middleware around the ServeMux, ServeMuxPattern", func(m func(http.Handler) http.Handler, opt func(func(*http.Request) string) middleware.Option) (http.Handler, middleware.Option) {
			mux := http.NewServeMux()
			mux.Handle("POST /reset/{token}", ok)
			return m(mux), opt(policy.ServeMuxPattern(mux))
		}, "POST /reset/{token}"},
		{"chi r.Use, ChiPattern", func(m func(http.Handler) http.Handler, opt func(func(*http.Request) string) middleware.Option) (http.Handler, middleware.Option) {
			r := chi.NewRouter()
			r.Use(m)
			r.Post("/reset/{token}", ok)
			return r, opt(policy.ChiPattern(r))
		}, "/reset/{token}"},
		{"chi r.With", func(m func(http.Handler) http.Handler, _ func(func(*http.Request) string) middleware.Option) (http.Handler, middleware.Option) {
			r := chi.NewRouter()
			r.With(m).Post("/reset/{token}", ok)
			return r, nil
		}, "/reset/{token}"},
		{"middleware around the ServeMux, route unknown", func(m func(http.Handler) http.Handler, _ func(func(*http.Request) string) middleware.Option) (http.Handler, middleware.Option) {
			mux := http.NewServeMux()
			mux.Handle("POST /reset/{token}", ok)
			return m(mux), nil
		}, ""},
	} {
		for _, rawPaths := range []bool{false, true} {
			name := tt.name
			if rawPaths {
				name += "/LogRawPaths"
			}
			t.Run(name, func(t *testing.T) {
				var buf bytes.Buffer
				var lopts []middleware.LogOption
				if rawPaths {
					lopts = append(lopts, middleware.LogRawPaths())
				}
				lo, err := middleware.NewLogObserver(slog.New(slog.NewJSONHandler(&buf, nil)), lopts...)
				if err != nil {
					t.Fatal(err)
				}
				store, _ := newStore(t)
				var m *middleware.Middleware
				// m is built after the router, which its pattern function asks.
				wrap := func(next http.Handler) http.Handler {
					return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { m.Handler(next).ServeHTTP(w, r) })
				}
				h, opt := tt.handler(wrap, middleware.WithPatternFunc)
				opts := []middleware.Option{middleware.WithObserver(lo)}
				if opt != nil {
					opts = append(opts, opt)
				}
				m = middleware.MustNew(store, []*policy.Policy{fixed("reset", 1, time.Minute, tokenKey)}, opts...)
				for i, client := range []string{"c", "c", ""} { // allowed, denied, no key
					w := httptest.NewRecorder()
					r := httptest.NewRequest("POST", "/reset/"+token, nil)
					if client != "" {
						r.Header.Set("X-Client", client)
					}
					h.ServeHTTP(w, r)
					if want := []int{200, 429, 400}[i]; w.Code != want {
						t.Fatalf("request %d: %d, want %d", i, w.Code, want)
					}
				}
				recs := append(logRecords(t, &buf, "ratekeeper: request denied"), logRecords(t, &buf, "ratekeeper: no key")...)
				if len(recs) != 2 {
					t.Fatalf("%d records, want a denial and a no-key one:\n%s", len(recs), buf.String())
				}
				for _, rec := range recs {
					route, hasRoute := rec["route"]
					if tt.route != "" && route != tt.route || tt.route == "" && hasRoute {
						t.Errorf("record %v: route %v, want %q", rec, route, tt.route)
					}
					path, hasPath := rec["path"]
					if rawPaths && path != "/reset/"+token || !rawPaths && hasPath {
						t.Errorf("record %v: path %v; want it only with LogRawPaths", rec, path)
					}
				}
				if strings.Contains(buf.String(), token) != rawPaths {
					t.Errorf("LogRawPaths %v: the log holds the token: %v:\n%s", rawPaths, !rawPaths, buf.String())
				}
			})
		}
	}
}
