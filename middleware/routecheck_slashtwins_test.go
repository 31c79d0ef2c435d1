package middleware_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// slashTwinRules are a rule table with 100/min on GET /x and 2/min on
// GET /x/: two routes to ServeMux, one to chi, which reports both as "/x".
func slashTwinRules() []*policy.Policy {
	return []*policy.Policy{
		fixed("plain", 100, time.Minute, peerIP, policy.WithRoutes("GET /x")),
		fixed("slash", 2, time.Minute, peerIP, policy.WithRoutes("GET /x/")),
	}
}

// TestCheckRoutesSlashTwins: with the middleware's default pattern
// function, installed where chi has routed (r.With, r.Group), a policy
// on "GET /x/" applied to the route "/x" too, silently (chi reports both
// routes as "/x"): 100/min on /x was 2/min, and CheckRoutes said nothing.
// It now reports the pair, naming both policies and routes, for chi in
// both placements, and not for a ServeMux, where "/x" and "/x/" are two
// routes, nor for one policy holding both routes.
func TestCheckRoutesSlashTwins(t *testing.T) {
	for _, place := range []string{"chi r.With", "chi r.Group", "ServeMux"} {
		t.Run(place, func(t *testing.T) {
			store, _ := newStore(t)
			var got reports
			m := middleware.MustNew(store, slashTwinRules(), got.handler(), middleware.CheckForwarding(false))
			var h http.Handler
			var pattern func(*http.Request) string
			switch place {
			case "chi r.With":
				r := chi.NewRouter()
				r.With(m.Handler).Get("/x", ok)
				r.With(m.Handler).Get("/x/", ok)
				h, pattern = r, policy.ChiPattern(r)
			case "chi r.Group":
				r := chi.NewRouter()
				r.Group(func(r chi.Router) {
					r.Use(m.Handler)
					r.Get("/x", ok)
					r.Get("/x/", ok)
				})
				h, pattern = r, policy.ChiPattern(r)
			default:
				sm := http.NewServeMux()
				sm.Handle("GET /x", m.Handler(ok))
				sm.Handle("GET /x/", m.Handler(ok))
				h, pattern = sm, policy.ServeMuxPattern(sm)
			}
			chi := place != "ServeMux"

			// The gap, served: the third GET /x is refused under chi
			// (the 2/min of "/x/"), never under ServeMux.
			var codes []int
			for range 3 {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/x", nil))
				codes = append(codes, rec.Code)
			}
			if refused := codes[2] == http.StatusTooManyRequests; refused != chi {
				t.Fatalf("GET /x x3: %v; refused %v, want %v", codes, refused, chi)
			}

			err := m.CheckRoutes(pattern)
			cfgErr := m.CheckConfigRoutes(&policy.Config{Policies: slashTwinRules()}, pattern)
			if !chi {
				if err != nil || cfgErr != nil {
					t.Fatalf("ServeMux: CheckRoutes = %v, CheckConfigRoutes = %v, want nil (two routes)", err, cfgErr)
				}
				return
			}
			for name, err := range map[string]error{"CheckRoutes": err, "CheckConfigRoutes": cfgErr} {
				if !errors.Is(err, middleware.ErrIndistinctRoutes) {
					t.Fatalf("%s = %v, want ErrIndistinctRoutes", name, err)
				}
				if errors.Is(err, middleware.ErrUnknownRoute) {
					t.Errorf("%s = %v: ErrUnknownRoute too, but both routes exist", name, err)
				}
				msg := err.Error()
				for _, want := range []string{`policy "slash", route "GET /x/"`, `policy "plain", route "GET /x"`, `GET /x/ to "/x"`} {
					if !strings.Contains(msg, want) {
						t.Errorf("%s error does not say %q:\n%s", name, want, msg)
					}
				}
				if n := strings.Count(msg, middleware.ErrIndistinctRoutes.Error()); n != 1 {
					t.Errorf("%s: %d pairs reported, want 1:\n%s", name, n, msg)
				}
			}

			// Not a pair: one policy with both routes; methods that do
			// not meet; another path.
			for _, ps := range [][]*policy.Policy{
				{fixed("both", 100, time.Minute, peerIP, policy.WithRoutes("GET /x", "GET /x/"))},
				{fixed("plain", 100, time.Minute, peerIP, policy.WithRoutes("GET /x")),
					fixed("post", 2, time.Minute, peerIP, policy.WithMethods(http.MethodPost), policy.WithRoutes("/x/"))},
			} {
				if err := m.CheckConfigRoutes(&policy.Config{Policies: ps}, pattern); errors.Is(err, middleware.ErrIndistinctRoutes) {
					t.Errorf("CheckConfigRoutes(%v) = %v, want no ErrIndistinctRoutes", ps, err)
				}
			}
			// A route without a method meets GET: reported.
			anyMethod := []*policy.Policy{
				fixed("plain", 100, time.Minute, peerIP, policy.WithRoutes("GET /x")),
				fixed("any", 2, time.Minute, peerIP, policy.WithRoutes("/x/")),
			}
			if err := m.CheckConfigRoutes(&policy.Config{Policies: anyMethod}, pattern); !errors.Is(err, middleware.ErrIndistinctRoutes) || !strings.Contains(err.Error(), `policy "any", route "/x/"`) {
				t.Errorf("CheckConfigRoutes(GET /x, /x/) = %v, want ErrIndistinctRoutes naming \"any\"", err)
			}
		})
	}
}

// TestCheckRoutesSlashTwinsAsked: the router is asked, whatever asks it:
// a pattern function of the user's own that asks chi gets the pair
// reported as ChiPattern's does, as does a chi router that has only the
// route "/x/" (a request for /x/ is routed to "/x", so a policy on "GET
// /x" applies there); HEAD meets GET; policies whose methods
// (WithMethods) do not meet are no pair.
func TestCheckRoutesSlashTwinsAsked(t *testing.T) {
	store, _ := newStore(t)
	m := middleware.MustNew(store, slashTwinRules(), middleware.CheckForwarding(false))
	both := chi.NewRouter()
	both.Get("/x", ok)
	both.Get("/x/", ok)
	only := chi.NewRouter()
	only.Get("/x/", ok)
	own := func(r *http.Request) string { return policy.ChiPattern(both)(r) }
	for name, pattern := range map[string]func(*http.Request) string{
		"own function": own, "only /x/": policy.ChiPattern(only),
	} {
		if err := m.CheckRoutes(pattern); !errors.Is(err, middleware.ErrIndistinctRoutes) || errors.Is(err, middleware.ErrUnknownRoute) {
			t.Errorf("%s: CheckRoutes = %v, want ErrIndistinctRoutes alone", name, err)
		}
	}
	head := []*policy.Policy{
		fixed("plain", 100, time.Minute, peerIP, policy.WithRoutes("GET /x")),
		fixed("head", 2, time.Minute, peerIP, policy.WithRoutes("HEAD /x/")),
	}
	headRouter := chi.NewRouter()
	headRouter.Get("/x", ok)
	headRouter.Head("/x/", ok)
	if err := m.CheckConfigRoutes(&policy.Config{Policies: head}, policy.ChiPattern(headRouter)); !errors.Is(err, middleware.ErrIndistinctRoutes) ||
		!strings.Contains(err.Error(), `HEAD /x/ to "/x"`) {
		t.Errorf("CheckConfigRoutes(GET /x, HEAD /x/) = %v, want ErrIndistinctRoutes for HEAD /x/", err)
	}
	apart := []*policy.Policy{
		fixed("gets", 100, time.Minute, peerIP, policy.WithMethods(http.MethodGet), policy.WithRoutes("/x")),
		fixed("deletes", 2, time.Minute, peerIP, policy.WithMethods(http.MethodDelete), policy.WithRoutes("/x/")),
	}
	apartRouter := chi.NewRouter()
	apartRouter.Get("/x", ok)
	apartRouter.Delete("/x/", ok)
	if err := m.CheckConfigRoutes(&policy.Config{Policies: apart}, policy.ChiPattern(apartRouter)); err != nil {
		t.Errorf("CheckConfigRoutes(GET /x, DELETE /x/) = %v, want nil", err)
	}
}
