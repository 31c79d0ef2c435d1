package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// A configuration file (here held in memory; policy.Load reads one from
// disk) becomes a middleware; ApplyConfig swaps in the policies of a newer
// version while it serves.
func ExampleFromConfig() {
	cfg, err := policy.ParseConfig([]byte(`
headers: draft-6
policies:
  - name: per-ip
    limit: 2
    window: 1m
`), "ratekeeper.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	store, _ := algorithms.NewMemoryStore()
	m, err := middleware.FromConfig(store, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	get := func() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		fmt.Println(w.Code, w.Header().Get("RateLimit-Limit"), w.Header().Get("RateLimit-Remaining"))
	}
	get()
	get()
	get()

	// The same file with a higher limit: the client keeps what it used in
	// the window (2 of the new 5), so it gets 3 more, not 5.
	cfg2, _ := policy.ParseConfig([]byte("headers: draft-6\npolicies:\n  - {name: per-ip, limit: 5, window: 1m}\n"), "ratekeeper.yaml")
	if err := m.ApplyConfig(cfg2); err != nil {
		fmt.Println(err)
	}
	get()
	// Output:
	// 200 2 1
	// 200 2 0
	// 429 2 0
	// 200 5 2
}
