package middleware_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestNestedThreeLayersMembers: three nested middlewares, each with a
// policy of its own (4, 3 and 2 a minute, keyed alike), list one member
// per policy of each middleware the request reached, in order, outermost
// first (see the package doc's Stacking and routes): all three while the
// innermost admits or refuses it; the outer two once the middle one
// refuses it (the innermost never sees it, so its policy, which might
// not even apply to it, has no member); the outer one's alone once that
// one refuses. Under draft -07 the RateLimit-Policy list follows alike.
// Policies of one name that count apart (built at other Specs in each
// middleware) are each enforced, but reported by one member of that name
// in each field, the most constraining: two members of one name a client
// could not tell apart (the package doc says to name them apart).
// Through chi and a ServeMux.
func TestNestedThreeLayersMembers(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	// One row per request: status, RateLimit-Policy, RateLimit (lines
	// joined with " | "), as served by the middlewares named g, a, l.
	named := [][3]string{
		{"200", `"g";q=4;w=60 | "a";q=3;w=60 | "l";q=2;w=60`, `"g";r=3;t=60 | "a";r=2;t=60 | "l";r=1;t=60`},
		{"200", `"g";q=4;w=60 | "a";q=3;w=60 | "l";q=2;w=60`, `"g";r=2;t=60 | "a";r=1;t=60 | "l";r=0;t=60`},
		{"429", `"g";q=4;w=60 | "a";q=3;w=60 | "l";q=2;w=60`, `"g";r=1;t=60 | "a";r=0;t=60 | "l";r=0;t=60`},
		{"429", `"g";q=4;w=60 | "a";q=3;w=60`, `"g";r=0;t=60 | "a";r=0;t=60`},
		{"429", `"g";q=4;w=60`, `"g";r=0;t=60`},
	}
	for _, tc := range []struct {
		name  string
		names [3]string
		want  [][3]string
		draft [][2]string // draft -07: RateLimit-Policy, RateLimit
	}{
		{
			name: "distinct names", names: [3]string{"g", "a", "l"}, want: named,
			draft: [][2]string{
				{"4;w=60 | 3;w=60 | 2;w=60", "limit=2, remaining=1, reset=60"},
				{"4;w=60 | 3;w=60 | 2;w=60", "limit=2, remaining=0, reset=60"},
				{"4;w=60 | 3;w=60 | 2;w=60", "limit=2, remaining=0, reset=60"},
				{"4;w=60 | 3;w=60", "limit=3, remaining=0, reset=60"},
				{"4;w=60", "limit=4, remaining=0, reset=60"},
			},
		},
		{
			// One member per name: the most constraining of those the
			// middlewares wrote (the lowest r; of equal r and t, the
			// lowest q).
			name: "one name, three Specs", names: [3]string{"p", "p", "p"},
			want: [][3]string{
				{"200", `"p";q=2;w=60`, `"p";r=1;t=60`},
				{"200", `"p";q=2;w=60`, `"p";r=0;t=60`},
				{"429", `"p";q=2;w=60`, `"p";r=0;t=60`},
				{"429", `"p";q=3;w=60`, `"p";r=0;t=60`},
				{"429", `"p";q=4;w=60`, `"p";r=0;t=60`},
			},
		},
	} {
		for _, prof := range []middleware.Profile{middleware.IETF, middleware.Draft7} {
			if prof == middleware.Draft7 && tc.draft == nil {
				continue
			}
			for _, mux := range []string{"chi", "ServeMux"} {
				t.Run(fmt.Sprintf("%s/%v/%s", tc.name, prof, mux), func(t *testing.T) {
					store, clock := newStore(t)
					var ms [3]*middleware.Middleware
					for i, limit := range []int64{4, 3, 2} {
						ms[i] = middleware.MustNew(store, []*policy.Policy{fixed(tc.names[i], limit, time.Minute, constKey)},
							middleware.WithClock(clock), quiet, middleware.WithHeaders(prof))
					}
					h := nested3Router(mux, ms[0], ms[1], ms[2])
					for i, row := range tc.want {
						w := serve(h, "GET", "/")
						want := [3]string{row[0], row[1], row[2]}
						if prof == middleware.Draft7 {
							want[1], want[2] = tc.draft[i][0], tc.draft[i][1]
						}
						got := [3]string{fmt.Sprint(w.Code), strings.Join(w.Header().Values("RateLimit-Policy"), " | "),
							strings.Join(w.Header().Values("RateLimit"), " | ")}
						if got != want {
							t.Errorf("request %d: %d\n RateLimit-Policy %s\n RateLimit        %s\nwant %s\n RateLimit-Policy %s\n RateLimit        %s",
								i+1, w.Code, got[1], got[2], want[0], want[1], want[2])
						}
						if ra := w.Header().Get("Retry-After"); (w.Code == http.StatusTooManyRequests) != (ra == "60") {
							t.Errorf("request %d: %d, Retry-After %q", i+1, w.Code, ra)
						}
					}
				})
			}
		}
	}
}
