// Package replay runs access-log traffic through configured policies in
// simulated time: every request is decided at the instant the log gives it,
// by an in-memory store whose clock is set to that instant. It reports what
// the policies would have rejected, how much each key sends per window, and
// which limits the traffic suggests.
package replay

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"net/http"
	"net/textproto"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// Options configure an Engine.
type Options struct {
	// Routes are further route patterns to resolve requests against (the
	// application's routes), besides those the policies name; they give
	// route-keyed policies their keys.
	Routes []string
	// Router is the application's router, whose routing the replay
	// reproduces: RouterServeMux, RouterChi, or "" (RouterAuto): a
	// ServeMux when every route pattern is one, else chi. The two route
	// some patterns apart: "/" is every path under a ServeMux and the
	// root alone under chi, "/docs/" a subtree or one path, and a
	// ServeMux cleans paths and routes a HEAD to a GET route.
	Router string
	// Compare also runs every policy's traffic through every algorithm.
	Compare bool
	// Top is the number of most-rejected keys reported per policy: 0
	// means 5, a negative number none.
	Top int
	// Bins is the number of time bins of the charts (default 60).
	Bins int
	// Reorder is how far a line's time may lie before the newest time
	// read so far for the line still to be replayed in time order
	// (servers write a request's line when it ends, stamped with its
	// start). 0 means one minute; a negative value replays lines as
	// logged. Older lines are replayed late and counted (Report.Late); a
	// run of them further behind is decided apart, as a log of its own.
	Reorder time.Duration
	// MaxHeld bounds the lines held for the reorder window at once: 0
	// means DefaultMaxHeld. Past it, the oldest line held is replayed
	// before the window has passed over it (the window narrows while
	// the flood lasts; Report.Hurried counts them), so that a flood of
	// lines within the window cannot take all memory.
	MaxHeld int
}

// The routers of Options.Router.
const (
	RouterAuto     = "auto"
	RouterServeMux = "servemux"
	RouterChi      = "chi"
)

// DefaultMaxHeld is the default Options.MaxHeld: about a minute of a log
// of 17,000 requests a second, some 250 MB held.
const DefaultMaxHeld = 1 << 20

// An Engine replays requests through the policies of a configuration.
// Feed it entries in log order with Add, then call Finish once.
type Engine struct {
	opts     Options
	warnings []string // about the configuration, from New (see Warnings)
	set      *policy.Set
	store    *algorithms.MemoryStore
	clock    *clock
	req      requestBuilder
	res      policy.Result
	pols     []*polStats
	index    map[*policy.Policy]int

	requests, rejected, noKey, unmatched int64
	first, last                          time.Time

	// The lines read but not yet replayed: those read in time order in
	// pending, from head on, and those read out of order in the heap
	// early, each with its place in the log (seq) to keep log order among
	// equal times. released is the time of the last line replayed, late
	// counts the lines older than it.
	pending  lineQueue
	nPending int // lines in pending
	early    []held
	seq      uint64
	released time.Time
	late     int64
	lateMax  time.Duration // the most a late line was behind the newest line before it
	// hurried counts the lines replayed before the window had passed over
	// them (see hurry), hurriedWindow the narrowest window it left.
	hurried       int64
	hurriedWindow time.Duration

	gaps logGaps // the key parts the log gives (see LogGaps)

	// The runs of late lines, each decided in a store of its own (see
	// lateRun).
	runs []*run
}

// A run is a run of late lines, in time order, decided in a store of its
// own: the logs joined end to end that it comes from (cat of two servers'
// logs, zcat of rotated logs in a glob's order) had it after later lines.
type run struct {
	store *algorithms.MemoryStore
	clock *clock
	last  time.Time // its newest line
	id    uint8     // its place in Engine.runs, plus one (0 is the main store)
}

// maxRuns bounds the runs of late lines; a late line that fits none when
// there are that many is decided with the lines in time order.
const maxRuns = 64

// clock is the simulated clock: the time of the entry being replayed.
type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

// New returns an Engine for the policies of cfg.
func New(cfg *policy.Config, opts Options) (*Engine, error) {
	switch {
	case opts.Top == 0:
		opts.Top = 5
	case opts.Top < 0:
		opts.Top = 0
	}
	if opts.Bins <= 0 {
		opts.Bins = 60
	}
	if opts.Reorder == 0 {
		opts.Reorder = time.Minute
	}
	if opts.MaxHeld <= 0 {
		opts.MaxHeld = DefaultMaxHeld
	}
	e := &Engine{opts: opts, clock: &clock{}, index: map[*policy.Policy]int{}}
	var routes []string
	for _, d := range cfg.Definitions {
		routes = append(routes, d.Routes...)
	}
	routes = append(routes, opts.Routes...)
	route, same, err := newRouter(routes, opts.Router)
	for _, re := range same {
		e.warnings = append(e.warnings, fmt.Sprintf("%s matches the same requests as route %q, spelled another way: an application's router registers only one of the two, and a policy routed by the other never applies; the replay registers %q",
			routeSource(cfg, re.pattern), re.reason, re.reason))
	}
	if err != nil {
		var re *routeError
		if errors.As(err, &re) {
			return nil, fmt.Errorf("replay: %s: %s", routeSource(cfg, re.pattern), re.reason)
		}
		return nil, err
	}
	e.req.init(route)
	e.gaps = newLogGaps(cfg.Definitions)
	var setOpts []policy.SetOption
	if route != nil {
		setOpts = append(setOpts, policy.WithPatternFunc(e.req.patternFunc()))
	}
	set, err := policy.NewSet(cfg.Policies, setOpts...)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	e.set = set
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(e.clock))
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	e.store = store
	digests := routeDigests(routes)
	for i, p := range cfg.Policies {
		e.index[p] = i
		e.pols = append(e.pols, &polStats{policy: p, def: cfg.Definitions[i], keys: map[string]uint32{}, routes: digests})
	}
	return e, nil
}

// Add replays one request at its logged time. Lines up to
// Options.Reorder out of time order are held back and replayed in time
// order; older ones are replayed at once, late (see lateRun).
func (e *Engine) Add(en *logparse.Entry) error {
	e.gaps.see(en)
	if e.first.IsZero() || en.Time.Before(e.first) {
		e.first = en.Time
	}
	if en.Time.After(e.last) {
		e.last = en.Time
	}
	if e.opts.Reorder < 0 || en.Time.Before(e.released) {
		if en.Time.Before(e.released) {
			e.late++
			e.lateMax = max(e.lateMax, e.last.Sub(en.Time))
			if r, err := e.lateRun(en.Time); err != nil || r != nil {
				if err != nil {
					return err
				}
				return e.decideIn(en, r.store, r.clock, r.id)
			}
		} else {
			e.released = en.Time
		}
		return e.decide(en)
	}
	// A line in time order joins the queue; one out of order the heap
	// (inserting it into the queue would move every later line: a slow
	// request's line, logged when it ends, lies seconds back).
	h := hold(en, e.seq)
	e.seq++
	if e.pending.empty() || h.ns >= e.pending.back().ns {
		e.pending.push(h)
		e.nPending++
	} else {
		e.early = append(e.early, h)
		e.up(len(e.early) - 1)
	}
	if err := e.release(e.last.Add(-e.opts.Reorder)); err != nil {
		return err
	}
	return e.hurry()
}

// nHeld returns the number of lines held: read and not yet replayed.
func (e *Engine) nHeld() int { return e.nPending + len(e.early) }

// up and down restore the heap order of e.early from i.
func (e *Engine) up(i int) {
	h := e.early
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].before(&h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (e *Engine) down(i int) {
	h := e.early
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h[c+1].before(&h[c]) {
			c++
		}
		if !h[c].before(&h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// release replays the held lines of time until or earlier, in time order
// (log order among equal times).
func (e *Engine) release(until time.Time) error {
	limit := until.UnixNano()
	for {
		ok, err := e.releaseNext(limit)
		if !ok || err != nil {
			return err
		}
	}
}

// hurry replays the oldest held lines, before the reorder window has
// passed over them, until at most Options.MaxHeld are held.
func (e *Engine) hurry() error {
	for e.nHeld() > e.opts.MaxHeld {
		e.hurried++
		if _, err := e.releaseNext(math.MaxInt64); err != nil {
			return err
		}
		if w := e.last.Sub(e.released); e.hurried == 1 || w < e.hurriedWindow {
			e.hurriedWindow = w
		}
	}
	return nil
}

// releaseNext replays the first held line in time order if its time is
// limit (Unix nanoseconds) or earlier, and reports whether it did.
func (e *Engine) releaseNext(limit int64) (bool, error) {
	var next *held
	fromQueue := !e.pending.empty()
	if fromQueue {
		next = e.pending.front()
	}
	if len(e.early) > 0 && (next == nil || e.early[0].before(next)) {
		next, fromQueue = &e.early[0], false
	}
	if next == nil || next.ns > limit {
		return false, nil
	}
	en := next.entry()
	if fromQueue {
		e.pending.pop()
		e.nPending--
	} else {
		last := len(e.early) - 1
		e.early[0] = e.early[last]
		e.early[last] = held{}
		e.early = e.early[:last]
		e.down(0)
	}
	e.released = en.Time
	return true, e.decide(&en)
}

// lateRun returns the run of late lines a line at t, older than the last
// line replayed, is decided in, or nil for the lines in time order. A
// store decides a request older than the newest it has seen of its key at
// that newest instant (time never goes back for a key): a line a little
// late is decided so with the lines in time order, and a run of lines far
// behind them, one at a time, would pile up at its keys' newest instants,
// every request of a key past its limit denied however spread out the run.
// So a line more than the reorder window behind (one minute with
// reordering off) every line replayed is decided in the run, of those it
// is no further behind, whose newest line is newest; a new one if there is
// none.
func (e *Engine) lateRun(t time.Time) (*run, error) {
	tol := e.opts.Reorder
	if tol < 0 {
		tol = time.Minute
	}
	reach := t.Add(tol)
	if !e.released.After(reach) {
		return nil, nil
	}
	var best *run
	for _, r := range e.runs {
		if !r.last.After(reach) && (best == nil || r.last.After(best.last)) {
			best = r
		}
	}
	if best == nil {
		if len(e.runs) == maxRuns {
			return nil, nil
		}
		clk := &clock{}
		store, err := algorithms.NewMemoryStore(algorithms.WithClock(clk))
		if err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		best = &run{store: store, clock: clk, id: uint8(len(e.runs) + 1)}
		e.runs = append(e.runs, best)
	}
	if t.After(best.last) {
		best.last = t
	}
	return best, nil
}

// flush replays every held line.
func (e *Engine) flush() error {
	return e.release(e.last)
}

// decide replays one request at its logged time.
func (e *Engine) decide(en *logparse.Entry) error {
	return e.decideIn(en, e.store, e.clock, 0)
}

// decideIn replays one request at its logged time in store, whose clock
// is clk: the main store (run 0) or the store of a run of late lines (its
// id), which the policies' trials decide it in too.
func (e *Engine) decideIn(en *logparse.Entry, store *algorithms.MemoryStore, clk *clock, run uint8) error {
	clk.t = en.Time
	r := e.req.build(en)
	mask := e.set.Match(r)
	if mask == 0 {
		e.unmatched++
		return nil
	}
	e.requests++
	for m := mask; m != 0; m &= m - 1 {
		e.pols[bits.TrailingZeros64(m)].matched++
	}
	t := en.Time.UnixNano()
	if err := e.set.Prepare(r, mask, &e.res); err != nil {
		var ke *policy.KeyError
		if errors.As(err, &ke) {
			e.noKey++
			ps := e.pols[e.index[ke.Policy]]
			ps.noKey++
			if ps.noKeyWhy == "" && ke.Err != nil {
				ps.noKeyWhy = ke.Err.Error()
				if errors.Is(ke.Err, keyfunc.ErrNoClientIP) {
					ps.noKeyWhy += " (" + clientFields(en) + ")"
				}
			}
			ps.noRoute = ps.noRoute || errors.Is(ke.Err, keyfunc.ErrNoRoute)
			return nil
		}
		return fmt.Errorf("replay: %w", err)
	}
	for skipped := e.res.SkippedMask(); skipped != 0; skipped &= skipped - 1 {
		e.pols[bits.TrailingZeros64(skipped)].skipped++
	}
	if err := e.res.Take(context.Background(), store); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	if !e.res.Allowed() {
		e.rejected++
	}
	// A policy that counts only some responses (count: failed) does not
	// count the request its logged status says it would not have: its
	// units are given back at once, as the middleware does when the
	// handler returns. A request whose handler's status is unknown counts
	// (the replay errs towards refusing, and towards higher suggested
	// limits): a line without a status, and one logged 429, most likely
	// the production rate limiter's answer, the request never reaching
	// the handler, whose answer the policy would have counted or not.
	var uncounted uint64
	if status := en.Status; status != 0 && status != http.StatusTooManyRequests && e.set.CountIfMask()&mask != 0 {
		for i := 0; i < e.res.Len(); i++ {
			if !e.res.Policy(i).Counts(r, status) {
				uncounted |= 1 << i
			}
		}
	}
	// The Take's decisions, counted before the give-back replaces those
	// of the uncounted policies with a look at their keys.
	for i := 0; i < e.res.Len(); i++ {
		ps := e.pols[e.index[e.res.Policy(i)]]
		d := e.res.Decision(i)
		ps.add(t, run, e.res.Key(i), d, uncounted&(1<<i) != 0)
	}
	if err := e.res.GiveBack(context.Background(), store, 0, uncounted); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	return nil
}

// clientFields describes what en gives of its client, for the reason a
// request had no client IP: its client field and its forwarding headers
// ("the line's client "-"", ", X-Forwarded-For "unknown""), each clipped.
func clientFields(en *logparse.Entry) string {
	quote := func(s string) string {
		if len(s) > 60 {
			s = s[:60] + "..."
		}
		return strconv.Quote(s)
	}
	out := "the line's client " + quote(en.Addr)
	for _, h := range en.Headers {
		switch textproto.CanonicalMIMEHeaderKey(h.Name) {
		case "X-Forwarded-For", "Forwarded", "X-Real-Ip":
			out += ", " + h.Name + " " + quote(h.Value)
		}
	}
	return out
}

// Warnings returns what New found questionable in the configuration and
// replayed anyway: route patterns that match the same requests, spelled
// two ways.
func (e *Engine) Warnings() []string { return e.warnings }

// newRouter returns a function finding the path of the route pattern of a
// request among patterns, as the application's router would, or nil when
// there are none: for router RouterAuto (or ""), a ServeMux when every
// pattern is a ServeMux pattern (see newMux; a request it redirects is
// policy.MuxRedirect), else a chi router (see newChi); for RouterServeMux
// or RouterChi, that router, a pattern it refuses an error.
//
// same lists the ServeMux patterns left out for matching the same requests
// as one registered before them, spelled another way ("GET /items/{name}"
// after "GET /items/{id}"), each with the pattern it is in its reason.
func newRouter(patterns []string, router string) (find func(*http.Request) string, same []*routeError, err error) {
	switch router {
	case "", RouterAuto, RouterServeMux, RouterChi:
	default:
		return nil, nil, fmt.Errorf("replay: unknown router %q; want %s, %s or %s", router, RouterAuto, RouterServeMux, RouterChi)
	}
	if len(patterns) == 0 {
		return nil, nil, nil
	}
	if router == RouterChi {
		find, err := newChi(patterns)
		return find, nil, err
	}
	nop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, p := range patterns {
		if err := register(http.NewServeMux(), p, nop); err != nil {
			if router == RouterServeMux {
				return nil, nil, err // no ServeMux pattern
			}
			find, err := newChi(patterns)
			return find, nil, err
		}
	}
	mux, byPath, same, err := newMux(patterns)
	if err != nil {
		return nil, nil, err
	}
	// A request the ServeMux answers with a redirect of its own (to the
	// cleaned path, or to the path with a trailing slash) is
	// policy.MuxRedirect, under no route's policies, as in the
	// middleware: the client sends it again to the new path, a line of
	// its own in the log.
	exact, paths := policy.ServeMuxPattern(mux), policy.ServeMuxPattern(byPath)
	return func(r *http.Request) string {
		pat := exact(r)
		if pat == "" {
			// No route of the request's method: the route of its path.
			pat = paths(r)
		}
		// As registered, its method kept, as ServeMux sets r.Pattern: the
		// route key of "GET /items/{id}" is not that of "DELETE
		// /items/{id}", and a HEAD request routed to "HEAD /x" is not
		// under a policy on "GET /x".
		return pat
	}, same, nil
}

// newMux returns a ServeMux resolving the route patterns as the
// application's ServeMux would, each registered as given, its method kept
// (so "GET /items/{id}" and "DELETE /items/{item}" both register, as they
// do in a ServeMux, and each request gets its method's route), and a
// second one, byPath, with the paths of the patterns that have a method,
// where they conflict with nothing registered there, so that a request of
// a method no route of mux has still gets the path's route. byPath is
// only asked when mux finds no route: a GET /login is the route "/"'s
// under the patterns "POST /login" and "/", as in the application's
// ServeMux, not the path "/login"'s.
//
// A pattern that matches the same requests as one registered before it,
// spelled with other wildcard names, is left out and listed in same, its
// reason the pattern registered: the application's router, which cannot
// register both either, has one of them, under which the other's policy
// never applies.
func newMux(patterns []string) (mux, byPath *http.ServeMux, same []*routeError, err error) {
	mux, byPath = http.NewServeMux(), http.NewServeMux()
	seen := map[string]bool{}
	nop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	var paths []string
	for _, p := range patterns {
		if _, rest, ok := strings.Cut(p, " "); ok && !strings.HasPrefix(p, "/") {
			paths = append(paths, strings.TrimLeft(rest, " "))
		}
		if seen[p] {
			continue
		}
		seen[p] = true
		if err := register(mux, p, nop); err != nil {
			if q := spelledBefore(patterns, p); q != "" {
				same = append(same, &routeError{pattern: p, reason: q})
				continue
			}
			return nil, nil, nil, err
		}
	}
	registered := map[string]bool{}
	for _, path := range paths {
		if !registered[path] {
			registered[path] = true
			_ = register(byPath, path, nop) // a conflict: the first path stays
		}
	}
	return mux, byPath, same, nil
}

// spelledBefore returns the pattern before p in patterns that is p with
// other wildcard names ("GET /items/{id}" for "GET /items/{name}"), or "".
func spelledBefore(patterns []string, p string) string {
	shape := WildcardShape(p)
	for _, q := range patterns {
		if q == p {
			return ""
		}
		if WildcardShape(q) == shape {
			return q
		}
	}
	return ""
}

// WildcardShape returns a route pattern with its wildcards' names left
// out: "{id}" and "{name}" become "{}", "{rest...}" becomes "{...}". Two
// patterns of one shape are one route spelled two ways.
func WildcardShape(pattern string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(pattern, '{')
		if i < 0 {
			b.WriteString(pattern)
			return b.String()
		}
		j := strings.IndexByte(pattern[i:], '}')
		if j < 0 {
			b.WriteString(pattern)
			return b.String()
		}
		b.WriteString(pattern[:i+1])
		if strings.HasSuffix(pattern[i:i+j], "...") {
			b.WriteString("...")
		} else if pattern[i:i+j+1] == "{$}" {
			b.WriteString("$")
		}
		b.WriteByte('}')
		pattern = pattern[i+j+1:]
	}
}

// newChi returns a route finder for chi route patterns (regexp wildcards
// "{id:[0-9]+}", wildcards within a segment, a catch-all "/*"), which a
// ServeMux cannot register: each pattern is registered in a chi router
// with its method, as the application registers it, and a request is
// looked up there with its own; one no route of its method has (a method
// chi does not know, a HEAD to a GET route) gets the route of its path:
// each pattern's path is registered in a second router, and looked up for
// GET whatever the request's method (the policies compare methods
// themselves; where two paths match the same requests, chi keeps the
// last). The first router is asked first: under "POST /login" and "/*", a
// GET /login is the catch-all's, as in the application's chi router.
func newChi(patterns []string) (func(*http.Request) string, error) {
	exact, byPath := chi.NewRouter(), chi.NewRouter()
	nop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	seen, seenPath := map[string]bool{}, map[string]bool{}
	for _, p := range patterns {
		method, path := "", p
		if m, rest, ok := strings.Cut(p, " "); ok && !strings.HasPrefix(p, "/") {
			method, path = m, strings.TrimLeft(rest, " ")
		}
		if !seenPath[path] {
			seenPath[path] = true
			if err := chiRegister(byPath, http.MethodGet, path, nop); err != nil {
				err.pattern = p
				return nil, err
			}
		}
		if !seen[p] {
			seen[p] = true
			// A method chi does not know, or wildcard names chi will not
			// have twice: the path's route stands for it.
			_ = chiRegister(exact, method, path, nop)
		}
	}
	return func(req *http.Request) string {
		path := req.URL.RawPath // what chi routes on
		if path == "" {
			path = req.URL.Path
		}
		if pat := exact.Find(chi.NewRouteContext(), req.Method, path); pat != "" {
			return pat
		}
		return byPath.Find(chi.NewRouteContext(), http.MethodGet, path)
	}, nil
}

// chiRegister adds a path for method (every method when ""), turning
// chi's panic on a bad pattern or an unknown method into an error.
func chiRegister(r chi.Router, method, path string, h http.Handler) (err *routeError) {
	defer func() {
		if v := recover(); v != nil {
			err = newRouteError(path, v)
		}
	}()
	if method == "" {
		r.Handle(path, h)
	} else {
		r.Method(method, path, h)
	}
	return nil
}

// register adds a pattern, turning ServeMux's panic on a bad or
// conflicting pattern into an error.
func register(mux *http.ServeMux, pattern string, h http.Handler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = newRouteError(pattern, r)
		}
	}()
	mux.Handle(pattern, h)
	return nil
}

// A routeError is a route pattern the replay's router refused, and why.
type routeError struct{ pattern, reason string }

func (e *routeError) Error() string {
	return fmt.Sprintf("replay: route %q: %s", e.pattern, e.reason)
}

// registeredAt is where ServeMux says a pattern was registered: the
// replay's own source, nothing the user wrote.
var registeredAt = regexp.MustCompile(` \(registered at [^)]*\)`)

// newRouteError returns the routeError of pattern for a router's panic
// value v, on one line.
func newRouteError(pattern string, v any) *routeError {
	reason := registeredAt.ReplaceAllString(fmt.Sprint(v), "")
	return &routeError{pattern: pattern, reason: strings.ReplaceAll(reason, "\n", " ")}
}

// routeSource names where the route pattern comes from: the first policy
// of cfg routed by it (with its line), else --route (Options.Routes).
func routeSource(cfg *policy.Config, pattern string) string {
	for _, d := range cfg.Definitions {
		if slices.Contains(d.Routes, pattern) {
			return fmt.Sprintf("policy %q (line %d), route %q", d.Name, d.Line, pattern)
		}
	}
	return fmt.Sprintf("--route %q", pattern)
}

// polStats gathers what one policy saw.
type polStats struct {
	policy *policy.Policy
	def    policy.Definition

	requests, rejected, noKey, skipped, delayed int64
	matched                                     int64  // the requests it applied to, a key found or not, decided or not (another policy refused first)
	noKeyWhy                                    string // the first request's key error
	noRoute                                     bool   // a request had no key for want of a route: the replay knows none

	routes   map[string]string // route patterns by their digest, for displayKey
	keys     map[string]uint32 // namespaced key -> id
	names    []string          // id -> namespaced key
	rejectBy []int64           // id -> rejections
	events   []event
}

// An event is one decision of a policy: when, for which key, in which
// store (run), and whether it denied.
type event struct {
	t      int64
	key    uint32
	run    uint8 // 0: the main store; else the id of the run of late lines decided apart
	denied bool
	// uncounted: the policy counts only some responses and not this
	// one's (its logged status): its units are given back once taken.
	uncounted bool
}

func (ps *polStats) add(t int64, run uint8, key string, d algorithms.Decision, uncounted bool) {
	id, ok := ps.keys[key]
	if !ok {
		id = uint32(len(ps.names))
		key = string([]byte(key)) // the Result's key is only valid until the next Prepare
		ps.keys[key] = id
		ps.names = append(ps.names, key)
		ps.rejectBy = append(ps.rejectBy, 0)
	}
	ps.requests++
	if !d.Allowed {
		ps.rejected++
		ps.rejectBy[id]++
	} else if d.Delay > 0 {
		ps.delayed++
	}
	ps.events = append(ps.events, event{t: t, key: id, run: run, denied: !d.Allowed, uncounted: uncounted})
}

// byTime returns the events in time order, log order kept among equals:
// the events themselves when they are (no line was decided late), else a
// sorted copy. ps.events stays in the order the replay decided them, in
// which the trials decide them again (see trialRun).
func (ps *polStats) byTime() []event {
	cmp := func(a, b event) int {
		switch {
		case a.t < b.t:
			return -1
		case a.t > b.t:
			return 1
		}
		return 0
	}
	if slices.IsSortedFunc(ps.events, cmp) {
		return ps.events
	}
	sorted := slices.Clone(ps.events)
	slices.SortStableFunc(sorted, cmp)
	return sorted
}
