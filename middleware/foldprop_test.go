package middleware_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestFoldPropLimitInForce: random nestings (chi or a ServeMux) of up to
// three middlewares running one policy configured at 10 a minute (fixed
// window), each enforcing or in shadow mode, given the same
// *policy.Policy or one built alike, or one nested in itself, with random
// SetLimit calls at or below the configured limit (copies folded into
// the 10, or unfolded further in): a request is admitted only when the
// requests admitted in its window, and it, fit the lowest limit in force
// among the enforcing middlewares, counting everything admitted in the
// window at every level (a lowered copy never gets more than its limit).
// On the merge base and on the fold the same requests are admitted in
// each of 2,000 such scenarios.
func TestFoldPropLimitInForce(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 50
	}
	fails := 0
	for seed := range n {
		if msg := foldPropScenario(t, uint64(seed)); msg != "" {
			fails++
			if fails <= 8 {
				t.Errorf("seed %d: %s", seed, msg)
			}
		}
	}
	if fails > 0 {
		t.Errorf("%d of %d scenarios failed", fails, n)
	}
}

func foldPropScenario(t *testing.T, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 11))
	kind := algorithms.FixedWindow
	spec := algorithms.Spec{Algorithm: kind, Limit: 10, Window: time.Minute}
	shared := policy.Must(policy.New("p", spec, userKey))
	nm := 1 + rng.IntN(3)
	clock := newClockStore(t)
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	ms := make([]*middleware.Middleware, nm)
	shadow := make([]bool, nm)
	limit := make([]int64, nm)
	var log strings.Builder
	fmt.Fprintf(&log, "kind %s;", kind)
	self := nm >= 2 && rng.IntN(5) == 0 // the last middleware is the first nested in itself
	for i := range nm {
		limit[i] = 10
		if self && i == nm-1 {
			ms[i], shadow[i] = ms[0], shadow[0]
			fmt.Fprintf(&log, " mw%d=mw0;", i)
			continue
		}
		shadow[i] = nm > 1 && rng.IntN(3) == 0
		p := shared
		if rng.IntN(2) == 0 {
			p = policy.Must(policy.New("p", spec, userKey))
		}
		ps := []*policy.Policy{p}
		opts := []middleware.Option{middleware.WithClock(clock.clock), quiet}
		if shadow[i] {
			ps = append(ps, policy.Must(policy.New("own"+strconv.Itoa(i), algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: 20 * time.Second}, userKey)))
			opts = append(opts, middleware.WithShadow(nil))
		}
		ms[i] = middleware.MustNew(clock.store, ps, opts...)
		fmt.Fprintf(&log, " mw%d shadow=%v shared=%v;", i, shadow[i], p == shared)
	}
	var h http.Handler
	if rng.IntN(2) == 0 {
		r := chi.NewRouter()
		for i := range nm - 1 {
			r.Use(ms[i].Handler)
		}
		r.With(ms[nm-1].Handler).Get("/", ok)
		h = r
		log.WriteString(" chi;")
	} else {
		sm := http.NewServeMux()
		sm.Handle("GET /", ms[nm-1].Handler(ok))
		h = sm
		for i := nm - 2; i >= 0; i-- {
			h = ms[i].Handler(h)
		}
		log.WriteString(" mux;")
	}
	admitted := map[string][]time.Time{}
	for step := range 120 {
		x := rng.IntN(100)
		switch {
		case x < 65:
			u := []string{"a", "b"}[rng.IntN(2)]
			now := clock.clock.Now()
			inWindow := 0
			for _, at := range admitted[u] {
				if kind == algorithms.FixedWindow && at.Truncate(time.Minute).Equal(now.Truncate(time.Minute)) ||
					kind == algorithms.SlidingLog && now.Sub(at) < time.Minute {
					inWindow++
				}
			}
			low := int64(1 << 30)
			for i := range nm {
				if !shadow[i] {
					low = min(low, limit[i])
				}
			}
			// Admitted, it must fit: a denial may come sooner (a
			// middleware further out that admitted a request refused
			// further in has counted it).
			want := int64(inWindow+1) <= low
			w := serve(h, "GET", "/", "X-User", u)
			got := w.Code == http.StatusOK
			fmt.Fprintf(&log, " %d:req %s %d (in window %d, lowest %d)", step, u, w.Code, inWindow, low)
			if got {
				admitted[u] = append(admitted[u], now)
			}
			if got && !want {
				l := log.String()
				if len(l) > 900 {
					l = l[:200] + " ... " + l[len(l)-700:]
				}
				return fmt.Sprintf("%s <- admitted %v, want %v; RateLimit %q", l, got, want, w.Header().Values("RateLimit"))
			}
		case x < 80:
			d := time.Duration(1+rng.IntN(20)) * time.Second
			clock.clock.Advance(d)
			fmt.Fprintf(&log, " %d:+%s", step, d)
		default:
			i := rng.IntN(nm)
			l := []int64{0, 2, 3, 4, 5, 6, 7, 8, 10}[rng.IntN(9)]
			if err := ms[i].SetLimit("p", l); err != nil {
				return err.Error()
			}
			eff := l
			if l == 0 {
				eff = 10
			}
			for j := range nm {
				if ms[j] == ms[i] {
					limit[j] = eff
				}
			}
			fmt.Fprintf(&log, " %d:mw%d.SetLimit(%d)", step, i, l)
		}
	}
	return ""
}

// A clockStore is a store and the clock it reads.
type clockStore struct {
	store algorithms.Store
	clock *algotest.Clock
}

func newClockStore(t *testing.T) clockStore {
	s, c := newStore(t)
	c.Advance(time.Second)
	return clockStore{s, c}
}

var userKey = func(r *http.Request) (string, error) { return r.Header.Get("X-User"), nil }
