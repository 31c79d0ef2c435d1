package loadtest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/go-chi/httprate"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// OverheadConfig configures [RunOverhead].
type OverheadConfig struct {
	// Conns is the number of concurrent connections of every attack.
	Conns int
	// MaxDuration is the length of each maximum-throughput attack.
	MaxDuration time.Duration
	// LatDuration is the length of each fixed-rate latency attack.
	LatDuration time.Duration
	// Rounds repeats each phase, in a balanced order of the scenarios
	// (see measureRounds).
	Rounds int
	// Fraction of the no-limiter maximum throughput at which latency is
	// measured; 0 means 0.5.
	Fraction float64
	// Redis, when not nil, adds the scenario on the Redis store.
	Redis *Redis
}

// fraction returns c.Fraction, or its default 0.5 when it is 0.
func (c *OverheadConfig) fraction() float64 {
	if c.Fraction == 0 {
		return 0.5
	}
	return c.Fraction
}

// The overhead scenarios, in report order.
const (
	ScenarioNone    = "no limiter"
	ScenarioMemory1 = "memory, 1 policy"
	// ScenarioMemory1NoCtx is ScenarioMemory1 with middleware.WithoutContext:
	// the decision is not carried in the request context, as with httprate.
	ScenarioMemory1NoCtx = "memory, 1 policy, WithoutContext"
	ScenarioMemory4      = "memory, 4 policies"
	ScenarioRedis        = "redis, 1 policy"
	ScenarioHTTPRate     = "httprate.LimitByIP"
)

// An OverheadResult reports one scenario of [RunOverhead].
type OverheadResult struct {
	Name string
	// MaxRPS is the median over rounds of the 200 responses per second
	// with every connection sending as fast as it can.
	MaxRPS float64
	// MaxRPSRounds are the per-round values.
	MaxRPSRounds []float64
	// InProcRPS is the median over rounds of the requests per second the
	// handler serves in process (ServeHTTP from GOMAXPROCS goroutines, no
	// network, no load generator): the cost of the limiter itself, where
	// MaxRPS is dominated by HTTP over loopback.
	InProcRPS float64
	// Rate is the offered rate of the latency attacks (the same for every
	// scenario).
	Rate float64
	// Latency quantiles over all latency attacks of all rounds.
	P50, P90, P99, P999, Max time.Duration
	// Sent counts the requests of the latency attacks; Non200 those not
	// answered 200 in any attack (everything should be admitted).
	Sent, Non200 int
	// FirstError is the first error the load generator saw, if any.
	FirstError string
}

// scenario is one server of the overhead comparison.
type scenario struct {
	name    string
	handler http.Handler
}

// overheadScenarios builds the handlers, every limit high enough that all
// requests are admitted. The close function releases their stores.
func overheadScenarios(r *Redis, pool int) ([]scenario, func(), error) {
	var closers []func()
	closeAll := func() {
		for _, c := range slices.Backward(closers) {
			c()
		}
	}
	ip, err := keyfunc.IP()
	if err != nil {
		return nil, nil, err
	}
	huge := func(names ...string) []*policy.Policy {
		windows := []time.Duration{time.Second, time.Minute, time.Hour, 24 * time.Hour}
		var ps []*policy.Policy
		for i, n := range names {
			ps = append(ps, policy.Must(policy.Per(n, algorithms.MaxLimit, windows[i], ip)))
		}
		return ps
	}
	okh := http.HandlerFunc(ok)
	mw := func(store algorithms.Store, ps []*policy.Policy, opts ...middleware.Option) (http.Handler, error) {
		m, err := middleware.New(store, ps, opts...)
		if err != nil {
			return nil, err
		}
		return m.Handler(okh), nil
	}
	out := []scenario{{ScenarioNone, okh}}
	for _, c := range []struct {
		name string
		ps   []*policy.Policy
		opts []middleware.Option
	}{
		{ScenarioMemory1, huge("per-second"), nil},
		{ScenarioMemory1NoCtx, huge("per-second"), []middleware.Option{middleware.WithoutContext()}},
		{ScenarioMemory4, huge("per-second", "per-minute", "per-hour", "per-day"), nil},
	} {
		// As the examples build it.
		st, err := algorithms.NewMemoryStore(algorithms.WithMaxKeys(1_000_000))
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		closers = append(closers, func() { _ = st.Close() })
		h, err := mw(st, c.ps, c.opts...)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		out = append(out, scenario{c.name, h})
	}
	if r != nil {
		client := r.Client(pool)
		closers = append(closers, func() { _ = client.Close() })
		st, err := redisstore.New(client, redisstore.WithPrefix(fmt.Sprintf("lt-overhead-%d", time.Now().UnixNano())))
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		h, err := mw(st, huge("per-second"))
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		out = append(out, scenario{ScenarioRedis, h})
	}
	//lint:ignore SA1019 the comparison is with LimitByIP as users call it (RemoteAddr, like our keyfunc.IP default)
	out = append(out, scenario{ScenarioHTTPRate, httprate.LimitByIP(algorithms.MaxLimit, time.Second)(okh)})
	return out, closeAll, nil
}

// RunOverhead measures each scenario's maximum throughput, then its latency
// at cfg.Fraction of the no-limiter maximum, in the same run on the same
// machine. Every request should be admitted: the limits are at
// algorithms.MaxLimit per window.
func RunOverhead(ctx context.Context, cfg OverheadConfig) ([]OverheadResult, error) {
	if cfg.Conns <= 0 || cfg.Rounds <= 0 || cfg.MaxDuration <= 0 || cfg.LatDuration <= 0 {
		return nil, errors.New("loadtest: OverheadConfig: Conns, Rounds, MaxDuration and LatDuration must be positive")
	}
	frac := cfg.fraction()
	if frac < 0 || frac > 1 {
		return nil, fmt.Errorf("loadtest: OverheadConfig: Fraction must be in (0, 1], got %g", frac)
	}
	scs, closeAll, err := overheadScenarios(cfg.Redis, cfg.Conns)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	urls := make([]string, len(scs))
	for i, sc := range scs {
		srv := httptest.NewServer(sc.handler)
		defer srv.Close()
		urls[i] = srv.URL
	}
	res := make([]OverheadResult, len(scs))
	lat := make([][]time.Duration, len(scs))
	for i, sc := range scs {
		res[i].Name = sc.name
	}
	note := func(i int, o *Outcome) {
		res[i].Non200 += o.Requests - o.Codes[200]
		if res[i].FirstError == "" {
			res[i].FirstError = o.FirstError
		}
	}
	// Each measurement starts on a collected heap, in a balanced order
	// (see measureRounds).
	settle := func() { runtime.GC() }
	err = measureRounds(len(scs), cfg.Rounds, settle, func(i int) error {
		o, err := Run(ctx, Attack{Targets: urls[i : i+1], Duration: cfg.MaxDuration, Conns: cfg.Conns})
		if err != nil {
			return err
		}
		note(i, o)
		res[i].MaxRPSRounds = append(res[i].MaxRPSRounds, o.Throughput())
		return nil
	})
	if err != nil {
		return nil, err
	}
	inproc := make([][]float64, len(scs))
	err = measureRounds(len(scs), cfg.Rounds, settle, func(i int) error {
		rps, err := inProcess(ctx, scs[i].handler, inProcDuration)
		if err != nil {
			return fmt.Errorf("loadtest: %s in process: %w", scs[i].name, err)
		}
		inproc[i] = append(inproc[i], rps)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range res {
		res[i].MaxRPS = median(res[i].MaxRPSRounds)
		res[i].InProcRPS = median(inproc[i])
	}
	rate := frac * res[0].MaxRPS
	err = measureRounds(len(scs), cfg.Rounds, settle, func(i int) error {
		o, err := Run(ctx, Attack{Targets: urls[i : i+1], Rate: rate, Duration: cfg.LatDuration, Conns: cfg.Conns})
		if err != nil {
			return err
		}
		note(i, o)
		res[i].Sent += o.Requests
		lat[i] = append(lat[i], o.Latencies...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range res {
		l := lat[i]
		slices.Sort(l)
		res[i].Rate = rate
		res[i].P50, res[i].P90, res[i].P99, res[i].P999 = quantile(l, 0.5), quantile(l, 0.9), quantile(l, 0.99), quantile(l, 0.999)
		if len(l) > 0 {
			res[i].Max = l[len(l)-1]
		}
	}
	return res, nil
}

// measureRounds measures each of n scenarios once per round, for rounds
// rounds, in the order overheadOrder gives, calling settle before each
// measurement, and stops at the first error measure returns.
//
// settle (a garbage collection) keeps a measurement from paying for the
// garbage of the one before it, and the order keeps any scenario from
// always following the same one: with a plain rotation, ours (memory, 1
// policy) always ran right after the no-limiter scenario and httprate
// always after the Redis one.
func measureRounds(n, rounds int, settle func(), measure func(i int) error) error {
	for round := range rounds {
		for _, i := range overheadOrder(n, round) {
			settle()
			if err := measure(i); err != nil {
				return err
			}
		}
	}
	return nil
}

// overheadOrder returns the order in which round runs n scenarios: the rows
// of a Williams design, a Latin square in which, over n rounds (2n for an
// odd n), every scenario runs in every place equally often and right after
// every other equally often. Its first row is 0, 1, n-1, 2, n-2, ...; row r
// adds r to each entry (mod n), and for an odd n the rows from n on are
// those of the first n reversed.
func overheadOrder(n, round int) []int {
	o := make([]int, n)
	for j := range o {
		first := (j + 1) / 2   // 0, 1, _, 2, _, 3, ...
		if j > 0 && j%2 == 0 { // _, _, n-1, _, n-2, ...
			first = n - j/2
		}
		p := j
		if n%2 == 1 && round/n%2 == 1 {
			p = n - 1 - j
		}
		o[p] = (first + round) % n
	}
	return o
}

// inProcDuration is the length of each in-process measurement.
const inProcDuration = 500 * time.Millisecond

// inProcess serves requests from 127.0.0.1 with h.ServeHTTP from GOMAXPROCS
// goroutines for d and returns the requests served per second. Every
// response must be 200.
func inProcess(ctx context.Context, h http.Handler, d time.Duration) (float64, error) {
	procs := runtime.GOMAXPROCS(0)
	counts := make([]int, procs)
	errs := make([]error, procs)
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for g := range procs {
		wg.Go(func() {
			req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
			req.RemoteAddr = "127.0.0.1:50000"
			w := &sink{h: make(http.Header)}
			for n := 0; ; n++ {
				if n%64 == 0 && time.Now().After(deadline) {
					return
				}
				clear(w.h)
				w.code = 0
				h.ServeHTTP(w, req)
				if w.code != http.StatusOK {
					errs[g] = fmt.Errorf("status %d", w.code)
					return
				}
				counts[g]++
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	total := 0
	for _, c := range counts {
		total += c
	}
	return float64(total) / time.Since(start).Seconds(), nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
