package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// An API whose errors have a shape of its own answers the refusals other
// than the 429 in that shape: here the 400 of a request without the
// X-API-Key header its policy keys by.
func ExampleWithRejectHandler() {
	store, _ := algorithms.NewMemoryStore()
	defer store.Close()
	perKey := policy.Must(policy.PerMinute("per-api-key", 100, keyfunc.Must(keyfunc.Header("X-API-Key"))))
	m := middleware.MustNew(store, []*policy.Policy{perKey},
		middleware.WithRejectHandler(func(w http.ResponseWriter, r *http.Request, rej middleware.Rejection) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(rej.Status)
			fmt.Fprintf(w, `{"code":%d,"message":"missing API key"}`, rej.Status)
		}))
	h := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))

	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	fmt.Println(w.Code, w.Body.String())
	// Output: 400 {"code":400,"message":"missing API key"}
}
