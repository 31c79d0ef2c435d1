package middleware_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	chimw "github.com/go-chi/chi/v5/middleware"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestMethodKeyCountsHeadAsGet: a policy keyed by client and method, 2 a
// minute, around a router that serves HEAD with the GET handler
// (ServeMux does; chi does with its GetHead middleware). A client
// alternating GET and HEAD must get the GET handler run twice in the
// minute, not twice per method: keyfunc.Method's key of a HEAD is
// "GET". With HEAD its own key, the statuses were [200 200 200 200 429
// 429] and the handler ran 4 times.
func TestMethodKeyCountsHeadAsGet(t *testing.T) {
	var runs int
	count := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { runs++; w.Write([]byte("ok")) })
	mux := http.NewServeMux()
	mux.Handle("GET /items", count)
	cr := chi.NewRouter()
	cr.Use(chimw.GetHead)
	cr.Get("/items", count)
	for _, c := range []struct {
		name   string
		router http.Handler
	}{{"ServeMux", mux}, {"chi", cr}} {
		t.Run(c.name, func(t *testing.T) {
			runs = 0
			store, _ := newStore(t)
			p := fixed("per-method", 2, time.Minute, keyfunc.Must(keyfunc.Join(remote, keyfunc.Method())))
			h := middleware.MustNew(store, []*policy.Policy{p}).Handler(c.router)
			var codes []int
			for _, m := range []string{"GET", "HEAD", "GET", "HEAD", "GET", "HEAD"} {
				codes = append(codes, serve(h, m, "/items").Code)
			}
			want := []int{200, 200, 429, 429, 429, 429}
			for i := range want {
				if codes[i] != want[i] {
					t.Fatalf("GET and HEAD alternating: statuses %v, want %v (the GET handler ran %d times)", codes, want, runs)
				}
			}
			if runs != 2 {
				t.Fatalf("the GET handler ran %d times, want 2", runs)
			}
		})
	}
}
