package middleware_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// This file holds the store differential of storediff_test.go for nested
// middlewares: two or three middlewares on one store wrapping each other
// (a global one, stricter ones on some routes), with policies of the same
// name and key in several layers, built alike over the memory store and
// over Redis, given the same script, every response compared byte for
// byte.

// ndTrace is one nested trace's settings, drawn from its index and seed.
type ndTrace struct {
	router   string // "chi" or "mux"
	layers   int    // distinct middlewares: 2 or 3
	selfNest bool   // with 2 layers, the inner one wraps some routes twice
	profiles []middleware.Profile
	shadow   []bool
	sharePtr bool // a policy alike in two layers is one *policy.Policy
	pk       bool
	hold     bool
	big      bool
	deny     bool
}

func (tr ndTrace) String() string {
	return fmt.Sprintf("router=%s layers=%d selfNest=%v profiles=%v shadow=%v sharePtr=%v pk=%v clockedHold=%v big=%v denyCache=%v",
		tr.router, tr.layers, tr.selfNest, tr.profiles, tr.shadow, tr.sharePtr, tr.pk, tr.hold, tr.big, tr.deny)
}

// ndSide is one of the two nested stacks compared: an sdSide (its name,
// clock, store, router and the errors reported, served recorded; its m
// unused) with the middlewares of its layers.
type ndSide struct {
	sdSide
	ms      []*middleware.Middleware
	entered []int // how many times the request entered each layer
}

// ndRouter wires the middlewares of a side as users nest them. chi: the
// first with r.Use on the router (before routing: route-restricted
// policies see no pattern there), the second with r.Use in a Group, the
// third (or the second again, selfNest) with r.With on two routes; GET /
// is left to the first alone. ServeMux: the first around the mux, the
// others around routed handlers, twice on the same two routes.
func ndRouter(kind string, ms []*middleware.Middleware, selfNest bool, entered []int) http.Handler {
	// layer returns middleware l's Handler, counting the entries into it.
	layer := func(l int) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			h := ms[l].Handler(next)
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				entered[l]++
				h.ServeHTTP(w, r)
			})
		}
	}
	var inner func(http.Handler) http.Handler
	switch {
	case len(ms) == 3:
		inner = layer(2)
	case selfNest:
		inner = layer(1)
	default:
		inner = func(h http.Handler) http.Handler { return h }
	}
	if kind == "chi" {
		r := chi.NewRouter()
		r.Use(layer(0))
		r.Get("/", sdHandler)
		r.Group(func(r chi.Router) {
			r.Use(layer(1))
			r.Get("/items/{id}", sdHandler)
			r.Put("/items/{id}", sdHandler)
			r.With(inner).Post("/items/{id}", sdHandler)
			r.With(inner).Post("/login", sdHandler)
		})
		return sdUser(r)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /", sdHandler)
	mux.Handle("GET /items/{id}", layer(1)(sdHandler))
	mux.Handle("PUT /items/{id}", layer(1)(sdHandler))
	mux.Handle("POST /items/{id}", layer(1)(inner(sdHandler)))
	mux.Handle("POST /login", layer(1)(inner(sdHandler)))
	return sdUser(layer(0)(mux))
}

// ndLayers draws the policies of each layer: a pool of one to three
// (the first of the kind the index picks) from which each layer takes
// some, as they are or as a copy at another limit (raised or lowered),
// beside policies of its own; the first layer takes the pool's first.
func ndLayers(rng *rand.Rand, idx, layers int, big bool) [][]sdPol {
	pool := []sdPol{sdRandPol(rng, "p0", sdKinds[(idx+idx/8)%len(sdKinds)], true, big)}
	for i := 1; i < 1+rng.IntN(3); i++ {
		pool = append(pool, sdRandPol(rng, "p"+strconv.Itoa(i), "", true, big))
	}
	out := make([][]sdPol, layers)
	for l := range layers {
		for i, p := range pool {
			if !(l == 0 && i == 0) && rng.IntN(3) == 0 {
				continue
			}
			if l > 0 && rng.IntN(3) == 0 { // a copy at another limit
				s := p.spec
				s.Limit = sdN(rng, 10, big)
				if s.Validate() == nil {
					p.spec = s
				}
			}
			out[l] = append(out[l], p)
		}
		if len(out[l]) == 0 || rng.IntN(3) == 0 {
			out[l] = append(out[l], sdRandPol(rng, fmt.Sprintf("q%d", l), "", true, big))
		}
	}
	return out
}

// ndBuild builds the layers' policies; with share, a policy alike to one
// of an earlier layer is that one.
func ndBuild(layers [][]sdPol, share bool) ([][]*policy.Policy, error) {
	out := make([][]*policy.Policy, len(layers))
	built := map[string]*policy.Policy{}
	for l, ps := range layers {
		for _, p := range ps {
			id := fmt.Sprintf("%#v", p)
			if b, ok := built[id]; ok && share {
				out[l] = append(out[l], b)
				continue
			}
			b, err := p.build()
			if err != nil {
				return nil, err
			}
			built[id] = b
			out[l] = append(out[l], b)
		}
	}
	return out, nil
}

// ndCover counts what the nested traces went through.
type ndCover struct {
	traces, steps, requests, reloads, reloadsAll, configs, setLimits, peeks, resets int
	denied, held, shadowed, givenBack, abandoned, keyRejected, countedTwice         int
	profiles, routers                                                               map[string]int
	// The requests that entered two middlewares or more, and those that
	// entered two with a policy of one name (or one middleware twice).
	nested, repeated int
}

// runNestedDiff replays one random nested trace on a memory and a Redis
// side and returns the first divergence, or "".
func runNestedDiff(t *testing.T, seed uint64, idx, steps int, cov *ndCover) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, uint64(idx)^0x6e657374))
	tr := ndTrace{
		router:   []string{"chi", "mux"}[idx%2],
		layers:   2 + (idx/2)%2,
		sharePtr: rng.IntN(4) == 0,
		hold:     rng.IntN(2) == 0,
		big:      idx%8 == 5,
		deny:     idx%3 == 1,
	}
	tr.selfNest = tr.layers == 2 && rng.IntN(2) == 0
	base := sdProfiles[(idx/4)%len(sdProfiles)]
	for l := range tr.layers {
		p := base
		if l > 0 && rng.IntN(4) == 0 {
			p = sdProfiles[rng.IntN(len(sdProfiles))]
		}
		tr.profiles = append(tr.profiles, p)
		tr.shadow = append(tr.shadow, rng.IntN(5) == 0)
	}
	tr.pk = base == middleware.IETF && rng.IntN(2) == 0
	layers := ndLayers(rng, idx, tr.layers, tr.big)

	t0 := time.Unix(1_700_000_040, 0).Add(time.Duration(rng.Int64N(int64(time.Minute))))
	var sides [2]*ndSide
	for i, name := range []string{"memory", "redis"} {
		s := &ndSide{sdSide: sdSide{name: name, clock: algotest.NewClock(t0)}}
		if name == "redis" {
			// On a redis-server of the trace's own, under the default prefix.
			var done func()
			s.store, done = sdRedisStore(t, redistest.New(t), s.clock, redisstore.DefaultPrefix, tr.deny)
			defer done()
		} else {
			s.store = storetest.New(t, name, s.clock)
		}
		built, err := ndBuild(layers, tr.sharePtr)
		if err != nil {
			t.Fatal(err)
		}
		for l := range tr.layers {
			opts := s.options(tr.profiles[l], fmt.Sprintf("layer %d: ", l), tr.hold, tr.pk, tr.shadow[l])
			m, err := middleware.New(s.store, built[l], opts...)
			if err != nil {
				t.Fatal(err)
			}
			s.ms = append(s.ms, m)
		}
		s.entered = make([]int, tr.layers)
		s.h = ndRouter(tr.router, s.ms, tr.selfNest, s.entered)
		sides[i] = s
	}
	mem, rds := sides[0], sides[1]
	cov.traces++
	cov.routers[tr.router]++
	for _, p := range tr.profiles {
		cov.profiles[p.String()]++
	}

	var log []string
	fail := func(format string, args ...any) string {
		if len(log) > 25 {
			log = append([]string{fmt.Sprintf("(%d steps before)", len(log)-25)}, log[len(log)-25:]...)
		}
		var pols strings.Builder
		for l, ps := range layers {
			fmt.Fprintf(&pols, "layer %d:\n%s", l, sdYAML(ps))
		}
		return fmt.Sprintf("seed %d trace %d (%s)\npolicies now (config form; costs not shown):\n%s\nlast steps:\n\t%s\n%s", seed, idx, tr,
			pols.String(), strings.Join(log, "\n\t"), fmt.Sprintf(format, args...))
	}
	request := func(q sdReq) string {
		clear(mem.entered)
		a, b := mem.do(t, q), rds.do(t, q)
		// A request that entered layers running a policy of one name
		// (or one layer twice) met the repeat logic.
		names, entries, repeat := map[string]bool{}, 0, false
		for l, n := range mem.entered {
			entries += n
			if n == 0 {
				continue
			}
			for _, p := range mem.ms[l].Set().Policies() {
				repeat = repeat || n > 1 || names[p.Name()]
				names[p.Name()] = true
			}
		}
		if entries > 1 {
			cov.nested++
		}
		if repeat && entries > 1 {
			cov.repeated++
		}
		ea, eb := mem.takeErrs(), rds.takeErrs()
		cov.requests++
		if d := sdDiffResp(a, b); d != "" {
			return fail("request %s: memory and redis differ: %s\nmemory: %d %v %q\nredis:  %d %v %q\nerrors: %q / %q",
				q, d, a.status, a.header, a.body, b.status, b.header, b.body, ea, eb)
		}
		if !slices.Equal(ea, eb) {
			return fail("request %s: errors reported differ: memory %q, redis %q", q, ea, eb)
		}
		for _, e := range ea {
			if strings.Contains(e, middleware.ErrCountedTwice.Error()) {
				cov.countedTwice++
			}
		}
		if !mem.clock.Now().Equal(rds.clock.Now()) {
			return fail("request %s: the clocks parted: memory %v, redis %v (held differently)", q, mem.clock.Now(), rds.clock.Now())
		}
		switch a.status {
		case http.StatusTooManyRequests:
			cov.denied++
		case http.StatusBadRequest, http.StatusForbidden:
			cov.keyRejected++
		}
		return ""
	}
	// apply calls f on both sides and returns how their errors differ,
	// or "" and the error.
	apply := func(what string, f func(s *ndSide) error) (string, error) {
		ea, eb := f(mem), f(rds)
		if fmt.Sprint(ea) != fmt.Sprint(eb) {
			return fail("%s: memory %v, redis %v", what, ea, eb), nil
		}
		return "", ea
	}
	allPols := func() []sdPol {
		var ps []sdPol
		for _, l := range layers {
			ps = append(ps, l...)
		}
		return ps
	}
	var q sdReq
	for step := range steps {
		cov.steps++
		switch r := rng.IntN(100); {
		case r < 20:
			d := sdStep(rng, mem.clock.Now(), allPols())
			mem.clock.Advance(d)
			rds.clock.Advance(d)
			log = append(log, fmt.Sprintf("%d: advance %v", step, d))
		case r < 70:
			if q.method == "" || rng.IntN(3) != 0 {
				q = ndRandReq(rng, tr.big)
			}
			k := 1
			if rng.IntN(4) == 0 {
				k = 2 + rng.IntN(5)
			}
			log = append(log, fmt.Sprintf("%d: %d× %s", step, k, q))
			var before int64
			for _, m := range mem.ms {
				before += m.Stats().Delayed
			}
			for range k {
				if d := request(q); d != "" {
					return d
				}
			}
			for _, m := range mem.ms {
				cov.held += int(m.Stats().Delayed)
			}
			cov.held -= int(before)
		case r < 76: // one layer reloaded, in code or from a file
			l := rng.IntN(tr.layers)
			viaConfig := rng.IntN(2) == 0
			next := sdMutate(rng, layers[l], !viaConfig, tr.big)
			log = append(log, fmt.Sprintf("%d: reload layer %d (config %v) to %v", step, l, viaConfig, sdNames(next)))
			d, err := apply("reload", func(s *ndSide) error {
				if viaConfig {
					cfg, err := policy.ParseConfig([]byte(sdYAML(next)), "nested.yaml")
					if err != nil {
						return err
					}
					return s.ms[l].ApplyConfig(cfg)
				}
				ps, err := sdBuildAll(next)
				if err != nil {
					t.Fatal(err)
				}
				return s.ms[l].SetPolicies(ps)
			})
			if d != "" {
				return d
			}
			if err == nil {
				layers[l] = next
				cov.reloads++
				if viaConfig {
					cov.configs++
				}
			} else {
				log = append(log, fmt.Sprintf("%d: (refused: %v)", step, err))
			}
		case r < 80: // a policy's limit reloaded in every layer that has it
			ps := allPols()
			name := ps[rng.IntN(len(ps))].name
			lim := sdN(rng, 10, tr.big)
			next := make([][]sdPol, len(layers))
			for l := range layers {
				next[l] = slices.Clone(layers[l])
				for i := range next[l] {
					if next[l][i].name == name {
						s := next[l][i].spec
						s.Limit = lim
						if s.Validate() == nil {
							next[l][i].spec = s
						}
					}
				}
			}
			log = append(log, fmt.Sprintf("%d: reload %s to %d in every layer", step, name, lim))
			refused := false
			for _, s := range sides {
				built, err := ndBuild(next, tr.sharePtr)
				if err != nil {
					t.Fatal(err)
				}
				for l, m := range s.ms {
					if err := m.SetPolicies(built[l]); err != nil {
						refused = true
						log = append(log, fmt.Sprintf("%d: (%s layer %d refused: %v)", step, s.name, l, err))
					}
				}
			}
			if refused {
				return fail("a reload of limits refused")
			}
			layers = next
			cov.reloadsAll++
		case r < 90: // SetLimit or SetLimitUnguarded in one layer
			l := rng.IntN(tr.layers)
			ps := allPols() // a name of another layer too: refused alike
			name := ps[rng.IntN(len(ps))].name
			lim := sdN(rng, 13, tr.big) - 1
			unguarded := rng.IntN(3) == 0
			log = append(log, fmt.Sprintf("%d: setlimit layer %d %s %d (unguarded %v)", step, l, name, lim, unguarded))
			if d, _ := apply("setlimit", func(s *ndSide) error {
				if unguarded {
					return s.ms[l].SetLimitUnguarded(name, lim)
				}
				return s.ms[l].SetLimit(name, lim)
			}); d != "" {
				return d
			}
			cov.setLimits++
		case r < 97: // a Peek on one layer
			l := rng.IntN(tr.layers)
			pq := ndRandReq(rng, tr.big)
			if q.method != "" && rng.IntN(2) == 0 {
				pq = q
			}
			log = append(log, fmt.Sprintf("%d: peek layer %d %s", step, l, pq))
			ra, erra := mem.ms[l].Peek(pq.peekReq())
			rb, errb := rds.ms[l].Peek(pq.peekReq())
			if d := sdDiffPeek(ra, erra, rb, errb); d != "" {
				return fail("peek layer %d %s: %s", l, pq, d)
			}
			cov.peeks++
		default: // a Reset of a client in one layer
			l := rng.IntN(tr.layers)
			pq := sdRandReq(rng, tr.big)
			log = append(log, fmt.Sprintf("%d: reset layer %d %s", step, l, pq))
			if d, _ := apply("reset", func(s *ndSide) error { return s.ms[l].Reset(pq.peekReq()) }); d != "" {
				return d
			}
			cov.resets++
		}
	}
	for l := range tr.layers {
		sa, sb := mem.ms[l].Stats(), rds.ms[l].Stats()
		if sa != sb {
			return fail("layer %d stats at the end: memory %+v, redis %+v", l, sa, sb)
		}
		if sb.StoreErrors != 0 || sb.FailedOpen != 0 {
			return fail("layer %d: the redis store failed: %+v", l, sb)
		}
		cov.shadowed += int(sa.ShadowDenied)
		cov.givenBack += int(sa.GivenBack)
		cov.abandoned += int(sa.Abandoned)
	}
	return ""
}

// ndRandReq returns a random request (sdRandReq), two in three of them
// to the routes nested middlewares wrap.
func ndRandReq(rng *rand.Rand, big bool) sdReq {
	q := sdRandReq(rng, big)
	if rng.IntN(3) != 0 {
		mp := [][2]string{{"GET", "/items/1"}, {"PUT", "/items/2"}, {"POST", "/items/1"}, {"POST", "/items/2"}, {"POST", "/login"}}[rng.IntN(5)]
		q.method, q.path = mp[0], mp[1]
	}
	return q
}

// TestStoreDifferentialNested is TestStoreDifferentialHTTP for nested
// middlewares: two or three middlewares over one store wrapping each
// other (chi: r.Use on the router, r.Use in a Group, r.With on routes;
// ServeMux: one around the mux, handlers wrapped twice; with two, half
// the traces nest the second in itself), with policies of the same name
// and key in several layers (as they are, one *policy.Policy shared in a
// quarter of the traces, or copies at other limits, raised or lowered
// again by SetLimit, SetLimitUnguarded and reloads of one layer or of a
// policy in every layer) beside policies of their own, shadow mode in
// some layers, costs, CountIf, leaky_queue holds (some cut short), every
// header profile (a layer's own in some traces), partition keys, the
// Redis deny cache; each side on a clock of its own stepped alike, every
// response compared byte for byte, the errors reported, Peeks and Resets
// per layer, and each layer's Stats at the end. A failure prints its seed
// and trace; NESTDIFF_SEED and NESTDIFF_TRACE replay one, NESTDIFF_TRACES
// sets how many traces to run.
func TestStoreDifferentialNested(t *testing.T) {
	storetest.New(t, "redis", algotest.NewClock(t0)) // skips with the reason when there is no redis-server
	traces, steps := 24, 250
	if testing.Short() {
		traces, steps = 6, 120
	}
	seed, traces, only := sdReplayEnv(t, "NESTDIFF", traces)
	cov := &ndCover{profiles: map[string]int{}, routers: map[string]int{}}
	start := time.Now()
	// A seed whose traces miss a rare event runs more traces, up to twice
	// as many, rather than fail (see ndShort).
	checked := only < 0 && !testing.Short()
	for idx := 0; idx < traces || checked && idx < 2*traces && ndShort(cov) != ""; idx++ {
		if only >= 0 && idx != only {
			continue
		}
		if d := runNestedDiff(t, seed, idx, steps, cov); d != "" {
			t.Fatalf("%s\nreplay: NESTDIFF_SEED=%d NESTDIFF_TRACE=%d go test -race ./middleware/ -run TestStoreDifferentialNested", d, seed, idx)
		}
	}
	t.Logf("seed %d: %d traces, %d steps, %d requests (%d through nested middlewares, %d of them meeting a policy name again; %d denied, %d held, %d shadow-denied, %d key-rejected, %d given back, %d holds cut, %d counted-twice reports), %d reloads of a layer (%d from config), %d of a policy in every layer, %d SetLimits, %d peeks, %d resets in %v; profiles %v, routers %v",
		seed, cov.traces, cov.steps, cov.requests, cov.nested, cov.repeated, cov.denied, cov.held, cov.shadowed, cov.keyRejected, cov.givenBack, cov.abandoned, cov.countedTwice,
		cov.reloads, cov.configs, cov.reloadsAll, cov.setLimits, cov.peeks, cov.resets, time.Since(start).Round(time.Millisecond), cov.profiles, cov.routers)
	if short := ndShort(cov); checked && short != "" {
		t.Error(short)
	}
}

// ndShort reports what the traces run so far did not reach of what they
// are said to cover, or "".
func ndShort(cov *ndCover) string {
	if len(cov.profiles) != len(sdProfiles) || cov.denied == 0 || cov.held == 0 || cov.shadowed == 0 || cov.givenBack == 0 ||
		cov.countedTwice == 0 || cov.repeated == 0 || cov.reloads == 0 || cov.reloadsAll == 0 || cov.setLimits == 0 {
		return fmt.Sprintf("coverage short: %+v", *cov)
	}
	return ""
}
