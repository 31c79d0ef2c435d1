package middleware_test

import (
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestSuperfluousWriteHeaderBlamesTheHandler: a handler behind the
// middleware that calls WriteHeader after writing its body is named in
// the server's "superfluous response.WriteHeader call" log line, as
// without the middleware, under a policy that counts by status (CountIf),
// which wraps the writer: the line named the middleware's internal/timing
// writer before, through chi and a ServeMux alike (with an observer, the
// other case here, it named the handler already).
func TestSuperfluousWriteHeaderBlamesTheHandler(t *testing.T) {
	handler := func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
		w.WriteHeader(http.StatusInternalServerError) // the handler's mistake
	}
	for _, tc := range []struct {
		name string
		opts []policy.Option
		mw   []middleware.Option
	}{
		{"CountIf", []policy.Option{policy.CountIf(policy.CountFailed)}, nil},
		{"observer", nil, []middleware.Option{middleware.WithObserver(&middleware.LogObserver{})}},
	} {
		store, err := algorithms.NewMemoryStore()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		p := policy.Must(policy.Per("api", 100, time.Minute, keyfunc.Must(keyfunc.IP()), tc.opts...))
		m := middleware.MustNew(store, []*policy.Policy{p}, tc.mw...)
		mux := http.NewServeMux()
		mux.Handle("GET /x", m.Handler(http.HandlerFunc(handler)))
		r := chi.NewRouter()
		r.Use(m.Handler)
		r.Get("/x", handler)
		for rname, router := range map[string]http.Handler{"ServeMux": mux, "chi": r} {
			var logged lockedBuffer
			srv := httptest.NewUnstartedServer(router)
			srv.Config.ErrorLog = log.New(&logged, "", 0)
			srv.Start()
			resp, err := srv.Client().Get(srv.URL + "/x")
			if err != nil {
				srv.Close()
				t.Fatal(err)
			}
			resp.Body.Close()
			srv.Close()
			if got := logged.String(); !strings.Contains(got, "superfluous response.WriteHeader call from github.com/ratekeeper/ratekeeper/middleware_test.TestSuperfluousWriteHeaderBlamesTheHandler.func1 (superfluous_test.go:") {
				t.Errorf("%s, %s: the server logged %q; want the superfluous WriteHeader blamed on the handler", tc.name, rname, got)
			}
		}
	}
}
