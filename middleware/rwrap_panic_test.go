package middleware_test

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	chimw "github.com/go-chi/chi/v5/middleware"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// recoverTo500 is http.ServeMux's side of chi's middleware.Recoverer: it
// recovers a panic of next (but http.ErrAbortHandler) and answers 500.
func recoverTo500(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				w.WriteHeader(http.StatusInternalServerError)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// quietLog is a chi request logger that logs nothing, not even the panics
// chi's Recoverer hands it (which it would print to stderr without one).
type quietLog struct{}

func (quietLog) NewLogEntry(*http.Request) chimw.LogEntry        { return quietLog{} }
func (quietLog) Write(int, int, http.Header, time.Duration, any) {}
func (quietLog) Panic(any, []byte)                               {}

// TestPanicGiveBackReportedInTheRecoverersAnswer: a handler that panics
// before writing anything leaves the response's headers unsent; a
// recoverer further out (chi's middleware.Recoverer) answers 500 with
// them. Under policy.CountSucceeded the middleware gives the 500's unit
// back, and its IETF RateLimit line reports it back, as it does for a
// handler that wrote nothing (package doc, "Counting only some
// responses"). It said "probe";r=2 in every 500 though the unit had come
// back (the store at 3, each request given back). A handler that wrote
// its status before panicking sent the headers with the request counted:
// they stay so. Through chi and http.ServeMux, over HTTP/1 and HTTP/2.
func TestPanicGiveBackReportedInTheRecoverersAnswer(t *testing.T) {
	for _, router := range []string{"chi", "ServeMux"} {
		for _, h2 := range []bool{false, true} {
			t.Run(router+map[bool]string{false: "/HTTP1", true: "/HTTP2"}[h2], func(t *testing.T) {
				store, _ := newStore(t)
				spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 3, Window: time.Hour}
				m := middleware.MustNew(store, []*policy.Policy{
					policy.Must(policy.New("probe", spec, user, policy.CountIf(policy.CountSucceeded))),
				})
				panics := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("handler bug") })
				wrote := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.WriteHeader(http.StatusServiceUnavailable)
					panic("handler bug")
				})
				var root http.Handler
				if router == "chi" {
					c := chi.NewRouter()
					c.Use(chimw.RequestLogger(quietLog{}), chimw.Recoverer, m.Handler)
					c.Get("/panics", panics)
					c.Get("/wrote", wrote)
					root = c
				} else {
					mux := http.NewServeMux()
					mux.Handle("GET /panics", m.Handler(panics))
					mux.Handle("GET /wrote", m.Handler(wrote))
					root = recoverTo500(mux)
				}
				srv := httptest.NewUnstartedServer(root)
				srv.Config.ErrorLog = log.New(io.Discard, "", 0) // superfluous WriteHeader after /wrote
				srv.EnableHTTP2 = h2
				if h2 {
					srv.StartTLS()
				} else {
					srv.Start()
				}
				defer srv.Close()
				for _, c := range []struct {
					path   string
					status int
					line   string
				}{
					{"/panics", 500, `"probe";r=3;t=0`},
					{"/panics", 500, `"probe";r=3;t=0`},
					{"/wrote", 503, `"probe";r=2;t=2760`}, // sent before the give-back
				} {
					req, _ := http.NewRequest("GET", srv.URL+c.path, nil)
					req.Header.Set("X-User", "ann")
					resp, err := srv.Client().Do(req)
					if err != nil {
						t.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != c.status || resp.Header.Get("RateLimit") != c.line {
						t.Errorf("%s: %d, RateLimit %q; want %d, %q", c.path, resp.StatusCode, resp.Header.Get("RateLimit"), c.status, c.line)
					}
				}
			})
		}
	}
}
