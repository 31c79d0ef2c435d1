package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestReverseProxyBackendRateLimitFields pins what the package doc says
// of a handler behind the middleware that adds rate-limit fields of its
// own: an httputil.ReverseProxy whose backend is limited by ratekeeper too,
// in the same profile ("back", 3 a minute, behind "front", 5 a minute).
// The proxy adds the backend's field lines to those the middleware set.
// Under IETF the lines make one list per field (a field may be split over
// lines), each policy a member of it, and the client reads both policies.
// Under the single-valued profiles each field carries two values, the
// middleware's and then the backend's (draft -07's dictionary lines
// combine into one whose later keys win: the backend's), which the
// middleware cannot reduce to the more constraining without a writer
// around the handler on every request (see the doc); draft -06/-07's
// RateLimit-Policy list holds both policies. Should the middleware come
// to reduce them, this fails, and the doc's paragraph is to change.
// The proxy here has no ModifyResponse: the remedy the doc gives,
// DropBackendRateLimitFields, is tested in proxied_drop_test.go
// (TestDropBackendRateLimitFieldsThroughReverseProxy).
// Through chi and a ServeMux, to a real backend server.
func TestReverseProxyBackendRateLimitFields(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	single := map[middleware.Profile][]string{
		middleware.Draft7:     {"RateLimit"},
		middleware.Draft6:     {"RateLimit-Limit", "RateLimit-Remaining"},
		middleware.Legacy:     {"X-RateLimit-Limit", "X-RateLimit-Remaining"},
		middleware.LegacyUnix: {"X-RateLimit-Limit", "X-RateLimit-Remaining"},
	}
	for _, prof := range []middleware.Profile{middleware.IETF, middleware.Draft7, middleware.Draft6, middleware.Legacy, middleware.LegacyUnix} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(fmt.Sprintf("%v/%s", prof, mux), func(t *testing.T) {
				store, clock := newStore(t)
				back := middleware.MustNew(store, []*policy.Policy{fixed("back", 3, time.Minute, constKey)},
					middleware.WithClock(clock), middleware.WithHeaders(prof), quiet)
				backend := httptest.NewServer(back.Handler(ok))
				defer backend.Close()
				target, err := url.Parse(backend.URL)
				if err != nil {
					t.Fatal(err)
				}
				proxy := httputil.NewSingleHostReverseProxy(target)
				front := middleware.MustNew(store, []*policy.Policy{fixed("front", 5, time.Minute, constKey)},
					middleware.WithClock(clock), middleware.WithHeaders(prof), quiet)
				h := behindFront(mux, front, proxy)
				for n := 1; n <= 4; n++ {
					w := serve(h, "GET", "/")
					wantCode := http.StatusOK
					if n > 3 {
						wantCode = http.StatusTooManyRequests // the backend's
					}
					if w.Code != wantCode {
						t.Fatalf("request %d: %d, want %d", n, w.Code, wantCode)
					}
					fr, br := 5-n, max(0, 3-n) // front and back remaining
					switch prof {
					case middleware.IETF:
						pol := strings.Join(w.Header().Values("RateLimit-Policy"), ", ")
						rl := strings.Join(w.Header().Values("RateLimit"), ", ")
						if want := `"front";q=5;w=60, "back";q=3;w=60`; pol != want {
							t.Errorf("request %d: RateLimit-Policy %q, want %q", n, pol, want)
						}
						if want := fmt.Sprintf(`"front";r=%d;t=60, "back";r=%d;t=60`, fr, br); rl != want {
							t.Errorf("request %d: RateLimit %q, want %q", n, rl, want)
						}
						continue
					case middleware.Draft7:
						want := []string{fmt.Sprintf("limit=5, remaining=%d, reset=60", fr), fmt.Sprintf("limit=3, remaining=%d, reset=60", br)}
						if got := w.Header().Values("RateLimit"); !slices.Equal(got, want) {
							t.Errorf("request %d: RateLimit %q, want %q", n, got, want)
						}
					default:
						k := single[prof]
						want := []string{"5", "3", fmt.Sprint(fr), fmt.Sprint(br)}
						got := append(w.Header().Values(k[0]), w.Header().Values(k[1])...)
						if !slices.Equal(got, want) {
							t.Errorf("request %d: %s and %s %q, want %q", n, k[0], k[1], got, want)
						}
					}
					if prof == middleware.Draft7 || prof == middleware.Draft6 {
						if got, want := strings.Join(w.Header().Values("RateLimit-Policy"), ", "), "5;w=60, 3;w=60"; got != want {
							t.Errorf("request %d: RateLimit-Policy %q, want %q", n, got, want)
						}
					}
				}
			})
		}
	}
}

// behindFront returns a router of kind mux ("chi", or else a ServeMux)
// that serves every path with proxy behind front.
func behindFront(mux string, front *middleware.Middleware, proxy http.Handler) http.Handler {
	if mux == "chi" {
		r := chi.NewRouter()
		r.Use(front.Handler)
		r.Handle("/*", proxy)
		return r
	}
	sm := http.NewServeMux()
	sm.Handle("/", front.Handler(proxy))
	return sm
}
