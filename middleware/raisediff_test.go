package middleware_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// oneCounter is the reference a window kind's limit is held to through
// reloads and SetLimit: one counter per client whatever the limit, so
// that within a window (fixed, sliding or of buckets) a client is
// admitted no more than the limit in force, counting every request
// admitted there.
type oneCounter struct {
	spec     algorithms.Spec // Algorithm, Window and Buckets; Limit unused
	admitted []int64         // Unix ns of each admitted unit
}

// avail returns the whole units the reference has left at t under limit.
func (o *oneCounter) avail(t, limit int64) int64 {
	W := int64(o.spec.Window)
	count := func(from, to int64) int64 { // admitted in [from, to)
		n := int64(0)
		for _, a := range o.admitted {
			if a >= from && a < to {
				n++
			}
		}
		return n
	}
	switch o.spec.Algorithm {
	case algorithms.FixedWindow:
		k := t / W * W
		return limit - count(k, k+W)
	case algorithms.SlidingWindow:
		k := t / W * W
		e := t - k
		prev, curr := count(k-W, k), count(k, k+W)
		return limit - curr - (prev*(W-e)+W-1)/W
	case algorithms.SlidingBuckets:
		b := W / int64(o.spec.Buckets)
		k := t / b * b
		return limit - count(k+b-W, k+b)
	}
	panic("kind")
}

// diffOp is one step of a differential trace.
type diffOp struct {
	kind string // "adv", "req", "reload", "setlimit", "unguarded"
	n    int64
}

func (o diffOp) String() string { return fmt.Sprintf("%s(%d)", o.kind, o.n) }

// randomOps returns a random trace of n steps.
func randomOps(rng *rand.Rand, n int, W time.Duration) []diffOp {
	ops := make([]diffOp, 0, n)
	for range n {
		switch r := rng.IntN(20); {
		case r < 4:
			var d time.Duration
			switch rng.IntN(4) {
			case 0:
				d = time.Duration(rng.Int64N(int64(W / 4)))
			case 1:
				d = time.Duration(rng.Int64N(int64(W)))
			case 2:
				d = time.Duration(rng.Int64N(int64(3 * W)))
			default:
				d = W / 6
			}
			ops = append(ops, diffOp{"adv", int64(d)})
		case r < 12:
			ops = append(ops, diffOp{"req", 1 + rng.Int64N(6)})
		case r < 16:
			ops = append(ops, diffOp{"reload", 2 + rng.Int64N(11)})
		case r < 18:
			l := 2 + rng.Int64N(14)
			if rng.IntN(4) == 0 {
				l = 0
			}
			ops = append(ops, diffOp{"setlimit", l})
		default:
			l := 2 + rng.Int64N(14)
			if rng.IntN(4) == 0 {
				l = 0
			}
			ops = append(ops, diffOp{"unguarded", l})
		}
	}
	return ops
}

var rateLimitR = regexp.MustCompile(`^"p";r=(\d+);`)

// replayDiff replays ops on a middleware enforcing spec (configured at
// spec.Limit) on store, and returns the first step where it disagrees
// with the reference, or "".
func replayDiff(t *testing.T, store algorithms.Store, clock *algotest.Clock, spec algorithms.Spec, ops []diffOp, mode string, rng *rand.Rand) string {
	t.Helper()
	ref := &oneCounter{spec: spec}
	conf, eff := spec.Limit, int64(0)
	var popts []policy.Option
	switch mode {
	case "cost":
		popts = append(popts, policy.WithCost(func(r *http.Request) int64 {
			n, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
			return n
		}))
	case "countif":
		popts = append(popts, policy.CountIf(func(r *http.Request, status int) bool { return status < 500 }))
	}
	newP := func(s algorithms.Spec) *policy.Policy { return policy.Must(policy.New("p", s, remote, popts...)) }
	mopts := []middleware.Option{middleware.WithClock(clock), middleware.WithErrorHandler(func(*http.Request, error) {})}
	if mode == "shadow" {
		mopts = append(mopts, middleware.WithShadow(nil))
	}
	m := middleware.MustNew(store, []*policy.Policy{newP(spec)}, mopts...)
	final := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Status") == "500" {
			w.WriteHeader(500)
			return
		}
		w.Write([]byte("ok"))
	})
	var h http.Handler = m.Handler(final)
	if mode == "nested" {
		h = m.Handler(m.Handler(final))
	}
	var trace []string
	fail := func(format string, args ...any) string {
		return fmt.Sprintf("after %s: %s", strings.Join(trace, " "), fmt.Sprintf(format, args...))
	}
	for _, op := range ops {
		trace = append(trace, op.String())
		switch op.kind {
		case "adv":
			clock.Advance(time.Duration(op.n))
		case "reload":
			if eff != 0 && op.n != conf {
				eff = max(1, eff*op.n/conf)
				if eff == op.n {
					eff = 0
				}
			}
			conf = op.n
			s := spec
			s.Limit = op.n
			if err := m.SetPolicies([]*policy.Policy{newP(s)}); err != nil {
				t.Fatal(err)
			}
		case "setlimit", "unguarded":
			var err error
			if op.kind == "setlimit" {
				err = m.SetLimit("p", op.n)
			} else {
				err = m.SetLimitUnguarded("p", op.n)
			}
			if err != nil {
				t.Fatal(err)
			}
			eff = op.n
			if eff == conf {
				eff = 0
			}
		case "req":
			limit := conf
			if eff != 0 {
				limit = eff
			}
			if got := m.Set().Policy(0).Spec().Limit; got != limit {
				return fail("limit in force %d, reference %d", got, limit)
			}
			for i := range op.n {
				now := clock.Now().UnixNano()
				av := ref.avail(now, limit)
				cost, status := int64(1), "200"
				if mode == "cost" && limit >= 3 {
					cost = 1 + rng.Int64N(3)
				}
				if mode == "countif" && rng.IntN(3) == 0 {
					status = "500"
				}
				want := av >= cost
				if mode == "plain" {
					pr := httptest.NewRequest("GET", "/", nil)
					res, err := m.Peek(pr)
					if err != nil {
						return fail("Peek: %v", err)
					}
					if d := res.Decision(0); d.Allowed != want || d.Remaining != max(av, 0) || d.Limit != limit {
						return fail("Peek before request %d: %+v, reference %d left of %d", i+1, d, av, limit)
					}
				}
				w := serve(h, "GET", "/", "X-Cost", strconv.FormatInt(cost, 10), "X-Status", status)
				got := w.Code != http.StatusTooManyRequests
				if mode == "shadow" {
					if w.Code != http.StatusOK {
						return fail("shadow mode: %d", w.Code)
					}
					got = want // checked through the counts: r below
				}
				if got != want {
					return fail("request %d of %d at %v: admitted %v, reference %v (reference has %d left of %d; guards %v)",
						i+1, op.n, time.Unix(0, now).UTC().Format("15:04:05.000"), got, want, av, limit, m.Set().Policy(0).Guards())
				}
				if !got && mode != "shadow" {
					ra, err := strconv.ParseInt(w.Header().Get("Retry-After"), 10, 64)
					if err != nil {
						return fail("request %d of %d: 429 with Retry-After %q", i+1, op.n, w.Header().Get("Retry-After"))
					}
					at := now + ra*int64(time.Second)
					if a := ref.avail(at, limit); a < cost {
						return fail("request %d of %d: Retry-After %d s, but the reference has %d left then", i+1, op.n, ra, a)
					}
					if a := ref.avail(at-int64(time.Second), limit); ra > 1 && a >= cost {
						return fail("request %d of %d: Retry-After %d s, but the reference admits a second before (%d left)", i+1, op.n, ra, a)
					}
				}
				if got {
					av -= cost
					if status != "500" {
						for range cost {
							ref.admitted = append(ref.admitted, now)
						}
					}
				}
				if q := w.Header().Get("RateLimit-Policy"); q != `"p";q=`+strconv.FormatInt(limit, 10)+";w=60" {
					return fail("RateLimit-Policy %q, limit in force %d", q, limit)
				}
				mm := rateLimitR.FindStringSubmatch(w.Header().Get("RateLimit"))
				if mm == nil {
					return fail("RateLimit %q", w.Header().Get("RateLimit"))
				}
				if r, _ := strconv.ParseInt(mm[1], 10, 64); r != max(av, 0) {
					return fail("request %d of %d: RateLimit %q, reference r=%d", i+1, op.n, w.Header().Get("RateLimit"), max(av, 0))
				}
			}
		}
	}
	return ""
}

// TestRaiseDifferential replays random traces of requests, clock moves,
// reloads of the limit (raising and lowering it), SetLimit and
// SetLimitUnguarded (above and below the configured limit, and back) on
// a middleware enforcing one policy of each kind whose counters count
// requests whatever the limit, and holds it to oneCounter: each
// request admitted exactly when the reference admits it, the headers'
// q the limit in force and r what the reference has left, a 429's
// Retry-After the reference's wait, and a Peek before each request the
// reference's. Alone, nested in itself, in shadow mode, with costs of 1
// to 3, and counting only the responses below 500 (CountIf); on the
// memory store, and fewer traces on Redis.
func TestRaiseDifferential(t *testing.T) {
	for _, name := range storetest.Names {
		for _, spec := range raisedKinds(8) {
			for _, mode := range []string{"plain", "nested", "shadow", "cost", "countif"} {
				runs := 100
				if name != "memory" {
					if mode != "plain" {
						continue
					}
					runs = 5
				}
				t.Run(name+"/"+string(spec.Algorithm)+"/"+mode, func(t *testing.T) {
					seed := uint64(time.Now().UnixNano())
					for run := range runs {
						rng := rand.New(rand.NewPCG(seed, uint64(run)))
						ops := randomOps(rng, 150, spec.Window)
						clock := algotest.NewClock(t0)
						store := storetest.New(t, name, clock)
						if d := replayDiff(t, store, clock, spec, ops, mode, rng); d != "" {
							t.Fatalf("seed %d run %d: %s", seed, run, d)
						}
					}
				})
			}
		}
	}
}
