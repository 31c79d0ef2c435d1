package middleware_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestStoreFailedNamesPolicies: nested middlewares (a global one around a
// login one, as the README's quick start nests them) on one failing store,
// each logging, write one "store failed" record each per request: each
// names the policies its middleware evaluated, so that the log tells the
// two apart (the breaker's own "circuit breaker open" records too), under
// chi and ServeMux.
func TestStoreFailedNamesPolicies(t *testing.T) {
	for _, router := range []string{"chi", "ServeMux"} {
		t.Run(router, func(t *testing.T) {
			mem, _ := newStore(t)
			st := &switchable{Store: mem}
			st.down.Store(true)
			var buf bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&buf, nil))
			global := middleware.MustNew(st, []*policy.Policy{
				fixed("per-second", 10, time.Second, remote),
				fixed("per-minute", 100, time.Minute, remote),
			}, middleware.WithLogger(log), middleware.WithBreaker(1, time.Hour))
			login := middleware.MustNew(st, []*policy.Policy{fixed("login", 5, time.Minute, remote)},
				middleware.WithLogger(log), middleware.WithBreaker(1, time.Hour))
			var h http.Handler
			if router == "chi" {
				r := chi.NewRouter()
				r.Use(global.Handler)
				r.With(login.Handler).Post("/login", ok)
				h = r
			} else {
				mux := http.NewServeMux()
				mux.Handle("POST /login", login.Handler(ok))
				h = global.Handler(mux)
			}
			for range 2 { // the store's error, then the open breaker's
				if w := serve(h, "POST", "/login"); w.Code != http.StatusOK {
					t.Fatalf("status %d, want 200 (fail open)", w.Code)
				}
			}
			var got []string
			for _, rec := range logRecords(t, &buf, "ratekeeper: store failed") {
				got = append(got, fmt.Sprint(rec["policies"]))
			}
			want := []string{"[per-second per-minute]", "[login]", "[per-second per-minute]", "[login]"}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("store failed records name policies %q, want %q\nlog:\n%s", got, want, buf.String())
			}
		})
	}
}

// TestDefaultStateLogNamesPolicies: nested middlewares built with no
// observer, as the README's quick start builds its global and login ones,
// log each change of their failure State on slog.Default: each record
// names the policies of its middleware, so that the two are told apart
// (before, both wrote the same "from=healthy to=open"), under chi and
// ServeMux.
func TestDefaultStateLogNamesPolicies(t *testing.T) {
	for _, router := range []string{"chi", "ServeMux"} {
		t.Run(router, func(t *testing.T) {
			buf := defaultLogTo(t)
			mem, _ := newStore(t)
			st := &switchable{Store: mem}
			st.down.Store(true)
			global := middleware.MustNew(st, []*policy.Policy{
				fixed("per-second", 10, time.Second, remote),
				fixed("per-minute", 100, time.Minute, remote),
			})
			login := middleware.MustNew(st, []*policy.Policy{fixed("login", 5, time.Minute, remote)})
			var h http.Handler
			if router == "chi" {
				r := chi.NewRouter()
				r.Use(global.Handler)
				r.With(login.Handler).Post("/login", ok)
				h = r
			} else {
				mux := http.NewServeMux()
				mux.Handle("POST /login", login.Handler(ok))
				h = global.Handler(mux)
			}
			if w := serve(h, "POST", "/login"); w.Code != http.StatusOK {
				t.Fatalf("status %d, want 200 (fail open)", w.Code)
			}
			var got []string
			for _, rec := range logRecords(t, buf, "ratekeeper: failure state changed") {
				got = append(got, fmt.Sprint(rec["to"], " ", rec["policies"]))
			}
			want := []string{"open [per-second per-minute]", "open [login]"}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("failure-state records %q, want %q\nlog:\n%s", got, want, buf.String())
			}
		})
	}
}
