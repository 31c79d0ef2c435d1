package loadtest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// ExactConfig configures [RunExactness].
type ExactConfig struct {
	// Limit and Window make the policy: Limit requests per Window, on one
	// key (the client IP, 127.0.0.1).
	Limit  int64
	Window time.Duration
	// Windows is how many windows each attack lasts.
	Windows int
	// Factor is the offered load in multiples of Limit/Window.
	Factor int
	// Conns is the number of concurrent connections of each attack.
	Conns int
	// Kinds are the algorithms to run; nil means all of algorithms.Kinds.
	Kinds []algorithms.Kind
	// Besides every kind on a MemoryStore with its calls serialised (so the
	// model can replay them exactly), sliding_log also runs with concurrent
	// calls (judged by its over-admissions only).
	//
	// Redis, when not nil, adds two runs on Redis, where two HTTP servers,
	// each with its own client, share one limit: every kind with the store
	// calls of both servers serialised (so the model can replay them
	// exactly), and sliding_log with concurrent calls (judged by its
	// over-admissions only).
	Redis *Redis
	// Backends selects the runs by name (BackendMemory,
	// BackendMemoryConcurrent, BackendRedis, BackendRedisConcurrent); nil
	// means every one available.
	Backends []string
	// Parallel runs the attacks of one backend at the same time, each on
	// its own server and store (faster; the load generator may then fall
	// short of the offered rate on a small machine: see ExactResult.Sent).
	Parallel bool
}

// The backends of [RunExactness].
const (
	// BackendMemory is a MemoryStore, its calls serialised by the recorder.
	BackendMemory = "memory"
	// BackendMemoryConcurrent is a MemoryStore, calls concurrent.
	BackendMemoryConcurrent = "memory-concurrent"
	// BackendRedis is Redis shared by two servers, calls serialised across
	// both.
	BackendRedis = "redis-2srv"
	// BackendRedisConcurrent is Redis shared by two servers, calls
	// concurrent.
	BackendRedisConcurrent = "redis-2srv-concurrent"
)

// An ExactResult reports one attack on one policy.
type ExactResult struct {
	// Backend is BackendMemory, BackendMemoryConcurrent, BackendRedis or
	// BackendRedisConcurrent.
	Backend string
	Spec    algorithms.Spec
	// Offered is the request rate offered, per second.
	Offered float64
	// Sent, OK and Limited count requests sent, answered 200 and answered
	// 429; Other counts any other outcome (errors, other statuses).
	Sent, OK, Limited, Other int
	// Admitted and Denied count the store's recorded decisions.
	Admitted, Denied int
	// Expected is the number the reference model (algotest.Model) admits
	// when it replays the recorded instants in order; -1 when the calls ran
	// concurrently, where the order the store ran them in is unknown.
	Expected int
	// Mismatches counts decisions whose Allowed differs from the model's
	// (-1 with Expected).
	Mismatches int
	// MaxInWindow is the largest number of admitted requests decided within
	// any closed interval of length Window (by effective instant for
	// sliding_log, by clock reading for the other kinds).
	MaxInWindow int
	// OverAdmitted counts, for sliding_log, admitted requests that found
	// Limit or more others admitted within the Window before them: zero
	// when the limit held. Always 0 for the other kinds, which may admit
	// more than Limit in a window by design.
	OverAdmitted int
	// Late counts admitted sliding_log decisions the store made at a newer
	// instant than their clock reading (requests overtaken in flight;
	// concurrent backends only). A denied decision is not placed in time,
	// so not counted.
	Late int
	// FirstError is the first error the load generator saw, if any.
	FirstError string
}

// ExactSpec returns the Spec [RunExactness] uses for kind: Limit per Window,
// with 10 buckets for sliding_buckets (when Window allows) and a MaxDelay of
// Window/10 for leaky_queue.
func ExactSpec(kind algorithms.Kind, limit int64, window time.Duration) algorithms.Spec {
	s := algorithms.Spec{Algorithm: kind, Limit: limit, Window: window}
	switch kind {
	case algorithms.SlidingBuckets:
		s.Buckets = 1
		if window%10 == 0 {
			s.Buckets = 10
		}
	case algorithms.LeakyQueue:
		s.MaxDelay = window / 10
	}
	return s
}

func (c *ExactConfig) validate() error {
	switch {
	case c.Limit <= 0:
		return fmt.Errorf("loadtest: ExactConfig: Limit must be positive, got %d", c.Limit)
	case c.Window < time.Millisecond:
		return fmt.Errorf("loadtest: ExactConfig: Window must be at least 1ms, got %s", c.Window)
	case c.Windows <= 0:
		return fmt.Errorf("loadtest: ExactConfig: Windows must be positive, got %d", c.Windows)
	case c.Factor <= 0:
		return fmt.Errorf("loadtest: ExactConfig: Factor must be positive, got %d", c.Factor)
	case c.Conns <= 0:
		return fmt.Errorf("loadtest: ExactConfig: Conns must be positive, got %d", c.Conns)
	}
	return nil
}

// ok is the trivial handler behind every limiter.
func ok(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte("ok\n"))
}

// limited builds the handler as the examples do: the middleware around a
// handler, one policy keyed by client IP.
func limited(store algorithms.Store, spec algorithms.Spec) (http.Handler, error) {
	ip, err := keyfunc.IP()
	if err != nil {
		return nil, err
	}
	p, err := policy.New("load", spec, ip)
	if err != nil {
		return nil, err
	}
	m, err := middleware.New(store, []*policy.Policy{p})
	if err != nil {
		return nil, err
	}
	return m.Handler(http.HandlerFunc(ok)), nil
}

// RunExactness attacks one policy per kind, in memory and (with cfg.Redis) on
// Redis, and judges every recorded decision; see [ExactResult]. Each attack
// has its own server and store; they run one after another, or those of
// one backend at the same time with cfg.Parallel.
func RunExactness(ctx context.Context, cfg ExactConfig) ([]ExactResult, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	kinds := cfg.Kinds
	if kinds == nil {
		kinds = algorithms.Kinds[:]
	}
	type run struct {
		backend string
		kinds   []algorithms.Kind
	}
	want := func(b string) bool { return cfg.Backends == nil || slices.Contains(cfg.Backends, b) }
	var runs []run
	if want(BackendMemory) {
		runs = append(runs, run{BackendMemory, kinds})
	}
	if want(BackendMemoryConcurrent) && slices.Contains(kinds, algorithms.SlidingLog) {
		runs = append(runs, run{BackendMemoryConcurrent, []algorithms.Kind{algorithms.SlidingLog}})
	}
	if cfg.Redis != nil && want(BackendRedis) {
		runs = append(runs, run{BackendRedis, kinds})
	}
	if cfg.Redis != nil && want(BackendRedisConcurrent) && slices.Contains(kinds, algorithms.SlidingLog) {
		runs = append(runs, run{BackendRedisConcurrent, []algorithms.Kind{algorithms.SlidingLog}})
	}
	if len(runs) == 0 {
		return nil, errors.New("loadtest: ExactConfig: no backend to run (Backends names none available; Redis backends need Redis)")
	}
	var out []ExactResult
	for _, rn := range runs {
		res := make([]ExactResult, len(rn.kinds))
		errs := make([]error, len(rn.kinds))
		if cfg.Parallel {
			var wg sync.WaitGroup
			for i, k := range rn.kinds {
				wg.Go(func() {
					res[i], errs[i] = exactOne(ctx, cfg, rn.backend, ExactSpec(k, cfg.Limit, cfg.Window))
				})
			}
			wg.Wait()
		} else {
			for i, k := range rn.kinds {
				res[i], errs[i] = exactOne(ctx, cfg, rn.backend, ExactSpec(k, cfg.Limit, cfg.Window))
			}
		}
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		out = append(out, res...)
	}
	return out, nil
}

func exactOne(ctx context.Context, cfg ExactConfig, backend string, spec algorithms.Spec) (ExactResult, error) {
	clock := newMonoClock()
	var (
		recs    func() []Record
		targets []string
	)
	switch backend {
	case BackendMemory, BackendMemoryConcurrent:
		var (
			st    algorithms.Store
			inner *algorithms.MemoryStore
		)
		if backend == BackendMemory {
			s, err := newSerialMemory(clock)
			if err != nil {
				return ExactResult{}, err
			}
			st, inner, recs = s, s.inner, s.rec.Records
		} else {
			s, err := newConcurrentMemory(clock)
			if err != nil {
				return ExactResult{}, err
			}
			st, inner, recs = s, s.inner, s.rec.Records
		}
		defer inner.Close()
		h, err := limited(st, spec)
		if err != nil {
			return ExactResult{}, err
		}
		srv := httptest.NewServer(h)
		defer srv.Close()
		targets = []string{srv.URL}
	default:
		rec := &recording{}
		prefix := "lt-" + string(spec.Algorithm) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		var serial *sync.Mutex // shared by both servers
		if backend == BackendRedis {
			serial = new(sync.Mutex)
		}
		for range 2 { // two application servers, each with its own client
			client := cfg.Redis.Client(cfg.Conns)
			defer client.Close()
			h, err := limited(&stampedRedis{client: client, prefix: prefix, clock: clock, rec: rec, serial: serial}, spec)
			if err != nil {
				return ExactResult{}, err
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			targets = append(targets, srv.URL)
		}
		recs = rec.Records
	}
	rate := float64(cfg.Factor) * float64(cfg.Limit) / cfg.Window.Seconds()
	o, err := Run(ctx, Attack{Targets: targets, Rate: rate, Duration: time.Duration(cfg.Windows) * cfg.Window, Conns: cfg.Conns})
	if err != nil {
		return ExactResult{}, err
	}
	r := Judge(spec, recs())
	if backend == BackendRedisConcurrent || backend == BackendMemoryConcurrent {
		r.Expected, r.Mismatches = -1, -1
	}
	r.Backend, r.Offered = backend, rate
	r.Sent, r.OK, r.Limited = o.Requests, o.Codes[200], o.Codes[429]
	r.Other = r.Sent - r.OK - r.Limited
	r.FirstError = o.FirstError
	return r, nil
}

// Judge compares recorded decisions, all on one policy with spec, with the
// reference model replaying their instants in order, and for sliding_log
// checks that no window-long interval holds more than Limit admitted
// requests. It fills the store-side fields of an ExactResult.
func Judge(spec algorithms.Spec, recs []Record) ExactResult {
	recs = slices.Clone(recs)
	slices.SortStableFunc(recs, func(a, b Record) int { return compareInt(a.At, b.At) })
	r := ExactResult{Spec: spec}
	model := algotest.NewModel()
	var admitted []int64
	for i := range recs {
		rec := &recs[i]
		ok := rec.Admitted()
		if ok {
			r.Admitted++
			at := rec.At
			if spec.Algorithm == algorithms.SlidingLog && len(rec.Decisions) == 1 {
				at = effectiveInstant(rec.At, spec, rec.Decisions[0])
				if at != rec.At {
					r.Late++
				}
			}
			admitted = append(admitted, at)
		} else {
			r.Denied++
		}
		ds, err := model.TakeAt(time.Unix(0, rec.At), rec.Checks...)
		want := err == nil && len(ds) > 0
		for _, d := range ds {
			want = want && d.Allowed
		}
		if want {
			r.Expected++
		}
		if want != ok {
			r.Mismatches++
		}
	}
	slices.Sort(admitted)
	r.MaxInWindow = MaxInWindow(admitted, int64(spec.Window))
	if spec.Algorithm == algorithms.SlidingLog {
		r.OverAdmitted = OverAdmitted(admitted, int64(spec.Window), int(spec.Limit))
	}
	return r
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// MaxInWindow returns the largest number of the sorted instants ts that lie
// within one closed interval of length w.
func MaxInWindow(ts []int64, w int64) int {
	best, i := 0, 0
	for j := range ts {
		for ts[j]-ts[i] > w {
			i++
		}
		best = max(best, j-i+1)
	}
	return best
}

// OverAdmitted returns how many of the sorted instants ts find limit or more
// earlier instants within the closed interval of length w ending at them:
// the requests a sliding log of limit per w admitted wrongly. An instant
// exactly w old still counts, as in the sliding log.
func OverAdmitted(ts []int64, w int64, limit int) int {
	n, i := 0, 0
	for j := range ts {
		for ts[j]-ts[i] > w {
			i++
		}
		if j-i+1 > limit {
			n++
		}
	}
	return n
}
