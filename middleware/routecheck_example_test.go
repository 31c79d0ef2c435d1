package middleware_test

import (
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// A rule table whose login route has a typo, and whose API route names
// chi's wildcard otherwise: both are valid patterns, and neither policy
// would ever apply. CheckRoutes, called once the routes are registered,
// says so before the server starts.
func ExampleMiddleware_CheckRoutes() {
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		panic(err)
	}
	defer store.Close()
	ip := keyfunc.Must(keyfunc.IP())
	m := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.PerMinute("login", 5, ip, policy.WithRoutes("POST /logn"))),
		policy.Must(policy.PerSecond("api", 10, ip, policy.WithRoutes("GET /api/{id}"))),
	})
	r := chi.NewRouter()
	r.Group(func(r chi.Router) {
		r.Use(m.Handler)
		r.Post("/login", func(http.ResponseWriter, *http.Request) {})
		r.Get("/api/{ID}", func(http.ResponseWriter, *http.Request) {})
	})
	if err := m.CheckRoutes(policy.ChiPattern(r)); err != nil {
		fmt.Println(err) // log.Fatal(err) in a server
	}
	// Output:
	// middleware: a policy's route matches no route of the router: policy "login", route "POST /logn": the router routes POST /logn to no route, so the policy never applies there
	// middleware: a policy's route matches no route of the router: policy "api", route "GET /api/{id}": the router routes GET /api/{id} to "/api/{ID}", so the policy never applies there
}
