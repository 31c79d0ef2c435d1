package middleware_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestGiveBackReportedPastAnUnlistedMember: the IETF line of a middleware
// further out reports a give-back (policy.CountIf) when a middleware
// further in has taken one of its members out of that line. Here the
// policy api is given to both; the inner middleware was reloaded from a
// limit of 10 to 5, so it decides api under the Spec it replaced (a guard
// the outer one does not count) and its member of api replaces the outer
// one's. A request whose handler writes nothing gives cnt's unit back
// before the headers go out: the outer line must report cnt as the store
// has it after the give-back (r=10;t=0), as it does without the inner
// middleware. It reported cnt as decided (r=9;t=60): the revision looked
// for a member of each of the outer middleware's policies in turn, api's
// among them, and gave up on the whole line when one was missing. Both
// orders of the outer policies, through chi and a ServeMux, on an
// injected clock.
func TestGiveBackReportedPastAnUnlistedMember(t *testing.T) {
	quiet := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	denied := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusUnauthorized) })
	for _, cntFirst := range []bool{false, true} {
		for _, mux := range []string{"chi", "ServeMux"} {
			name := mux + ", api first"
			if cntFirst {
				name = mux + ", cnt first"
			}
			t.Run(name, func(t *testing.T) {
				store, clock := newStore(t)
				api5 := fixed("api", 5, time.Minute, constKey)
				cnt := fixed("cnt", 10, time.Minute, constKey, policy.CountIf(policy.CountFailed))
				outerPolicies := []*policy.Policy{api5, cnt}
				if cntFirst {
					outerPolicies = []*policy.Policy{cnt, api5}
				}
				outer := middleware.MustNew(store, outerPolicies, middleware.WithClock(clock))
				inner := middleware.MustNew(store, []*policy.Policy{fixed("api", 10, time.Minute, constKey)}, middleware.WithClock(clock),
					middleware.WithErrorHandler(func(*http.Request, error) {})) // ErrCountedTwice, expected here
				if err := inner.SetPolicies([]*policy.Policy{api5}); err != nil {
					t.Fatal(err)
				}
				var h http.Handler
				if mux == "chi" {
					r := chi.NewRouter()
					r.Use(outer.Handler)
					r.With(inner.Handler).Get("/quiet", quiet)
					r.With(inner.Handler).Get("/denied", denied)
					h = r
				} else {
					sm := http.NewServeMux()
					sm.Handle("GET /quiet", inner.Handler(quiet))
					sm.Handle("GET /denied", inner.Handler(denied))
					h = outer.Handler(sm)
				}
				for _, step := range []struct {
					path   string
					status int
					want   string
				}{
					{"/quiet", 200, `"cnt";r=10;t=0 | "api";r=4;t=60`},
					{"/denied", 401, `"cnt";r=9;t=59 | "api";r=3;t=59`},
					{"/quiet", 200, `"cnt";r=9;t=58 | "api";r=2;t=58`},
				} {
					w := serve(h, "GET", step.path)
					if got := strings.Join(w.Result().Header.Values("RateLimit"), " | "); w.Code != step.status || got != step.want {
						t.Errorf("GET %s: %d, RateLimit %q; want %d, %q", step.path, w.Code, got, step.status, step.want)
					}
					clock.Advance(time.Second)
				}
				if st := outer.Stats(); st.GivenBack != 2 {
					t.Errorf("outer's GivenBack %d, want 2", st.GivenBack)
				}
			})
		}
	}
}
