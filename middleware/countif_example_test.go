package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// A login limit that counts only failed attempts: a user who signs in is
// never limited, while guessing passwords is, five a minute.
func Example_countFailedLogins() {
	store := exampleStore()
	defer store.Close()
	user := keyfunc.Must(keyfunc.Header("X-User"))
	m := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.Login(user, policy.CountIf(policy.CountFailed))),
	})
	// Eight successful logins, then six failures: the sixth is refused,
	// and so is the right password after it, for a minute.
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Password") != "secret" {
			http.Error(w, "wrong password", http.StatusUnauthorized)
			return
		}
		fmt.Fprintln(w, "welcome")
	}))
	try := func(password string) int {
		r := httptest.NewRequest("POST", "/login", nil)
		r.Header.Set("X-User", "ann")
		r.Header.Set("X-Password", password)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	var ok, wrong []int
	for range 8 {
		ok = append(ok, try("secret"))
	}
	for range 6 {
		wrong = append(wrong, try("guess"))
	}
	fmt.Println(ok)
	fmt.Println(wrong)
	fmt.Println(try("secret"), "given back:", m.Stats().GivenBack)
	// Output:
	// [200 200 200 200 200 200 200 200]
	// [401 401 401 401 401 429]
	// 429 given back: 8
}
