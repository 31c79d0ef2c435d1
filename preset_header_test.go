package ratekeeper_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestCommentsPresetHeaders pins what the comments preset's doc says a
// client reads: RateLimit-Policy "comments";q=3;w=60 (the bucket's
// capacity over the window its rate is given in, which read alone says 3
// a minute, not the 6 it refills), and once the 3 are spent t=10, the
// wait for the next comment, which the 429's Retry-After agrees with;
// through chi and ServeMux.
func TestCommentsPresetHeaders(t *testing.T) {
	for _, router := range []string{"chi", "ServeMux"} {
		t.Run(router, func(t *testing.T) {
			now := time.Unix(1_700_000_040, 0)
			store, err := algorithms.NewMemoryStore(algorithms.WithClock(algorithms.ClockFunc(func() time.Time { return now })))
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.Comments(keyfunc.Must(keyfunc.IP())))})
			ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
			var h http.Handler
			if router == "chi" {
				r := chi.NewRouter()
				r.With(m.Handler).Post("/comments", ok)
				h = r
			} else {
				mux := http.NewServeMux()
				mux.Handle("POST /comments", m.Handler(ok))
				h = mux
			}
			want := []struct {
				code                  int
				rateLimit, retryAfter string
			}{
				{200, `"comments";r=2;t=10`, ""},
				{200, `"comments";r=1;t=10`, ""},
				{200, `"comments";r=0;t=10`, ""},
				{429, `"comments";r=0;t=10`, "10"},
			}
			for i, w := range want {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("POST", "/comments", nil))
				if got := rec.Header().Get("RateLimit-Policy"); got != `"comments";q=3;w=60` {
					t.Errorf("post %d: RateLimit-Policy %q", i+1, got)
				}
				if rec.Code != w.code || rec.Header().Get("RateLimit") != w.rateLimit || rec.Header().Get("Retry-After") != w.retryAfter {
					t.Errorf("post %d: %d, RateLimit %q, Retry-After %q; want %d, %q, %q", i+1, rec.Code,
						rec.Header().Get("RateLimit"), rec.Header().Get("Retry-After"), w.code, w.rateLimit, w.retryAfter)
				}
			}
		})
	}
}
