package ratekeeper_test

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// loginHandler answers 200 to the password "right", 401 to any other, and
// panics when asked to (X-Panic).
var loginHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Panic") != "" {
		panic("login backend failed")
	}
	if r.Header.Get("X-Password") != "right" {
		http.Error(w, "wrong password", http.StatusUnauthorized)
		return
	}
	io.WriteString(w, "welcome")
})

// member returns the RateLimit member of policy name in resp ("" if none).
func member(resp *http.Response, name string) string {
	re := regexp.MustCompile(`"` + name + `";r=\d+`)
	return re.FindString(strings.Join(resp.Header.Values("RateLimit"), ", "))
}

// TestEndToEndCountFailedLogins: a login policy that counts only failed
// logins (policy.CountIf(policy.CountFailed)), beside a per-IP login policy
// that counts every attempt, under global limits, through chi and a
// ServeMux. Successful logins are not counted (their unit comes back once
// the handler has answered), five failures in a minute are limited, a
// handler that panics counts as failed, and the stacked policies keep
// their units.
func TestEndToEndCountFailedLogins(t *testing.T) {
	for _, router := range []string{"chi", "stdlib"} {
		t.Run(router, func(t *testing.T) {
			clock, store := clockedStore(t)
			ip, ipUser := keys(t)
			global := middleware.MustNew(store, []*policy.Policy{
				policy.Must(policy.PerMinute("per-minute", 100, ip, policy.WithAlgorithm(algorithms.FixedWindow))),
			}, middleware.WithClock(clock))
			login := middleware.MustNew(store, []*policy.Policy{
				policy.Must(policy.Login(ipUser, policy.CountIf(policy.CountFailed))),
				policy.Must(policy.PerMinute("login-ip", 20, ip, policy.WithAlgorithm(algorithms.FixedWindow))),
			}, middleware.WithClock(clock))
			var h http.Handler
			if router == "chi" {
				r := chi.NewRouter()
				r.Use(auth)
				r.Use(global.Handler)
				r.With(login.Handler).Post("/login", loginHandler)
				h = r
			} else {
				mux := http.NewServeMux()
				mux.Handle("POST /login", login.Handler(loginHandler))
				h = auth(global.Handler(mux))
			}
			srv := httptest.NewUnstartedServer(h)
			srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the panic's report
			srv.Start()
			t.Cleanup(srv.Close)

			type step struct {
				user, password string
				panics         bool
				status         int    // 0: the request fails (the handler panicked)
				login, loginIP string // RateLimit members, r only
				perMinute      string
			}
			run := func(i int, s step) {
				t.Helper()
				clock.Advance(time.Second)
				r, err := http.NewRequest("POST", srv.URL+"/login", nil)
				if err != nil {
					t.Fatal(err)
				}
				r.Header.Set("X-Forwarded-For", "192.0.2.20")
				r.Header.Set("X-User", s.user)
				r.Header.Set("X-Password", s.password)
				if s.panics {
					r.Header.Set("X-Panic", "1")
				}
				resp, err := srv.Client().Do(r)
				if s.status == 0 {
					if err == nil {
						resp.Body.Close()
						t.Errorf("step %d: the panicking handler answered %d", i, resp.StatusCode)
					}
					return
				}
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				got := [3]string{member(resp, "login"), member(resp, "login-ip"), member(resp, "per-minute")}
				want := [3]string{`"login";r=` + s.login, `"login-ip";r=` + s.loginIP, `"per-minute";r=` + s.perMinute}
				if resp.StatusCode != s.status || got != want {
					t.Errorf("step %d (%s, %q): %d %v, want %d %v", i, s.user, s.password, resp.StatusCode, got, s.status, want)
				}
			}
			steps := []step{
				// Six successful logins: each is counted when decided (its
				// headers say 4 left) and given back once answered, so the
				// next one finds 5 again. login-ip and the global limit
				// count every attempt.
				{"ann", "right", false, 200, "4", "19", "99"},
				{"ann", "right", false, 200, "4", "18", "98"},
				{"ann", "right", false, 200, "4", "17", "97"},
				{"ann", "right", false, 200, "4", "16", "96"},
				{"ann", "right", false, 200, "4", "15", "95"},
				{"ann", "right", false, 200, "4", "14", "94"},
				// Five failures use up the login allowance.
				{"ann", "wrong", false, 401, "4", "13", "93"},
				{"ann", "wrong", false, 401, "3", "12", "92"},
				{"ann", "wrong", false, 401, "2", "11", "91"},
				{"ann", "wrong", false, 401, "1", "10", "90"},
				{"ann", "wrong", false, 401, "0", "9", "89"},
				// The sixth attempt is refused, right password or not,
				// consuming nothing of the login middleware (all or
				// nothing); the global middleware, outside, counted it.
				{"ann", "right", false, 429, "0", "9", "88"},
				{"ann", "wrong", false, 429, "0", "9", "87"},
				// A handler that panics counts as a failure: bob has 4 left
				// after it, and his success after that is given back.
				{"bob", "right", true, 0, "", "", ""},
				{"bob", "right", false, 200, "3", "7", "85"},
				{"bob", "right", false, 200, "3", "6", "84"},
			}
			for i, s := range steps {
				run(i, s)
			}
			// A minute after ann's first failure (at +7 s) it has left the
			// log: one attempt again.
			clock.Set(t0.Add(67*time.Second + time.Nanosecond - time.Second))
			run(len(steps), step{"ann", "right", false, 200, "0", "19", "99"})
			if got := login.Stats().GivenBack; got != 9 {
				t.Errorf("Stats().GivenBack = %d, want 9 (the successful logins admitted)", got)
			}
			if got := global.Stats().GivenBack; got != 0 {
				t.Errorf("the global middleware gave back %d requests; it counts every one", got)
			}
		})
	}
}
