package middleware_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// This file holds the HTTP-level differential between the stores: two
// middlewares built alike, one over the memory store and one over Redis,
// are given the same random script of requests, clock steps, reloads and
// limit changes, and every response must be the same byte for byte.

// sdKinds are the seven kinds, leaky_queue twice: without MaxDelay (a
// request that cannot leave at once is denied) and with one (it is held).
var sdKinds = []string{"fixed_window", "sliding_log", "sliding_window", "sliding_buckets",
	"token_bucket", "leaky_bucket", "leaky_queue", "leaky_queue+delay"}

// sdWindows mixes whole seconds with windows the headers round up.
var sdWindows = []time.Duration{250 * time.Millisecond, time.Second, 1500 * time.Millisecond,
	2 * time.Second, 3 * time.Second, 10 * time.Second, time.Minute}

var sdProfiles = []middleware.Profile{middleware.IETF, middleware.Draft7, middleware.Draft6,
	middleware.Legacy, middleware.LegacyUnix, middleware.NoHeaders}

// sdPol describes a policy, so that each side builds its own from it (in
// code, or from the same configuration text).
type sdPol struct {
	name      string
	spec      algorithms.Spec
	key       string // "ip", "header" (X-Client) or "ipuser" (ip and user joined)
	onMissing string // "" (the default), "reject_400", "reject_403" or "skip"
	methods   []string
	routes    []string
	cost      bool   // cost from X-Cost (in code only: a file has no cost)
	count     string // "" (all), "failed" or "succeeded" (CountIf)
}

var sdKeyActions = map[string]policy.KeyAction{"reject_400": policy.RejectBadRequest,
	"reject_403": policy.RejectForbidden, "skip": policy.SkipPolicy}

func (p sdPol) build() (*policy.Policy, error) {
	ip := keyfunc.Must(keyfunc.IP())
	var key keyfunc.Func
	switch p.key {
	case "ip":
		key = ip
	case "header":
		key = keyfunc.Must(keyfunc.Header("X-Client"))
	case "ipuser":
		key = keyfunc.Must(keyfunc.Join(ip, keyfunc.User()))
	}
	var opts []policy.Option
	if p.onMissing != "" {
		opts = append(opts, policy.OnKeyError(sdKeyActions[p.onMissing]))
	}
	if len(p.methods) > 0 {
		opts = append(opts, policy.WithMethods(p.methods...))
	}
	if len(p.routes) > 0 {
		opts = append(opts, policy.WithRoutes(p.routes...))
	}
	if p.cost {
		opts = append(opts, policy.WithCost(func(r *http.Request) int64 {
			c := r.Header.Get("X-Cost")
			if c == "" {
				return 1
			}
			n, _ := strconv.ParseInt(c, 10, 64)
			return n
		}))
	}
	switch p.count {
	case "failed":
		opts = append(opts, policy.CountIf(policy.CountFailed))
	case "succeeded":
		opts = append(opts, policy.CountIf(policy.CountSucceeded))
	}
	return policy.New(p.name, p.spec, key, opts...)
}

func sdQuote(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// sdYAML writes ps as a configuration file (policies only: the headers
// and failure mode are left to the middleware's options).
func sdYAML(ps []sdPol) string {
	var b strings.Builder
	b.WriteString("policies:\n")
	for _, p := range ps {
		fmt.Fprintf(&b, "  - name: %s\n    limit: %d\n    window: %s\n    algorithm: %s\n",
			p.name, p.spec.Limit, p.spec.Window, p.spec.Algorithm)
		if p.spec.Burst != 0 {
			fmt.Fprintf(&b, "    burst: %d\n", p.spec.Burst)
		}
		if p.spec.Buckets != 0 {
			fmt.Fprintf(&b, "    buckets: %d\n", p.spec.Buckets)
		}
		if p.spec.MaxDelay != 0 {
			fmt.Fprintf(&b, "    max_delay: %s\n", p.spec.MaxDelay)
		}
		switch p.key {
		case "ip":
			b.WriteString("    key: ip\n")
		case "header":
			b.WriteString("    key: header:X-Client\n")
		case "ipuser":
			b.WriteString("    key: [ip, user]\n")
		}
		if p.onMissing != "" {
			fmt.Fprintf(&b, "    on_missing_key: %s\n", p.onMissing)
		}
		if p.count != "" {
			fmt.Fprintf(&b, "    count: %s\n", p.count)
		}
		if len(p.methods) > 0 {
			fmt.Fprintf(&b, "    methods: %s\n", sdQuote(p.methods))
		}
		if len(p.routes) > 0 {
			fmt.Fprintf(&b, "    routes: %s\n", sdQuote(p.routes))
		}
	}
	return b.String()
}

func sdBuildAll(ps []sdPol) ([]*policy.Policy, error) {
	out := make([]*policy.Policy, len(ps))
	for i, p := range ps {
		var err error
		if out[i], err = p.build(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sdBigWindows reach the longest window (a day) and the products past
// 2^52 the Redis store computes on wide values.
var sdBigWindows = []time.Duration{1500 * time.Millisecond, 7 * time.Second, time.Minute, time.Hour, 24 * time.Hour}

// sdN returns a random count: 1 to small, or, big, one from 1 to 10^9
// spread over the orders of magnitude.
func sdN(rng *rand.Rand, small int64, big bool) int64 {
	if !big {
		return 1 + rng.Int64N(small)
	}
	return max(1, int64(math.Pow(10, 9*rng.Float64())))
}

// sdSpec returns a random valid Spec of kind; big, with limits up to
// 10^9 and windows up to a day.
func sdSpec(rng *rand.Rand, kind string, big bool) algorithms.Spec {
	windows := sdWindows
	if big {
		windows = sdBigWindows
	}
	for {
		s := algorithms.Spec{Limit: sdN(rng, 8, big), Window: windows[rng.IntN(len(windows))]}
		switch kind {
		case "sliding_buckets":
			s.Algorithm = algorithms.SlidingBuckets
			s.Buckets = []int{2, 3, 4, 5, 6, 10}[rng.IntN(6)]
			if s.Window%time.Duration(s.Buckets) != 0 {
				continue
			}
		case "token_bucket", "leaky_bucket":
			s.Algorithm = algorithms.Kind(kind)
			if rng.IntN(2) == 0 {
				s.Burst = sdN(rng, 12, big)
			}
		case "leaky_queue":
			s.Algorithm = algorithms.LeakyQueue
		case "leaky_queue+delay":
			s.Algorithm = algorithms.LeakyQueue
			s.MaxDelay = []time.Duration{s.Window / 2, s.Window, 3 * s.Window, 1500 * time.Millisecond}[rng.IntN(4)]
			if big && rng.IntN(2) == 0 {
				s.MaxDelay = time.Duration(rng.Int64N(int64(algorithms.MaxWindow)))
			}
		default:
			s.Algorithm = algorithms.Kind(kind)
		}
		if s.Validate() == nil {
			return s
		}
	}
}

var (
	sdMethodSets = [][]string{nil, nil, nil, {"GET"}, {"POST"}, {"GET", "PUT"}}
	sdRouteSets  = [][]string{nil, nil, nil, {"POST /login"}, {"/items/{id}"}, {"GET /items/{id}", "POST /login"}, {"GET /"}}
)

// sdRandPol returns a random policy named name of kind ("" for any), one
// that builds.
func sdRandPol(rng *rand.Rand, name, kind string, inCode, big bool) sdPol {
	for {
		k := kind
		if k == "" {
			k = sdKinds[rng.IntN(len(sdKinds))]
		}
		p := sdPol{name: name, spec: sdSpec(rng, k, big), key: []string{"ip", "ip", "header", "ipuser"}[rng.IntN(4)]}
		if p.key != "ip" && rng.IntN(2) == 0 {
			p.onMissing = []string{"reject_400", "reject_403", "skip"}[rng.IntN(3)]
		}
		if rng.IntN(3) == 0 {
			p.methods = sdMethodSets[rng.IntN(len(sdMethodSets))]
		}
		if rng.IntN(3) == 0 {
			p.routes = sdRouteSets[rng.IntN(len(sdRouteSets))]
		}
		p.cost = inCode && rng.IntN(3) == 0
		if rng.IntN(5) == 0 {
			p.count = []string{"failed", "succeeded"}[rng.IntN(2)]
		}
		if _, err := p.build(); err == nil {
			return p
		}
	}
}

// sdSide is one of the two stacks compared: its clock, store and
// middleware, the router in front, and the errors its middleware reported.
type sdSide struct {
	name  string
	clock *algotest.Clock
	store algorithms.Store
	m     *middleware.Middleware
	h     http.Handler
	srv   *httptest.Server

	mu   sync.Mutex // errs is appended to by a server's goroutines
	errs []string
}

func (s *sdSide) takeErrs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.errs
	s.errs = nil
	return e
}

// options returns the options of a middleware of s: its clock, the
// profile, an error handler keeping each error reported (after tag) for
// takeErrs, the leaky_queue hold (sdWait: on its clock when hold), a
// partition key when pk, shadow mode when shadow.
func (s *sdSide) options(prof middleware.Profile, tag string, hold, pk, shadow bool) []middleware.Option {
	opts := []middleware.Option{
		middleware.WithClock(s.clock),
		middleware.WithHeaders(prof),
		middleware.WithErrorHandler(func(_ *http.Request, err error) {
			s.mu.Lock()
			s.errs = append(s.errs, tag+err.Error())
			s.mu.Unlock()
		}),
		middleware.WithWait(sdWait(s.clock, hold)),
	}
	if pk {
		opts = append(opts, middleware.WithPartitionKey([]byte("storediff-secret-0123456789")))
	}
	if shadow {
		opts = append(opts, middleware.WithShadow(nil))
	}
	return opts
}

// sdHandler answers with the status X-Status asks for: "" is 200 with a
// body, "none" writes nothing (net/http sends 200 once it returns).
var sdHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	switch s := r.Header.Get("X-Status"); s {
	case "":
		w.Write([]byte("ok " + r.Method + " " + r.URL.Path))
	case "none":
	default:
		n, _ := strconv.Atoi(s)
		w.WriteHeader(n)
		w.Write([]byte("status " + s))
	}
})

// sdUser sets the user X-User names, as an authentication middleware in
// front of the limiter would, the end of a leaky_queue hold X-Cut asks
// for (see sdWait), and marks an interloper (X-Interloper: see sdHook).
func sdUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u := r.Header.Get("X-User"); u != "" {
			r = r.WithContext(keyfunc.WithUser(r.Context(), u))
		}
		if c := r.Header.Get("X-Cut"); c != "" {
			r = r.WithContext(context.WithValue(r.Context(), sdCutKey{}, c))
		}
		if r.Header.Get("X-Interloper") != "" {
			r = r.WithContext(context.WithValue(r.Context(), sdInterloperKey{}, true))
		}
		next.ServeHTTP(w, r)
	})
}

// sdCutKey keys the X-Cut header's value in a request's context.
type sdCutKey struct{}

// sdInterloperKey marks the context of an interloper (see sdHook).
type sdInterloperKey struct{}

// sdWait returns the leaky_queue hold of a side: on its clock, or taking
// no time at all. A request whose X-Cut is "gone" or "deadline" has its
// hold cut short a third of the way through, as by its client going away
// or a server-side deadline: its place goes back to the store (Refund),
// and its 503 reports the queue as the store has it after the refund.
func sdWait(clock *algotest.Clock, onClock bool) func(context.Context, time.Duration) error {
	return func(ctx context.Context, d time.Duration) error {
		cut, _ := ctx.Value(sdCutKey{}).(string)
		if cut != "" {
			d /= 3
		}
		// An interloper's hold takes no time: on the cluster it is served
		// inside another request's Take, whose instant is read already.
		if onClock && ctx.Value(sdInterloperKey{}) == nil {
			clock.Advance(d)
		}
		switch cut {
		case "gone":
			return context.Canceled
		case "deadline":
			return context.DeadlineExceeded
		}
		return nil
	}
}

// sdRouter routes the paths the scripts ask for, the limiter installed
// where the router has routed (chi: r.Use in a Group; ServeMux: around
// each routed handler), so that route-restricted policies apply.
func sdRouter(kind string, m *middleware.Middleware) http.Handler {
	if kind == "chi" {
		r := chi.NewRouter()
		r.Group(func(r chi.Router) {
			r.Use(m.Handler)
			r.Get("/", sdHandler)
			r.Get("/items/{id}", sdHandler)
			r.Post("/items/{id}", sdHandler)
			r.Put("/items/{id}", sdHandler)
			r.Post("/login", sdHandler)
		})
		return sdUser(r)
	}
	mux := http.NewServeMux()
	for _, p := range []string{"GET /", "GET /items/{id}", "POST /items/{id}", "PUT /items/{id}", "POST /login"} {
		mux.Handle(p, m.Handler(sdHandler))
	}
	return sdUser(mux)
}

// sdReq is one request of a script.
type sdReq struct {
	method, path, remote string
	header               [][2]string
}

func (q sdReq) String() string {
	var h []string
	for _, kv := range q.header {
		h = append(h, kv[0]+"="+kv[1])
	}
	return fmt.Sprintf("%s %s from %s %v", q.method, q.path, q.remote, h)
}

func sdRandReq(rng *rand.Rand, big bool) sdReq {
	q := sdReq{
		method: []string{"GET", "GET", "GET", "POST", "POST", "PUT", "HEAD", "DELETE"}[rng.IntN(8)],
		path:   []string{"/", "/", "/items/1", "/items/2", "/items/1", "/login", "/login", "/nope"}[rng.IntN(8)],
		remote: []string{"192.0.2.1:1234", "192.0.2.1:4321", "192.0.2.2:1234", "[2001:db8::1]:80",
			"[2001:db8::2]:80", "[2001:db8:1::1]:80"}[rng.IntN(6)],
	}
	if rng.IntN(8) != 0 {
		q.header = append(q.header, [2]string{"X-Client", []string{"a", "b", "c"}[rng.IntN(3)]})
	}
	if rng.IntN(4) != 0 {
		q.header = append(q.header, [2]string{"X-User", []string{"alice", "bob"}[rng.IntN(2)]})
	}
	switch r := rng.IntN(20); {
	case r < 8:
	case r < 18:
		q.header = append(q.header, [2]string{"X-Cost", strconv.FormatInt(sdN(rng, 3, big), 10)})
	case r < 19:
		q.header = append(q.header, [2]string{"X-Cost", "0"})
	default:
		q.header = append(q.header, [2]string{"X-Cost", "40"})
	}
	if rng.IntN(4) == 0 {
		q.header = append(q.header, [2]string{"X-Status", []string{"404", "500", "none", "201"}[rng.IntN(4)]})
	}
	if rng.IntN(8) == 0 {
		q.header = append(q.header, [2]string{"X-Cut", []string{"gone", "deadline"}[rng.IntN(2)]})
	}
	return q
}

// sdResp is what a response is compared by.
type sdResp struct {
	status int
	header http.Header
	body   string
}

func (s *sdSide) do(t *testing.T, q sdReq) sdResp {
	t.Helper()
	a, err := s.serve(q)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// serve serves q on s and returns the response (an error only when a
// server's client fails), on any goroutine (an interloper is served from
// within a Take: see sdHook).
func (s *sdSide) serve(q sdReq) (sdResp, error) {
	if s.srv != nil {
		r, err := http.NewRequest(q.method, s.srv.URL+q.path, nil)
		if err != nil {
			return sdResp{}, err
		}
		for _, kv := range q.header {
			r.Header.Set(kv[0], kv[1])
		}
		res, err := s.srv.Client().Do(r)
		if err != nil {
			return sdResp{}, fmt.Errorf("%s: %v", s.name, err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			return sdResp{}, fmt.Errorf("%s: %v", s.name, err)
		}
		// Date is net/http's reading of the wall clock, which no store
		// decides: the one header left out.
		res.Header.Del("Date")
		return sdResp{res.StatusCode, res.Header, string(body)}, nil
	}
	r := httptest.NewRequest(q.method, q.path, nil)
	r.RemoteAddr = q.remote
	for _, kv := range q.header {
		r.Header.Set(kv[0], kv[1])
	}
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, r)
	res := w.Result() // the header as it was when written
	body, _ := io.ReadAll(res.Body)
	return sdResp{res.StatusCode, res.Header, string(body)}, nil
}

// peekReq is q as Peek and Reset read it: the user set, as sdUser does.
func (q sdReq) peekReq() *http.Request {
	r := httptest.NewRequest(q.method, q.path, nil)
	r.RemoteAddr = q.remote
	for _, kv := range q.header {
		r.Header.Set(kv[0], kv[1])
	}
	if u := r.Header.Get("X-User"); u != "" {
		r = r.WithContext(keyfunc.WithUser(r.Context(), u))
	}
	return r
}

// sdDiffResp returns how a and b differ, or "".
func sdDiffResp(a, b sdResp) string {
	// chi's 405 lists the allowed methods in the order it ranges over a
	// map of them (chi v5.5.0 tree.go, findRoute: "for endpoints := range
	// xn.endpoints"), so that two chi routers answer one request in two
	// orders: a router's, not a store's, and the limiter never runs for
	// it. Their order alone is normalised.
	for _, h := range []http.Header{a.header, b.header} {
		if v := h["Allow"]; len(v) > 1 {
			h["Allow"] = slices.Sorted(slices.Values(v))
		}
	}
	if a.status != b.status {
		return fmt.Sprintf("status %d != %d", a.status, b.status)
	}
	keys := map[string]bool{}
	for k := range a.header {
		keys[k] = true
	}
	for k := range b.header {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		if !slices.Equal(a.header[k], b.header[k]) {
			return fmt.Sprintf("status %d, header %s: %q != %q", a.status, k, a.header[k], b.header[k])
		}
	}
	if a.body != b.body {
		return fmt.Sprintf("status %d, body:\n\t%s\n\t!=\n\t%s", a.status, a.body, b.body)
	}
	return ""
}

// sdCover counts what the traces went through, so that the test can say
// what it covered (and fail if a script generator stops reaching a case).
type sdCover struct {
	traces, steps, requests, reloads, configs, setLimits, peeks, resets int
	// The requests answered 429, held for a leaky_queue Delay, let
	// through denied by shadow mode, refused for want of a key, whose
	// units CountIf gave back, and whose hold was cut short.
	denied, held, shadowed, keyRejected, givenBack, abandoned int
	// kinds counts requests served per kind in force (leaky_queue with a
	// MaxDelay as "leaky_queue+delay").
	kinds, profiles, routers map[string]int
	cluster                  sdClusterCover
}

// sdTrace is one trace's settings, drawn from its index and seed.
type sdTrace struct {
	router  string // "chi" or "mux"
	server  bool   // through httptest.Server rather than a recorder
	profile middleware.Profile
	pk      bool
	shadow  bool
	hold    bool // the queue's hold advances the side's clock (else it returns at once)
	big     bool // limits and costs up to 10^9, windows up to a day
	deny    bool // the standalone Redis store keeps a deny cache (WithDenyCache)
	cdeny   bool // the cluster's store does
}

func (tr sdTrace) String() string {
	return fmt.Sprintf("router=%s server=%v profile=%v pk=%v shadow=%v clockedHold=%v big=%v denyCache=%v clusterDenyCache=%v",
		tr.router, tr.server, tr.profile, tr.pk, tr.shadow, tr.hold, tr.big, tr.deny, tr.cdeny)
}

// sdInterloper returns a request that arrives while q's Take is between
// its phases (see sdHook): q again, or q from another client on one of its
// keys (another X-Client, user or address), or at another cost, so that
// it takes from some of q's slots and not others.
func sdInterloper(rng *rand.Rand, q sdReq, big bool) sdReq {
	iq := q
	iq.header = slices.Clone(q.header)
	switch rng.IntN(5) {
	case 0, 1: // q again
	case 2:
		iq.header = append(iq.header, [2]string{"X-Client", []string{"a", "b", "c", "d"}[rng.IntN(4)]})
	case 3:
		iq.header = append(iq.header, [2]string{"X-User", []string{"alice", "bob", "carol"}[rng.IntN(3)]})
	default:
		iq.header = append(iq.header, [2]string{"X-Cost", strconv.FormatInt(sdN(rng, 4, big), 10)})
	}
	if rng.IntN(3) == 0 {
		iq.remote = []string{"192.0.2.1:1234", "192.0.2.2:1234", "[2001:db8::1]:80"}[rng.IntN(3)]
	}
	// Set replaces: a header appended twice has its last value.
	iq.header = append(iq.header, [2]string{"X-Interloper", "1"})
	return iq
}

// runStoreDiff replays one random trace of steps on a memory side, a side
// on the redis-server srv and, when cl is not nil, a side on the Redis
// Cluster cl (the Redis sides under a store prefix of the trace's own),
// and returns the first divergence from the memory side, or "".
func runStoreDiff(t *testing.T, seed uint64, idx, steps int, cov *sdCover, srv *redistest.Server, cl *redistest.Cluster) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, uint64(idx)))
	tr := sdTrace{
		router:  []string{"chi", "mux"}[idx%2],
		server:  idx%5 == 4,
		profile: sdProfiles[(idx/2)%len(sdProfiles)],
		shadow:  rng.IntN(5) == 0,
		hold:    rng.IntN(2) == 0,
		big:     idx%8 == 2 || idx%8 == 7,
		deny:    idx%3 == 1,
		cdeny:   idx%3 == 2,
	}
	tr.pk = tr.profile == middleware.IETF && rng.IntN(2) == 0

	// The policies: the first of a kind the index picks, so that every
	// kind leads some traces (shifted every eight traces, so that each
	// leads under both routers), then up to three more of any kind.
	n := 1 + rng.IntN(4)
	pols := []sdPol{sdRandPol(rng, "p0", sdKinds[(idx+idx/8)%len(sdKinds)], true, tr.big)}
	for i := 1; i < n; i++ {
		pols = append(pols, sdRandPol(rng, "p"+strconv.Itoa(i), "", true, tr.big))
	}
	// Each side has a clock of its own, stepped alike by the script: a
	// leaky_queue hold that advances the clock (tr.hold) moves only the
	// side that held, as a real hold would; the clocks are compared after
	// every step.
	t0 := time.Unix(1_700_000_040, 0).Add(time.Duration(rng.Int64N(int64(time.Minute))))
	names := []string{"memory", "redis"}
	if cl != nil {
		names = append(names, "cluster")
	}
	hook := &sdHook{}
	sides := make([]*sdSide, len(names))
	for i, name := range names {
		s := &sdSide{name: name, clock: algotest.NewClock(t0)}
		switch {
		case name == "cluster":
			var done func()
			s.store, done = sdClusterStore(t, cl, s.clock, "sd"+strconv.Itoa(idx), tr.cdeny, hook)
			defer done()
		case name == "redis":
			var done func()
			s.store, done = sdRedisStore(t, srv, s.clock, "sd"+strconv.Itoa(idx), tr.deny)
			defer done()
		default:
			s.store = storetest.New(t, name, s.clock)
		}
		ps, err := sdBuildAll(pols)
		if err != nil {
			t.Fatal(err)
		}
		s.m, err = middleware.New(s.store, ps, s.options(tr.profile, "", tr.hold, tr.pk, tr.shadow)...)
		if err != nil {
			t.Fatal(err)
		}
		s.h = sdRouter(tr.router, s.m)
		if tr.server {
			s.srv = httptest.NewServer(s.h)
			t.Cleanup(s.srv.Close)
		}
		sides[i] = s
	}
	mem, others := sides[0], sides[1:]
	cov.traces++
	cov.profiles[tr.profile.String()]++
	cov.routers[tr.router]++

	var log []string
	fail := func(format string, args ...any) string {
		if len(log) > 40 {
			log = append([]string{fmt.Sprintf("(%d steps before)", len(log)-40)}, log[len(log)-40:]...)
		}
		return fmt.Sprintf("seed %d trace %d (%s)\npolicies now:\n%s\nlast steps:\n\t%s\n%s", seed, idx, tr,
			sdYAML(pols), strings.Join(log, "\n\t"), fmt.Sprintf(format, args...))
	}
	// undone is whether a request's Take on the cluster was undone since
	// the last clock step.
	undone := false
	// request serves q on every side and compares. With an interloper iq,
	// the cluster side is armed to serve iq between the phases of q's
	// Take; when it did, the other sides serve iq just before q.
	request := func(q sdReq, iq *sdReq) string {
		type served struct {
			a, ia sdResp
			errs  []string
		}
		got := make([]served, len(sides))
		interloped := false
		if iq == nil {
			// The sides are apart: served at once, as they would be.
			var wg sync.WaitGroup
			errs := make([]error, len(sides))
			for i, s := range sides {
				wg.Add(1)
				go func() {
					defer wg.Done()
					got[i].a, errs[i] = s.serve(q)
				}()
			}
			wg.Wait()
			for i, s := range sides {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				got[i].errs = s.takeErrs()
			}
			if cl != nil {
				undone = cov.cluster.count(hook.takeCalls()) || undone
			}
		} else if cl != nil {
			cs := sides[len(sides)-1]
			var ia *sdInterlope
			var ierr error
			if iq != nil {
				ia = &sdInterlope{}
				ia.serve = func() { got[len(sides)-1].ia, ierr = cs.serve(*iq) }
				hook.arming(ia)
			}
			got[len(sides)-1].a = cs.do(t, q)
			undone = cov.cluster.count(hook.takeCalls()) || undone
			if ia != nil && ia.fired.Load() {
				if ierr != nil {
					t.Fatal(ierr)
				}
				interloped = true
				cov.cluster.interlopers++
				log = append(log, "\t(the interloper came between the phases)")
			}
		}
		for i, s := range sides {
			if iq == nil {
				break
			}
			if s.name == "cluster" {
				got[i].errs = s.takeErrs()
				continue
			}
			if interloped {
				got[i].ia = s.do(t, *iq)
			}
			got[i].a = s.do(t, q)
			got[i].errs = s.takeErrs()
		}
		cov.requests++
		if interloped {
			cov.requests++
			// The interloper's errors and the request's are reported in
			// one order on the cluster (the interloper's inside the
			// request's Take) and another elsewhere.
			for i := range got {
				slices.Sort(got[i].errs)
			}
		}
		a := got[0]
		for i, s := range others {
			b := got[i+1]
			if interloped {
				if d := sdDiffResp(a.ia, b.ia); d != "" {
					return fail("interloper %s: memory and %s differ: %s\nmemory: %d %v %q\n%s:  %d %v %q",
						iq, s.name, d, a.ia.status, a.ia.header, a.ia.body, s.name, b.ia.status, b.ia.header, b.ia.body)
				}
			}
			if d := sdDiffResp(a.a, b.a); d != "" {
				return fail("request %s: memory and %s differ: %s\nmemory: %d %v %q\n%s:  %d %v %q\nerrors: %q / %q",
					q, s.name, d, a.a.status, a.a.header, a.a.body, s.name, b.a.status, b.a.header, b.a.body, a.errs, b.errs)
			}
			if !slices.Equal(a.errs, b.errs) {
				return fail("request %s: errors reported differ: memory %q, %s %q", q, a.errs, s.name, b.errs)
			}
			if !mem.clock.Now().Equal(s.clock.Now()) {
				return fail("request %s: the clocks parted: memory %v, %s %v (held differently)", q, mem.clock.Now(), s.name, s.clock.Now())
			}
		}
		for _, r := range []sdResp{a.a, a.ia} {
			switch r.status {
			case http.StatusTooManyRequests:
				cov.denied++
			case http.StatusBadRequest, http.StatusForbidden:
				cov.keyRejected++
			}
		}
		return ""
	}
	var q sdReq
	for step := range steps {
		cov.steps++
		switch r := rng.IntN(100); {
		case r < 20: // a clock step
			d := sdStep(rng, mem.clock.Now(), pols)
			if undone && rng.IntN(2) == 0 {
				// Back within a window after an undo: a reservation's
				// write forgot what had left the window at its instant
				// (a log's events, a ring's sub-windows), which a
				// request at an earlier instant counts again, so the
				// undo must have put it back.
				d = -time.Duration(rng.Int64N(int64(pols[rng.IntN(len(pols))].spec.Window)))
			}
			undone = false
			for _, s := range sides {
				s.clock.Advance(d)
			}
			log = append(log, fmt.Sprintf("%d: advance %v", step, d))
		case r < 72: // a request, the same one again, or a burst of it; perhaps an interloper
			if q.method == "" || rng.IntN(3) != 0 {
				q = sdRandReq(rng, tr.big)
			}
			k := 1
			if rng.IntN(4) == 0 {
				k = 2 + rng.IntN(5)
			}
			var iq *sdReq
			if cl != nil && rng.IntN(3) == 0 {
				i := sdInterloper(rng, q, tr.big)
				iq = &i
				log = append(log, fmt.Sprintf("%d: %d× %s, each with interloper %s", step, k, q, i))
			} else {
				log = append(log, fmt.Sprintf("%d: %d× %s", step, k, q))
			}
			before := mem.m.Stats().Delayed
			for range k {
				if d := request(q, iq); d != "" {
					return d
				}
			}
			cov.held += int(mem.m.Stats().Delayed - before)
			for _, p := range mem.m.Set().Policies() {
				cov.kinds[string(p.Spec().Algorithm)+sdDelayTag(p.Spec())]++
			}
		case r < 80: // a reload, in code or from a file
			viaConfig := rng.IntN(2) == 0
			next := sdMutate(rng, pols, !viaConfig, tr.big)
			log = append(log, fmt.Sprintf("%d: reload (config %v) to %v", step, viaConfig, sdNames(next)))
			errs := make([]error, len(sides))
			for i, s := range sides {
				if viaConfig {
					cfg, err := policy.ParseConfig([]byte(sdYAML(next)), "storediff.yaml")
					if err != nil {
						return fail("config does not parse: %v\n%s", err, sdYAML(next))
					}
					errs[i] = s.m.ApplyConfig(cfg)
				} else {
					ps, err := sdBuildAll(next)
					if err != nil {
						t.Fatal(err)
					}
					errs[i] = s.m.SetPolicies(ps)
				}
			}
			for i, s := range others {
				if fmt.Sprint(errs[0]) != fmt.Sprint(errs[i+1]) {
					return fail("reload: memory %v, %s %v", errs[0], s.name, errs[i+1])
				}
			}
			if errs[0] == nil {
				pols = next
				cov.reloads++
				if viaConfig {
					cov.configs++
				}
			} else {
				log = append(log, fmt.Sprintf("%d: (refused: %v)", step, errs[0]))
			}
		case r < 88: // SetLimit or SetLimitUnguarded
			p := pols[rng.IntN(len(pols))]
			l := sdN(rng, 13, tr.big) - 1
			unguarded := rng.IntN(3) == 0
			log = append(log, fmt.Sprintf("%d: setlimit %s %d (unguarded %v)", step, p.name, l, unguarded))
			errs := make([]error, len(sides))
			for i, s := range sides {
				if unguarded {
					errs[i] = s.m.SetLimitUnguarded(p.name, l)
				} else {
					errs[i] = s.m.SetLimit(p.name, l)
				}
			}
			for i, s := range others {
				if fmt.Sprint(errs[0]) != fmt.Sprint(errs[i+1]) {
					return fail("setlimit: memory %v, %s %v", errs[0], s.name, errs[i+1])
				}
			}
			cov.setLimits++
		case r < 97: // a Peek, compared decision by decision
			pq := sdRandReq(rng, tr.big)
			if q.method != "" && rng.IntN(2) == 0 {
				pq = q // the last request's client
			}
			log = append(log, fmt.Sprintf("%d: peek %s", step, pq))
			ra, erra := mem.m.Peek(pq.peekReq())
			for _, s := range others {
				rb, errb := s.m.Peek(pq.peekReq())
				if d := sdDiffPeek(ra, erra, rb, errb); d != "" {
					return fail("peek %s: memory and %s: %s", pq, s.name, d)
				}
			}
			hook.takeCalls()
			cov.peeks++
		default: // a Reset of a client
			pq := sdRandReq(rng, tr.big)
			log = append(log, fmt.Sprintf("%d: reset %s", step, pq))
			erra := mem.m.Reset(pq.peekReq())
			for _, s := range others {
				if errb := s.m.Reset(pq.peekReq()); fmt.Sprint(erra) != fmt.Sprint(errb) {
					return fail("reset %s: memory %v, %s %v", pq, erra, s.name, errb)
				}
			}
			cov.resets++
		}
	}
	for _, s := range others {
		if sa, sb := mem.m.Stats(), s.m.Stats(); sa != sb {
			return fail("stats at the end: memory %+v, %s %+v", sa, s.name, sb)
		}
		if st := s.m.Stats(); st.StoreErrors != 0 || st.FailedOpen != 0 {
			return fail("the %s store failed: %+v", s.name, st)
		}
	}
	cov.shadowed += int(mem.m.Stats().ShadowDenied)
	cov.givenBack += int(mem.m.Stats().GivenBack)
	cov.abandoned += int(mem.m.Stats().Abandoned)
	return ""
}

// sdRedisStore returns a Redis store on the redis-server srv reading
// clock, under prefix (the trace's own on a server traces share), with a
// deny cache when deny. The client is closed when the trace ends (done).
func sdRedisStore(t *testing.T, srv *redistest.Server, clock algorithms.Clock, prefix string, deny bool) (algorithms.Store, func()) {
	t.Helper()
	return sdStoreOn(t, redis.NewClient(&redis.Options{Addr: srv.Addr}), clock, prefix, deny)
}

// sdStoreOn returns a Redis store on client reading clock, under prefix,
// with a deny cache when deny, and done, which closes the store and the
// client (closed at once when the store cannot be made).
func sdStoreOn(t *testing.T, client redis.UniversalClient, clock algorithms.Clock, prefix string, deny bool) (algorithms.Store, func()) {
	t.Helper()
	opts := []redisstore.Option{redisstore.WithClock(clock), redisstore.WithPrefix(prefix)}
	if deny {
		opts = append(opts, redisstore.WithDenyCache(1000))
	}
	rs, err := redisstore.New(client, opts...)
	if err != nil {
		client.Close()
		t.Fatal(err)
	}
	return rs, func() {
		rs.Close()
		client.Close()
	}
}

func sdDelayTag(s algorithms.Spec) string {
	if s.MaxDelay != 0 {
		return "+delay"
	}
	return ""
}

func sdNames(ps []sdPol) []string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s:%s/%d/%v", p.name, p.spec.Algorithm, p.spec.Limit, p.spec.Window))
	}
	return out
}

// sdStep returns a clock step: none, a few nanoseconds, part of a window,
// to a window boundary of one of the policies (exactly, or a nanosecond
// either side), or several windows.
func sdStep(rng *rand.Rand, now time.Time, pols []sdPol) time.Duration {
	W := pols[rng.IntN(len(pols))].spec.Window
	if b := pols[rng.IntN(len(pols))].spec; b.Buckets > 0 && rng.IntN(2) == 0 {
		W = b.Window / time.Duration(b.Buckets)
	}
	toBoundary := W - time.Duration(now.UnixNano()%int64(W))
	switch rng.IntN(12) {
	case 0:
		return 0
	case 1:
		return time.Duration(1 + rng.IntN(999))
	case 2:
		return time.Duration(rng.Int64N(int64(W / 4)))
	case 3:
		return time.Duration(rng.Int64N(int64(W)))
	case 4, 5:
		return toBoundary
	case 6:
		return toBoundary - 1
	case 7:
		return toBoundary + 1
	case 8:
		return time.Duration(1+rng.IntN(3)) * W
	case 9:
		return time.Duration(rng.Int64N(int64(4 * W)))
	case 10:
		// Back, as a clock stepped back (or the instance of another
		// host, whose clock is behind): by part of a window, to just
		// before its boundary, or a few nanoseconds.
		return -[]time.Duration{time.Duration(rng.Int64N(int64(W))), W - toBoundary + 1, time.Duration(1 + rng.IntN(999))}[rng.IntN(3)]
	default:
		return []time.Duration{500 * time.Millisecond, time.Second, 100 * time.Millisecond}[rng.IntN(3)]
	}
}

// sdMutate returns a new policy set from pols: one policy's limit moved
// (a reload lowering or raising it), a policy replaced, added or
// removed, or a new set. inCode allows costs (a file has none).
func sdMutate(rng *rand.Rand, pols []sdPol, inCode, big bool) []sdPol {
	next := slices.Clone(pols)
	if !inCode {
		for i := range next {
			next[i].cost = false
		}
	}
	for {
		switch rng.IntN(6) {
		case 0, 1: // the limit moved
			i := rng.IntN(len(next))
			s := next[i].spec
			s.Limit = sdN(rng, 10, big)
			if s.Burst != 0 && rng.IntN(2) == 0 {
				s.Burst = sdN(rng, 12, big)
			}
			if s.Validate() != nil {
				continue
			}
			next[i].spec = s
		case 2: // a policy replaced
			i := rng.IntN(len(next))
			next[i] = sdRandPol(rng, next[i].name, "", inCode, big)
		case 3: // a policy added
			if len(next) == 4 {
				continue
			}
			name := "p0"
			for j := 0; slices.ContainsFunc(next, func(p sdPol) bool { return p.name == name }); j++ {
				name = "p" + strconv.Itoa(j)
			}
			next = append(next, sdRandPol(rng, name, "", inCode, big))
		case 4: // a policy removed
			if len(next) == 1 {
				continue
			}
			i := rng.IntN(len(next))
			next = slices.Delete(next, i, i+1)
		default: // a new set, keeping the names
			for i := range next {
				next[i] = sdRandPol(rng, next[i].name, "", inCode, big)
			}
		}
		return next
	}
}

// sdDiffPeek returns how two Peeks differ, or "".
func sdDiffPeek(a *middleware.Result, erra error, b *middleware.Result, errb error) string {
	if (erra == nil) != (errb == nil) || erra != nil && erra.Error() != errb.Error() {
		return fmt.Sprintf("errors: memory %v, redis %v", erra, errb)
	}
	if erra != nil {
		return ""
	}
	if a.Len() != b.Len() {
		return fmt.Sprintf("%d decisions, redis %d", a.Len(), b.Len())
	}
	for i := range a.Len() {
		if a.Key(i) != b.Key(i) || a.Cost(i) != b.Cost(i) || a.Decision(i) != b.Decision(i) {
			return fmt.Sprintf("decision %d: memory %s cost %d %+v, redis %s cost %d %+v",
				i, a.Key(i), a.Cost(i), a.Decision(i), b.Key(i), b.Cost(i), b.Decision(i))
		}
	}
	return ""
}

// TestStoreDifferentialHTTP replays random scripts on three middlewares
// built alike, one over the memory store, one over Redis (a redis-server
// of the test's own) and one over a three-node Redis Cluster of its own
// (each trace under a store prefix of its own), and holds every response
// of the Redis ones to the memory one's byte for byte: status, every header (the
// rate-limit fields of the profile, Retry-After, Cache-Control,
// Content-Type) and body (the 429's problem+json included), with the
// errors reported, the Peeks between requests decision by decision, and
// the Stats at the end. The scripts cover all seven kinds (leaky_queue with
// and without MaxDelay, held on the clock or not, some holds cut short
// and refunded), one to four stacked policies keyed by IP, header or IP
// and user, matched by method and route, with costs (in range and out of
// it) and CountIf (give-backs), every header profile, partition keys,
// shadow mode, reloads (SetPolicies and ApplyConfig) and SetLimit (and
// SetLimitUnguarded), Peek and Reset, and clock steps from none to
// several windows, window boundaries exactly and a nanosecond either
// side; limits up to 10^9 and windows up to a day in a quarter of the
// traces, and the Redis store's deny cache in a third (the cluster's in
// another third). On the cluster, policies keyed differently put a
// request's checks on several slots, so that its Take peeks, reserves and
// may undo per slot: a third of the requests come with an interloper
// served between the Take's peek and its reservations (the memory and
// standalone sides serve it just before), so that a slot denies while
// another admitted and is undone; some clock steps go back (more often
// right after an undo). Through chi in
// half the traces and ServeMux in the other, recorded or, in a few, over
// an httptest.Server. A failure prints its seed and trace;
// STOREDIFF_SEED and STOREDIFF_TRACE replay one, and STOREDIFF_TRACES
// sets how many traces to run (a longer search).
func TestStoreDifferentialHTTP(t *testing.T) {
	srv := redistest.New(t) // skips with the reason when there is no redis-server
	traces, steps := 32, 250
	if testing.Short() {
		traces, steps = 6, 150
	}
	seed, traces, only := sdReplayEnv(t, "STOREDIFF", traces)
	cov := &sdCover{kinds: map[string]int{}, profiles: map[string]int{}, routers: map[string]int{}}
	start := time.Now()
	cl := redistest.NewCluster(t) // one for every trace, as srv, each under a prefix of its own
	t.Logf("cluster started in %v", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	// The scripts must reach what they are said to cover: a seed whose
	// traces miss a rare event (a give-back split over slots) runs more
	// traces, up to twice as many, rather than fail.
	checked := only < 0 && !testing.Short()
	for idx := 0; idx < traces || checked && idx < 2*traces && sdShort(cov) != ""; idx++ {
		if only >= 0 && idx != only {
			continue
		}
		if d := runStoreDiff(t, seed, idx, steps, cov, srv, cl); d != "" {
			t.Fatalf("%s\nreplay: STOREDIFF_SEED=%d STOREDIFF_TRACE=%d go test -race ./middleware/ -run TestStoreDifferentialHTTP", d, seed, idx)
		}
	}
	t.Logf("seed %d: %d traces, %d steps, %d requests (%d denied, %d held, %d shadow-denied, %d key-rejected, %d given back, %d holds cut), %d reloads (%d from config), %d SetLimits, %d peeks, %d resets in %v; profiles %v, routers %v, kinds in force per request %v; cluster Takes: %v",
		seed, cov.traces, cov.steps, cov.requests, cov.denied, cov.held, cov.shadowed, cov.keyRejected, cov.givenBack, cov.abandoned, cov.reloads, cov.configs,
		cov.setLimits, cov.peeks, cov.resets, time.Since(start).Round(time.Millisecond), cov.profiles, cov.routers, cov.kinds, cov.cluster)
	if short := sdShort(cov); checked && short != "" {
		t.Error(short)
	}
}

// sdReplayEnv reads a differential's replay settings from the
// environment: the seed (<name>_SEED, else the time), how many traces to
// run (<name>_TRACES, a longer search; else traces) and the one trace to
// replay (<name>_TRACE, else -1 for all). A value that is no number fails
// t.
func sdReplayEnv(t *testing.T, name string, traces int) (seed uint64, n, only int) {
	t.Helper()
	seed, n, only = uint64(time.Now().UnixNano()), traces, -1
	var err error
	if s := os.Getenv(name + "_SEED"); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("%s_SEED: %v", name, err)
		}
	}
	if s := os.Getenv(name + "_TRACES"); s != "" {
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatalf("%s_TRACES: %v", name, err)
		}
	}
	if s := os.Getenv(name + "_TRACE"); s != "" {
		if only, err = strconv.Atoi(s); err != nil {
			t.Fatalf("%s_TRACE: %v", name, err)
		}
	}
	return seed, n, only
}

// sdShort reports what the traces run so far did not reach of what they
// are said to cover, or "".
func sdShort(cov *sdCover) string {
	for _, k := range sdKinds {
		if cov.kinds[k] == 0 {
			return fmt.Sprintf("no request served with a %s policy in force", k)
		}
	}
	if c := cov.cluster; c.split == 0 || c.reserved == 0 || c.undone == 0 || c.interlopers == 0 || c.splitGiveBacks == 0 {
		return fmt.Sprintf("cluster coverage short: %v", c)
	}
	if len(cov.profiles) != len(sdProfiles) || cov.denied == 0 || cov.held == 0 || cov.givenBack == 0 || cov.abandoned == 0 || cov.shadowed == 0 || cov.reloads == 0 || cov.configs == 0 || cov.keyRejected == 0 {
		return fmt.Sprintf("coverage short: %+v", *cov)
	}
	return ""
}
