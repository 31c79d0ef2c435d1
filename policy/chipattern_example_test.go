package policy_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/policy"
)

// A rule table in the r.Use of chi's top-level router runs before chi
// routes; ChiPattern asks the router which route each request will take,
// as chi will route it.
func ExampleChiPattern() {
	r := chi.NewRouter()
	pattern := policy.ChiPattern(r)
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			fmt.Printf("%s %s -> %q\n", req.Method, req.URL.RequestURI(), pattern(req))
			next.ServeHTTP(w, req)
		})
	})
	ok := func(http.ResponseWriter, *http.Request) {}
	r.Post("/login", ok)
	r.Get("/users/{id}", ok)
	r.Route("/api", func(r chi.Router) { r.Get("/", ok) })

	for _, target := range []string{"POST /login", "GET /users/a%2Fb", "GET /api/", "GET /nowhere"} {
		var method, uri string
		fmt.Sscan(target, &method, &uri)
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, uri, nil))
	}
	// Output:
	// POST /login -> "/login"
	// GET /users/a%2Fb -> "/users/{id}"
	// GET /api/ -> "/api"
	// GET /nowhere -> ""
}
