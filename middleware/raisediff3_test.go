package middleware_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// random3Ops returns a random trace of n steps for three nested
// middlewares (see randomOps), and for each step the middleware a
// SetLimit or SetLimitUnguarded changes (a reload reloads all three
// alike).
func random3Ops(rng *rand.Rand, n int, W time.Duration) (ops []diffOp, layers []int) {
	for _, op := range randomOps(rng, n, W) {
		ops = append(ops, op)
		layers = append(layers, rng.IntN(3))
	}
	return ops, layers
}

var (
	draft7R = regexp.MustCompile(`^limit=(\d+), remaining=(\d+), reset=\d+$`)
	ietfR   = regexp.MustCompile(`^"p";r=(\d+);t=\d+$`)
)

// shown3 returns the limit and remaining that the headers of w report
// under prof for the one policy "p" (a 60 s window), at its lowest limit
// where the policy has several members, and how many members it has
// (1 for a single-valued profile), or an error.
func shown3(w http.Header, prof middleware.Profile) (q, r int64, n int, err error) {
	one := func(k string) (string, error) {
		if v := w.Values(k); len(v) != 1 {
			return "", fmt.Errorf("%s %q", k, v)
		}
		return w.Get(k), nil
	}
	num := func(k string) (int64, error) {
		s, err := one(k)
		if err != nil {
			return 0, err
		}
		return strconv.ParseInt(s, 10, 64)
	}
	list := func(k string) []string {
		var ms []string
		for _, line := range w.Values(k) {
			ms = append(ms, strings.Split(line, ", ")...)
		}
		return ms
	}
	switch prof {
	case middleware.IETF:
		pols, sts := list("RateLimit-Policy"), list("RateLimit")
		if len(pols) == 0 || len(pols) != len(sts) {
			return 0, 0, 0, fmt.Errorf("RateLimit-Policy %q, RateLimit %q", pols, sts)
		}
		q = -1
		for i, pol := range pols {
			s, ok := strings.CutPrefix(pol, `"p";q=`)
			s, ok2 := strings.CutSuffix(s, ";w=60")
			m := ietfR.FindStringSubmatch(sts[i])
			if !ok || !ok2 || m == nil {
				return 0, 0, 0, fmt.Errorf("RateLimit-Policy %q, RateLimit %q", pols, sts)
			}
			mq, _ := strconv.ParseInt(s, 10, 64)
			mr, _ := strconv.ParseInt(m[1], 10, 64)
			if q < 0 || mq < q {
				q, r = mq, mr
			}
		}
		return q, r, len(pols), nil
	case middleware.Draft7, middleware.Draft6:
		pols := list("RateLimit-Policy")
		pq := int64(-1)
		for _, pol := range pols {
			s, ok := strings.CutSuffix(pol, ";w=60")
			if !ok {
				return 0, 0, 0, fmt.Errorf("RateLimit-Policy %q", pols)
			}
			mq, _ := strconv.ParseInt(s, 10, 64)
			if pq < 0 || mq < pq {
				pq = mq
			}
		}
		if prof == middleware.Draft7 {
			st, err := one("RateLimit")
			if err != nil {
				return 0, 0, 0, err
			}
			m := draft7R.FindStringSubmatch(st)
			if m == nil {
				return 0, 0, 0, fmt.Errorf("RateLimit %q", st)
			}
			q, _ = strconv.ParseInt(m[1], 10, 64)
			r, _ = strconv.ParseInt(m[2], 10, 64)
		} else {
			if q, err = num("RateLimit-Limit"); err != nil {
				return 0, 0, 0, err
			}
			if r, err = num("RateLimit-Remaining"); err != nil {
				return 0, 0, 0, err
			}
		}
		if pq != q {
			// q is checked beside the list's lowest member by the caller.
			return q, r, -int(pq), nil
		}
		return q, r, len(pols), nil
	default: // Legacy, LegacyUnix
		if q, err = num("X-RateLimit-Limit"); err != nil {
			return 0, 0, 0, err
		}
		if r, err = num("X-RateLimit-Remaining"); err != nil {
			return 0, 0, 0, err
		}
		return q, r, 1, nil
	}
}

// replay3 replays ops on three nested middlewares enforcing spec
// (configured alike at spec.Limit, each with limits of its own set by
// SetLimit) on store, through router mux, under profile prof, and
// returns the first step where they disagree with the reference, or "".
//
// The reference: one counter per client (the configured Spec's, which
// every copy counts on whatever its limit); a request is counted by the
// outermost middleware when its limit admits it (L0), then refused by
// the first middleware further in whose limit the state before it does
// not admit; the headers report the policy once, at the lowest limit of
// the middlewares the request reached, with what is left there.
func replay3(t *testing.T, store algorithms.Store, clock *algotest.Clock, spec algorithms.Spec, ops []diffOp, layers []int, mux string, prof middleware.Profile, rng *rand.Rand, mode string, shadow int) string {
	t.Helper()
	ref := &oneCounter{spec: spec}
	conf := spec.Limit
	var eff [3]int64
	var popts []policy.Option
	cost := mode == "cost"
	switch mode {
	case "countif":
		popts = append(popts, policy.CountIf(func(r *http.Request, status int) bool { return status < 500 }))
	case "cost":
		popts = append(popts, policy.WithCost(func(r *http.Request) int64 {
			n, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
			return n
		}))
	}
	newP := func(s algorithms.Spec) *policy.Policy { return policy.Must(policy.New("p", s, constKey, popts...)) }
	var ms [3]*middleware.Middleware
	for i := range ms {
		opts := []middleware.Option{middleware.WithClock(clock), middleware.WithErrorHandler(func(*http.Request, error) {}), middleware.WithHeaders(prof)}
		if i == shadow {
			opts = append(opts, middleware.WithShadow(nil))
		}
		ms[i] = middleware.MustNew(store, []*policy.Policy{newP(spec)}, opts...)
	}
	final := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Status") == "500" {
			w.WriteHeader(500)
			return
		}
		w.Write([]byte("ok"))
	})
	var h http.Handler
	if mux == "chi" {
		r := chi.NewRouter()
		r.Use(ms[0].Handler, ms[1].Handler)
		r.With(ms[2].Handler).Get("/", final)
		h = r
	} else {
		sm := http.NewServeMux()
		sm.Handle("GET /", ms[2].Handler(final))
		h = ms[0].Handler(ms[1].Handler(sm))
	}
	var trace []string
	fail := func(format string, args ...any) string {
		return fmt.Sprintf("after %s: %s", strings.Join(trace, " "), fmt.Sprintf(format, args...))
	}
	for i, op := range ops {
		l := layers[i]
		switch op.kind {
		case "setlimit", "unguarded":
			trace = append(trace, fmt.Sprintf("%s@%d(%d)", op.kind, l, op.n))
		default:
			trace = append(trace, op.String())
		}
		switch op.kind {
		case "adv":
			clock.Advance(time.Duration(op.n))
		case "reload":
			for k := range eff {
				if eff[k] != 0 && op.n != conf {
					eff[k] = max(1, eff[k]*op.n/conf)
					if eff[k] == op.n {
						eff[k] = 0
					}
				}
			}
			conf = op.n
			s := spec
			s.Limit = op.n
			for _, m := range ms {
				if err := m.SetPolicies([]*policy.Policy{newP(s)}); err != nil {
					t.Fatal(err)
				}
			}
		case "setlimit", "unguarded":
			var err error
			if op.kind == "setlimit" {
				err = ms[l].SetLimit("p", op.n)
			} else {
				err = ms[l].SetLimitUnguarded("p", op.n)
			}
			if err != nil {
				t.Fatal(err)
			}
			eff[l] = op.n
			if eff[l] == conf {
				eff[l] = 0
			}
		case "req":
			var limits [3]int64
			for k := range limits {
				limits[k] = conf
				if eff[k] != 0 {
					limits[k] = eff[k]
				}
				if got := ms[k].Set().Policy(0).Spec().Limit; got != limits[k] {
					return fail("middleware %d: limit in force %d, reference %d", k, got, limits[k])
				}
			}
			for i := range op.n {
				now := clock.Now().UnixNano()
				c := int64(1)
				if cost && min(limits[0], limits[1], limits[2]) >= 3 {
					c = 1 + rng.Int64N(3)
				}
				// The middlewares the request reaches, up to the one
				// that refuses it: the first that admits it counts it
				// (a shadow one that would deny it counts nothing), the
				// others judge the state before it at their limits.
				shown, refusedBy, counted := int64(math.MaxInt64), -1, false
				for k, lim := range limits {
					if k != shadow {
						shown = min(shown, lim)
					}
					if ref.avail(now, lim) < c {
						if k == shadow {
							continue // it never refuses
						}
						refusedBy = k
						break
					}
					counted = true
				}
				left := ref.avail(now, shown)
				if counted {
					left -= c
				}
				if cost {
					trace[len(trace)-1] += fmt.Sprintf("c%d", c)
				}
				status := "200"
				if mode == "countif" && rng.IntN(3) == 0 {
					status = "500"
					trace[len(trace)-1] += "!"
				}
				w := serve(h, "GET", "/", "X-Cost", strconv.FormatInt(c, 10), "X-Status", status)
				if got, want := w.Code != http.StatusTooManyRequests, refusedBy < 0; got != want {
					return fail("request %d of %d (cost %d) at %v: admitted %v, reference %v (limits %v, reference has %d left at %d)",
						i+1, op.n, c, time.Unix(0, now).UTC().Format("15:04:05.000"), got, want, limits, ref.avail(now, shown), shown)
				}
				// A 500 is given back (CountIf) by the middleware that
				// counted it; a refusal stays counted there (a 429).
				if counted && (refusedBy >= 0 || status != "500") {
					for range c {
						ref.admitted = append(ref.admitted, now)
					}
				}
				if shadow >= 0 {
					continue // the admissions alone are checked
				}
				if refusedBy >= 0 {
					ra, err := strconv.ParseInt(w.Header().Get("Retry-After"), 10, 64)
					if err != nil {
						return fail("request %d of %d: 429 with Retry-After %q", i+1, op.n, w.Header().Get("Retry-After"))
					}
					at := now + ra*int64(time.Second)
					if a := ref.avail(at, shown); a < c {
						return fail("request %d of %d: Retry-After %d s, but the reference has %d left of %d then", i+1, op.n, ra, a, shown)
					}
					// (A sliding kind's wait for more than one unit
					// judged from a decision further out is the whole
					// allowance's: see unitsAfter.)
					if a := ref.avail(at-int64(time.Second), shown); ra > 1 && a >= c && (c == 1 || spec.Algorithm == algorithms.FixedWindow) {
						return fail("request %d of %d: Retry-After %d s, but the reference admits a second before (%d left of %d)", i+1, op.n, ra, a, shown)
					}
				}
				q, r, n, err := shown3(w.Header(), prof)
				if err != nil {
					return fail("request %d of %d (%d, limits %v): %v", i+1, op.n, w.Code, limits, err)
				}
				// A copy lowered further in below the configured
				// limit, or raised over it further in and followed by
				// no copy at it, writes a member of its own beside the
				// one further out (see middleware.ErrCountedTwice): the
				// lower is in force. (Under a single-valued profile, a
				// middleware further in may then report a higher one
				// over the values one in between restated: left for
				// now, so those values are checked for a consistent
				// state only.)
				several, reached := false, len(limits)
				if refusedBy >= 0 {
					reached = refusedBy + 1
				}
				for k := 1; k < reached; k++ {
					atConf := false
					for _, l := range limits[k+1 : reached] {
						atConf = atConf || l == conf
					}
					several = several || limits[k] < conf || limits[k] != conf && (!atConf || limits[0] <= conf)
				}
				if n < 0 {
					// A draft list whose lowest member is not the value's.
					if -int64(n) != shown || !several {
						return fail("request %d of %d (%d, limits %v, configured %d): RateLimit-Policy %q beside limit %d", i+1, op.n, w.Code, limits, conf,
							w.Header().Values("RateLimit-Policy"), q)
					}
					n = 2
				}
				if n != 1 && !several {
					return fail("request %d of %d (%d, limits %v, configured %d): %d members %q %q", i+1, op.n, w.Code, limits, conf, n,
						w.Header().Values("RateLimit-Policy"), w.Header().Values("RateLimit"))
				}
				if several && prof != middleware.IETF && q != shown && r > 0 && q-r == shown-left && slices.Contains(limits[:reached], q) {
					continue
				}
				if q != shown || r != max(left, 0) {
					return fail("request %d of %d (%d, limits %v): reported q=%d r=%d, reference q=%d r=%d", i+1, op.n, w.Code, limits, q, r, shown, max(left, 0))
				}
			}
		}
	}
	return ""
}

// TestRaiseDifferentialThree is TestRaiseDifferential through three
// nested middlewares that run one policy, configured alike and reloaded
// together, each raising or lowering it on its own (SetLimit,
// SetLimitUnguarded, back to the configured limit): every order of
// raised, lowered and configured copies. Each request is admitted
// exactly when the lowest limit among the middlewares admits it,
// counting once every request counted (the outermost counts what its
// limit admits, those refused further in too), and the response reports
// the policy at the lowest limit of the middlewares it reached, with
// what is left there, in every profile: once, but where a copy further
// in is lowered below the configured limit or raised over it with no
// configured copy further in (each writes its member then, see
// middleware.ErrCountedTwice); a 429's Retry-After is no earlier than
// the reference's wait, and no later for one unit. In a third of the
// traces one of the three is in shadow mode: it never refuses, counts
// what it would admit, and leaves what it would deny to the next (the
// admissions alone are checked then). Through chi and a ServeMux, with
// costs of 1 to 3, counting only the responses below 500 (CountIf: a
// 500 is given back by the middleware that counted it, a 429 further in
// is not), or neither; on the memory store and (fewer traces) on Redis.
// RK_SHRINK=1 shrinks a failing trace.
func TestRaiseDifferentialThree(t *testing.T) {
	profs := []middleware.Profile{middleware.IETF, middleware.Draft7, middleware.Draft6, middleware.Legacy, middleware.LegacyUnix}
	for _, name := range storetest.Names {
		for _, spec := range raisedKinds(8) {
			for _, mode := range []string{"plain", "cost", "countif"} {
				runs := 30
				if name != "memory" {
					if mode != "plain" {
						continue
					}
					runs = 3
				}
				t.Run(fmt.Sprintf("%s/%s/%s", name, spec.Algorithm, mode), func(t *testing.T) {
					seed := uint64(time.Now().UnixNano())
					for run := range runs {
						rng := rand.New(rand.NewPCG(seed, uint64(run)))
						ops, layers := random3Ops(rng, 120, spec.Window)
						mux := []string{"chi", "ServeMux"}[rng.IntN(2)]
						shadow := -1 // the middleware in shadow mode, if any
						if rng.IntN(3) == 0 {
							shadow = rng.IntN(3)
						}
						prof := profs[rng.IntN(len(profs))]
						clock := algotest.NewClock(t0)
						store := storetest.New(t, name, clock)
						if d := replay3(t, store, clock, spec, ops, layers, mux, prof, rng, mode, shadow); d != "" {
							if os.Getenv("RK_SHRINK") != "" {
								d = shrink3(t, name, spec, ops, layers, mux, prof, seed, run, mode, shadow)
							}
							t.Fatalf("seed %d run %d (%s, %v, shadow %d): %s", seed, run, mux, prof, shadow, d)
						}
					}
				})
			}
		}
	}
}

// shrink3 drops steps of a failing trace while it still fails (a debugging
// aid, on RK_SHRINK), and returns the failure of the shortest.
func shrink3(t *testing.T, name string, spec algorithms.Spec, ops []diffOp, layers []int, mux string, prof middleware.Profile, seed uint64, run int, mode string, shadow int) string {
	try := func(ops []diffOp, layers []int) string {
		rng := rand.New(rand.NewPCG(seed, uint64(run)+1000))
		clock := algotest.NewClock(t0)
		return replay3(t, storetest.New(t, name, clock), clock, spec, ops, layers, mux, prof, rng, mode, shadow)
	}
	last := try(ops, layers)
	for changed := true; changed; {
		changed = false
		for i := 0; i < len(ops); i++ {
			o := append(append([]diffOp{}, ops[:i]...), ops[i+1:]...)
			l := append(append([]int{}, layers[:i]...), layers[i+1:]...)
			if d := try(o, l); d != "" {
				ops, layers, last, changed = o, l, d, true
				i--
			}
		}
	}
	return last
}
