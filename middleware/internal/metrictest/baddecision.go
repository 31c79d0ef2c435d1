package metrictest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// delayingStore answers every check with a Delay of an hour: a decision a
// fixed_window policy cannot give (a broken or hostile store), which the
// middleware refuses as a failure of the store. It forwards Take alone, so
// that the memory store's single-check path does not bypass it.
type delayingStore struct{ mem *algorithms.MemoryStore }

func (s delayingStore) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	ds, err := s.mem.Take(ctx, checks...)
	for i := range ds {
		ds[i].Delay = time.Hour
	}
	return ds, err
}

// InvalidDecision serves one GET / through chi and a middleware observed
// by obs, whose one policy, a fixed window "per-ip" of 10 a minute, is
// decided by a store that answers with a Delay (which a fixed window
// cannot give), with opts after WithObserver and an ErrorHandler that
// drops the error. The middleware must count one failed store call in
// Stats().StoreErrors and answer status.
func InvalidDecision(t *testing.T, obs middleware.Observer, status int, opts ...middleware.Option) {
	t.Helper()
	mem := memStore(t)
	opts = append([]middleware.Option{middleware.WithObserver(obs), middleware.WithErrorHandler(func(*http.Request, error) {})}, opts...)
	m := middleware.MustNew(delayingStore{mem}, []*policy.Policy{Fixed("per-ip", 10, Remote)}, opts...)
	KeepAlive(t, m)
	r := chi.NewRouter()
	r.Use(m.Handler)
	r.Get("/", func(http.ResponseWriter, *http.Request) {})
	w := httptest.NewRecorder()
	r.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if w.Code != status {
		t.Fatalf("status %d, want %d", w.Code, status)
	}
	if got := m.Stats().StoreErrors; got != 1 {
		t.Fatalf("Stats().StoreErrors = %d, want 1", got)
	}
}
