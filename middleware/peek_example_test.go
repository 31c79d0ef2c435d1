package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// A login limit of 3 per minute per user whose count a successful login
// clears (Middleware.Reset), and a status endpoint that tells a user how
// many attempts are left without spending one (Middleware.Peek).
func ExampleMiddleware_Reset() {
	store := exampleStore()
	defer store.Close()
	user := keyfunc.Must(keyfunc.Header("X-User"))
	login := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.PerMinute("login", 3, user, policy.WithAlgorithm(algorithms.FixedWindow)))})
	r := chi.NewRouter()
	r.With(login.Handler).Post("/login", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("password") != "right" {
			http.Error(w, "wrong password", http.StatusUnauthorized)
			return
		}
		if err := login.Reset(r); err != nil {
			http.Error(w, "try again", http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, "welcome")
	})
	r.Get("/login/attempts", func(w http.ResponseWriter, r *http.Request) {
		// The login route's policies, for this user, as a POST would find them.
		probe := r.Clone(r.Context())
		probe.Method = http.MethodPost
		res, err := login.Peek(probe)
		if err != nil || res.Len() == 0 {
			http.Error(w, "unknown", http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "%d attempts left", res.Decision(0).Remaining)
	})
	do := func(method, path, password string) {
		req := httptest.NewRequest(method, path, strings.NewReader("password="+password))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-User", "ann")
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		fmt.Printf("%s %s: %d %s\n", method, path, w.Code, strings.TrimSpace(w.Body.String()))
	}
	do("POST", "/login", "wrong")
	do("POST", "/login", "wrong")
	do("GET", "/login/attempts", "")
	do("POST", "/login", "right")
	do("GET", "/login/attempts", "")
	// Output:
	// POST /login: 401 wrong password
	// POST /login: 401 wrong password
	// GET /login/attempts: 200 1 attempts left
	// POST /login: 200 welcome
	// GET /login/attempts: 200 3 attempts left
}
