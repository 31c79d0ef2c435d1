package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestUnroutedWarnedWithoutObserver: a new user's rule table at chi's
// top-level r.Use, without WithPatternFunc, as the README's quick start
// would build it (no error handler, no logger, no observer): its login
// policy never applies. The README calls such requests "not silent", but
// the warning went only to an error handler or a LogObserver, so with the
// defaults nothing was said anywhere (only Stats().Unrouted counted). A
// middleware without an observer logs its failure State changes on
// slog.Default; it now logs its setup warnings there too, once.
func TestUnroutedWarnedWithoutObserver(t *testing.T) {
	buf := defaultLogTo(t)
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ip := keyfunc.Must(keyfunc.IP())
	m, err := middleware.New(store, []*policy.Policy{policy.Must(policy.Login(ip, policy.WithRoutes("POST /login")))})
	if err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	r.Use(m.Handler)
	r.Post("/login", func(http.ResponseWriter, *http.Request) {})
	for range 3 {
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/login", strings.NewReader("u=1")))
	}
	if got := m.Stats().Unrouted; got != 3 {
		t.Fatalf("Stats().Unrouted = %d, want 3", got)
	}
	recs := logRecords(t, buf, "ratekeeper: setup warning")
	if len(recs) != 1 {
		t.Fatalf("setup warnings on slog.Default: %v, want one naming ErrUnrouted", recs)
	}
	if e, _ := recs[0]["error"].(string); !strings.Contains(e, middleware.ErrUnrouted.Error()) || !strings.Contains(e, `"login"`) {
		t.Errorf("setup warning error = %q, want ErrUnrouted naming \"login\"", e)
	}
}

// TestUnroutedToHandlerOnly: with an error handler and no log, the warning
// goes to the handler alone, as before: slog.Default is the last resort.
func TestUnroutedToHandlerOnly(t *testing.T) {
	buf := defaultLogTo(t)
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var told []error
	ip := keyfunc.Must(keyfunc.IP())
	m, err := middleware.New(store, []*policy.Policy{policy.Must(policy.Login(ip, policy.WithRoutes("POST /login")))},
		middleware.WithErrorHandler(func(_ *http.Request, err error) { told = append(told, err) }))
	if err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	r.Use(m.Handler)
	r.Post("/login", func(http.ResponseWriter, *http.Request) {})
	for range 2 {
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/login", strings.NewReader("u=1")))
	}
	if len(told) != 1 {
		t.Errorf("error handler told %v, want ErrUnrouted once", told)
	}
	if recs := logRecords(t, buf, "ratekeeper: setup warning"); len(recs) != 0 {
		t.Errorf("setup warnings on slog.Default: %v, want none (the error handler heard it)", recs)
	}
}
