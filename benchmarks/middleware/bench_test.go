package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/go-chi/httprate"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// httprateByIP is httprate's classic per-IP limiter, the baseline peers are
// measured against (deprecated in v0.16 only for its trust model, which is
// RemoteAddr here as in our benchmarks).
func httprateByIP(limit int, window time.Duration) func(http.Handler) http.Handler {
	//lint:ignore SA1019 LimitByIP is the comparison point named in BENCHMARKS.md
	return httprate.LimitByIP(limit, window)
}

// benchHandler is the bare handler every benchmark wraps.
var benchHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	w.Write([]byte("ok"))
})

// A benchWriter is a minimal http.ResponseWriter that a benchmark resets
// between requests instead of allocating a new one: the header map is
// cleared (it keeps its buckets), the status and byte count zeroed.
type benchWriter struct {
	h    http.Header
	code int
	n    int
}

func newBenchWriter() *benchWriter { return &benchWriter{h: make(http.Header)} }

func (w *benchWriter) Header() http.Header { return w.h }

func (w *benchWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *benchWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	w.n += len(p)
	return len(p), nil
}

func (w *benchWriter) reset() {
	clear(w.h)
	w.code, w.n = 0, 0
}

// benchServe measures one request through h per iteration: the same
// request, from one client IP, answered into one benchWriter reset between
// iterations. The limits are far above the request count, so every request
// is allowed and every response carries the full headers.
//
// Why a reused writer: issue 4's targets were measured with a harness that
// reuses everything around the handler (its bare handler costs about 300 ns
// and 4 allocs). A fresh httptest.ResponseRecorder per iteration costs
// about 800 ns and 8 allocs on Go 1.26 (the bare handler's 2 become 10;
// among them the recorder, its header map, its body buffer and the header
// snapshot taken at WriteHeader) in every variant alike, which hides the
// middlewares' own cost and compresses every ratio towards 1. Every variant
// here gets the same reuse, peers included; [BenchmarkMiddlewareRecorder]
// keeps the fresh-recorder harness for continuity with earlier figures.
//
// Besides wall time it reports cpu-ns/op, the process's CPU time per
// request (garbage collection included), which a machine shared with other
// work disturbs much less than wall time.
func benchServe(b *testing.B, h http.Handler) {
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "203.0.113.9:41234"
	w := newBenchWriter()
	b.ReportAllocs()
	cpu0, ok := processCPU()
	for b.Loop() {
		w.reset()
		h.ServeHTTP(w, r)
		if w.code != http.StatusOK {
			b.Fatalf("status %d", w.code)
		}
	}
	reportCPU(b, cpu0, ok)
}

// benchServeRecorder is benchServe with a fresh httptest.ResponseRecorder
// per iteration, the harness of the figures before the reused writer.
func benchServeRecorder(b *testing.B, h http.Handler) {
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "203.0.113.9:41234"
	b.ReportAllocs()
	cpu0, ok := processCPU()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
	}
	reportCPU(b, cpu0, ok)
}

// reportCPU reports the process CPU time since cpu0 per iteration.
func reportCPU(b *testing.B, cpu0 time.Duration, ok bool) {
	if cpu1, ok1 := processCPU(); ok && ok1 && b.N > 0 {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
}

// benchMaxKeys is the key bound of our MemoryStore in the benchmarks, the
// examples' (algorithms.WithMaxKeys(1_000_000)).
const benchMaxKeys = 1_000_000

// benchStore returns the MemoryStore of the benchmarks, bounded as the
// examples bound it, as the peers' stores are bounded as their
// documentation sets them up (throttledMaxKeys). The bound costs only when
// a new key is inserted at it: nothing for a key held.
func benchStore(tb testing.TB) *algorithms.MemoryStore {
	tb.Helper()
	store, err := algorithms.NewMemoryStore(algorithms.WithMaxKeys(benchMaxKeys))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	return store
}

func benchMiddleware(b testing.TB, n int, opts ...middleware.Option) http.Handler {
	b.Helper()
	return benchMiddlewareOf(b, n, opts...).Handler(benchHandler)
}

// benchLowered is benchMiddleware with every policy's limit halved by
// SetLimit, as package middleware/adaptive lowers it: each request is
// checked under the configured limit too (policy.Policy.Guard).
func benchLowered(b *testing.B, n int, opts ...middleware.Option) http.Handler {
	b.Helper()
	m := benchMiddlewareOf(b, n, opts...)
	for i := range n {
		if err := m.SetLimit("p"+strconv.Itoa(i), algorithms.MaxLimit/2); err != nil {
			b.Fatal(err)
		}
	}
	return m.Handler(benchHandler)
}

func benchMiddlewareOf(b testing.TB, n int, opts ...middleware.Option) *middleware.Middleware {
	b.Helper()
	store := benchStore(b)
	ip := keyfunc.Must(keyfunc.IP())
	// The first policy's quota is the peers' (MaxLimit per peerWindow, a
	// minute), so that one policy does the job each peer does; the others
	// stack a second, an hour and a day on it.
	windows := []time.Duration{peerWindow, time.Second, time.Hour, 24 * time.Hour}
	var ps []*policy.Policy
	for i := range n {
		ps = append(ps, policy.Must(policy.Per("p"+strconv.Itoa(i), algorithms.MaxLimit, windows[i], ip)))
	}
	m, err := middleware.New(store, ps, opts...)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkMiddleware compares, in one run, the bare handler, httprate's
// LimitByIP (one sliding-window counter, X-RateLimit headers), the other
// peers (throttled, go-limiter, ulule, tollbooth; peers_bench_test.go) and this
// middleware with one and four stacked policies (sliding window counter,
// keyed by client IP, in-memory store, IETF headers), each serving a reused
// request into a reused, reset writer (see benchServe).
func BenchmarkMiddleware(b *testing.B) { benchVariants(b, benchServe) }

// BenchmarkMiddlewareRecorder is BenchmarkMiddleware with a fresh
// httptest.ResponseRecorder per request, as measured before (its ~800 ns and
// 8 allocs are in every variant).
func BenchmarkMiddlewareRecorder(b *testing.B) { benchVariants(b, benchServeRecorder) }

func benchVariants(b *testing.B, serve func(*testing.B, http.Handler)) {
	b.Run("bare", func(b *testing.B) { serve(b, benchHandler) })
	b.Run("httprate", func(b *testing.B) {
		serve(b, httprateByIP(algorithms.MaxLimit, peerWindow)(benchHandler))
	})
	b.Run("throttled", func(b *testing.B) { serve(b, throttledByIP(b)(benchHandler)) })
	b.Run("go-limiter", func(b *testing.B) { serve(b, goLimiterByIP(b)(benchHandler)) })
	b.Run("ulule", func(b *testing.B) { serve(b, ululeByIP()(benchHandler)) })
	b.Run("tollbooth", func(b *testing.B) { serve(b, tollboothByIP()(benchHandler)) })
	b.Run("policies=1", func(b *testing.B) { serve(b, benchMiddleware(b, 1)) })
	b.Run("policies=4", func(b *testing.B) { serve(b, benchMiddleware(b, 4)) })
	b.Run("policies=1/headers=none", func(b *testing.B) {
		serve(b, benchMiddleware(b, 1, middleware.WithHeaders(middleware.NoHeaders)))
	})
	b.Run("policies=1/headers=legacy", func(b *testing.B) {
		serve(b, benchMiddleware(b, 1, middleware.WithHeaders(middleware.Legacy)))
	})
	b.Run("policies=1/observer", func(b *testing.B) {
		serve(b, benchMiddleware(b, 1, middleware.WithObserver(&nopObserver{})))
	})
	b.Run("policies=1/context=off", func(b *testing.B) {
		serve(b, benchMiddleware(b, 1, middleware.WithoutContext()))
	})
	b.Run("policies=4/context=off", func(b *testing.B) {
		serve(b, benchMiddleware(b, 4, middleware.WithoutContext()))
	})
	b.Run("policies=1/lowered", func(b *testing.B) { serve(b, benchLowered(b, 1)) })
	b.Run("policies=4/lowered", func(b *testing.B) { serve(b, benchLowered(b, 4)) })
}

// BenchmarkMiddlewareParallel is BenchmarkMiddleware's one-policy case with
// many clients in parallel (one IP per goroutine), against httprate.
func BenchmarkMiddlewareParallel(b *testing.B) {
	run := func(b *testing.B, h http.Handler) {
		b.ReportAllocs()
		var id int64
		var mu = make(chan struct{}, 1)
		b.RunParallel(func(pb *testing.PB) {
			mu <- struct{}{}
			id++
			n := id
			<-mu
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = "10.0." + strconv.FormatInt(n/256, 10) + "." + strconv.FormatInt(n%256, 10) + ":1234"
			w := newBenchWriter()
			for pb.Next() {
				w.reset()
				h.ServeHTTP(w, r)
			}
		})
	}
	b.Run("httprate", func(b *testing.B) { run(b, httprateByIP(algorithms.MaxLimit, peerWindow)(benchHandler)) })
	b.Run("policies=1", func(b *testing.B) { run(b, benchMiddleware(b, 1)) })
	b.Run("policies=1/context=off", func(b *testing.B) { run(b, benchMiddleware(b, 1, middleware.WithoutContext())) })
}
