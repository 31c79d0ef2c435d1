// Package metricset holds what the metrics adapters of package middleware
// (middleware/prommetrics, middleware/otelmetrics) count alike, whatever
// their metrics API: the decision latency and hold buckets and their
// validation, how an [middleware.Event] maps to per-policy outcomes and
// error kinds and to the holds of leaky_queue policies, the per-policy
// cache of an adapter's metrics, the limits each observed middleware
// reported per policy (so that one middleware closed or reloaded never
// removes what another still reports), and the counting of failure state
// transitions. Each adapter keeps its metrics API, its
// names and its error messages' prefix.
package metricset

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// DefaultBuckets returns a new slice of the default decision latency
// bucket bounds, in seconds: from 1µs (a decision on the memory store
// takes one or two) to 1s (a Redis round trip is typically under a
// millisecond).
func DefaultBuckets() []float64 {
	return []float64{.000001, .0000025, .000005, .00001, .000025, .00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}
}

// DefaultHoldBuckets returns a new slice of the default bucket bounds of
// the hold histogram, in seconds: 1ms, 2.5ms, 5ms, 10ms, 25ms, 50ms,
// 100ms, 250ms, 500ms, 1s, 2.5s, 5s, 10s, 30s and 60s. A leaky_queue
// holds a request for whole queue spacings (Window/Limit per unit of
// cost: 1ms for a thousand a second) up to its MaxDelay, commonly
// seconds and seldom past a minute; a longer hold counts in +Inf. A hold
// measured as 0 (cut short at once) counts in the first bucket.
func DefaultHoldBuckets() []float64 {
	return []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}
}

// A BucketRule checks the bucket bounds of a histogram for one adapter.
type BucketRule struct {
	// Prefix starts every error, such as "prommetrics".
	Prefix string
	// Invalid returns what is wrong with a bound on its own, such as "a
	// bucket is NaN", or "" if nothing is.
	Invalid func(b float64) string
}

// Check returns an error naming where (such as "WithBuckets") for buckets
// no histogram can have: none, a bound Invalid rejects, or bounds that do
// not increase.
func (r BucketRule) Check(where string, buckets []float64) error {
	if len(buckets) == 0 {
		return fmt.Errorf("%s: %s: no buckets", r.Prefix, where)
	}
	for i, b := range buckets {
		if bad := r.Invalid(b); bad != "" {
			return fmt.Errorf("%s: %s: %s", r.Prefix, where, bad)
		}
		if i > 0 && b <= buckets[i-1] {
			return fmt.Errorf("%s: %s: buckets must increase: %v after %v", r.Prefix, where, b, buckets[i-1])
		}
	}
	return nil
}

// Given sets *dst to a copy of the buckets of the adapter's option named
// option (such as "WithBuckets"), or returns Check's error for them.
func (r BucketRule) Given(option string, dst *[]float64, buckets []float64) error {
	if err := r.Check(option, buckets); err != nil {
		return err
	}
	*dst = slices.Clone(buckets)
	return nil
}

// Resolve makes *dst the buckets the histogram is built with: those an
// option set (*dst not nil), else a copy of defaults (the adapter's
// variable named name, such as "DefaultBuckets", read once here), checked
// as name. The copy keeps the histogram from changing when defaults is
// edited later.
func (r BucketRule) Resolve(name string, dst *[]float64, defaults []float64) error {
	if *dst != nil {
		return nil
	}
	if err := r.Check(name, defaults); err != nil {
		return err
	}
	*dst = slices.Clone(defaults)
	return nil
}

// A Series is one of the counters kept per policy: an outcome of the
// requests counter or a kind of the errors counter.
type Series uint8

// The series, in the order the adapters create them.
const (
	Allowed      Series = iota // outcome "allowed": each evaluated policy of an admitted request
	Denied                     // outcome "denied": each policy that denied a request
	ShadowDenied               // outcome "shadow_denied": each policy that denied a request let through in shadow mode
	Abandoned                  // outcome "abandoned": each evaluated policy of a request not served, its context over (see Count)
	ErrStore                   // kind "store": a failed store call, for each evaluated policy
	ErrKey                     // kind "key": the policy found no key
	ErrCost                    // kind "cost": the request's cost for the policy is out of range
)

// NumSeries is the number of Series, for arrays indexed by them.
const NumSeries = int(ErrCost) + 1

var labels = [NumSeries]string{"allowed", "denied", "shadow_denied", "abandoned", "store", "key", "cost"}

// Label returns the value of s's label: its outcome, or its error kind.
func (s Series) Label() string { return labels[s] }

// IsError reports whether s is a kind of the errors counter, not an
// outcome of the requests counter.
func (s Series) IsError() bool { return s >= ErrStore }

// Policies caches a value P per policy name, an adapter's metrics of the
// policy, built once by the New function given to [NewPolicies]: looking
// a cached policy up takes no lock and allocates nothing. It also keeps
// the limits of each policy as each [Owner] (each middleware observed)
// last reported them, and tells which limits each name reports: those
// reported last among the owners that have the name. It is safe for
// concurrent use.
type Policies[P any] struct {
	build func(name string) P

	mu     sync.Mutex // serialises writers of cache, and guards limits, seq and the Owners' names
	cache  atomic.Pointer[map[string]P]
	limits map[string]*named[P]
	seq    uint64 // of the last report
}

// An Owner is one middleware an adapter observes, as the limit gauges
// tell them apart: the limits and windows it reported per policy name,
// kept until it removes the name or is closed. The zero value is ready
// to use; an Owner belongs to one Policies.
type Owner struct {
	names   map[string]bool          // guarded by the Policies' mu
	windows map[string]time.Duration // guarded by the Policies' mu
}

// named holds what the owners of a policy name reported.
type named[P any] struct {
	policy  P
	reports []reported
}

// A Member is what an adapter keeps of one middleware it observes
// through an observer of its own: the limits it reported (Owner, of the
// adapter's Policies) and the failure State transitions it made (States,
// counted in the adapter's States too), so that both can be taken out of
// the adapter's gauges when the middleware is closed, or gone without
// Close. The zero value is ready to use.
type Member struct {
	Owner  Owner
	States States
}

// A reported is the limits an owner reported last for a name, and the
// window they count in (0 while not known).
type reported struct {
	owner             *Owner
	limit, configured int64
	window            time.Duration
	seq               uint64
}

// same reports whether r and o report the same limits and window.
func (r reported) same(o reported) bool {
	return r.limit == o.limit && r.configured == o.configured && r.window == o.window
}

// Limits are the limits a policy name reports.
type Limits[P any] struct {
	Name              string
	Policy            P // the policy's value, as Get returned it when its first owner reported it
	Limit, Configured int64
	// Window is the policy's window (algorithms.Spec.Window): Limit and
	// Configured count requests per Window. It is 0 while not known: an
	// owner that reported the limits but not the window (SetWindow; the
	// middleware tells it to a middleware.PolicyObserver).
	Window time.Duration
}

// limitsOf returns the Limits r reports for the name of n.
func limitsOf[P any](name string, n *named[P], r reported) Limits[P] {
	return Limits[P]{Name: name, Policy: n.policy, Limit: r.limit, Configured: r.configured, Window: r.window}
}

// NewPolicies returns an empty Policies whose values build makes. build
// is called at most once per name until the name is forgotten, with the
// cache's lock held: it must not call the Policies.
func NewPolicies[P any](build func(name string) P) *Policies[P] {
	return &Policies[P]{build: build, limits: make(map[string]*named[P])}
}

// Get returns the value of the policy named name, built at its first
// call.
func (ps *Policies[P]) Get(name string) P {
	if mp := ps.cache.Load(); mp != nil {
		if c, ok := (*mp)[name]; ok {
			return c
		}
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.getLocked(name)
}

// getLocked is Get; it requires that ps.mu is held.
func (ps *Policies[P]) getLocked(name string) P {
	old := ps.cache.Load()
	if old != nil {
		if c, ok := (*old)[name]; ok {
			return c
		}
	}
	c := ps.build(name)
	mp := make(map[string]P, 1+lenOf(old))
	if old != nil {
		for k, v := range *old {
			mp[k] = v
		}
	}
	mp[name] = c
	ps.cache.Store(&mp)
	return c
}

func lenOf[P any](m *map[string]P) int {
	if m == nil {
		return 0
	}
	return len(*m)
}

// A Report is told what a policy name reports after a change of its
// limits: ok true with its limits, or ok false when no owner has the name
// any more (its gauges are to go). It is called with the Policies' lock
// held, in the order of the changes: it must not call the Policies.
type Report[P any] func(l Limits[P], ok bool)

// SetLimits records the limits o reports for the policy named name, and
// builds its value if it is not. They are the name's limits from now on
// (the last report wins among its owners), in the window o reported for
// the name (SetWindow; 0 if none); report, unless nil, is told them if
// they changed.
func (ps *Policies[P]) SetLimits(o *Owner, name string, limit, configured int64, report Report[P]) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	n := ps.limits[name]
	if n == nil {
		n = &named[P]{policy: ps.getLocked(name)}
		ps.limits[name] = n
	}
	if o.names == nil {
		o.names = make(map[string]bool)
	}
	o.names[name] = true
	ps.reportLocked(o, name, n, reported{owner: o, limit: limit, configured: configured, window: o.windows[name]}, report)
}

// SetWindow records the window o reports for the policy named name (the
// Window of its algorithms.Spec, which a middleware.PolicyObserver is
// told before the policy's limits). If o has reported the name's limits,
// the window is theirs from now on, and they are the name's (the last
// report wins among its owners, as by SetLimits); report, unless nil, is
// told them if they changed. Else the window waits for o's SetLimits of
// the name, which reports it with the limits.
func (ps *Policies[P]) SetWindow(o *Owner, name string, window time.Duration, report Report[P]) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if o.windows == nil {
		o.windows = make(map[string]time.Duration)
	}
	o.windows[name] = window
	n := ps.limits[name]
	if n == nil {
		return
	}
	i := n.index(o)
	if i < 0 {
		return
	}
	r := n.reports[i]
	r.window = window
	ps.reportLocked(o, name, n, r, report)
}

// reportLocked makes r, with a new seq, o's report for the name of n,
// and tells report the name's limits if they changed. It requires that
// ps.mu is held.
func (ps *Policies[P]) reportLocked(o *Owner, name string, n *named[P], r reported, report Report[P]) {
	before, had := n.current()
	ps.seq++
	r.seq = ps.seq
	if i := n.index(o); i >= 0 {
		n.reports[i] = r
	} else {
		n.reports = append(n.reports, r)
	}
	if report != nil && (!had || !before.same(r)) {
		report(limitsOf(name, n, r), true)
	}
}

// RemoveLimits forgets the limits and window o reported for the policy
// named name (o no longer has the policy). The name reports those its
// other owners reported, the last report winning; report, unless nil, is
// told them if they changed, or ok false if no owner has the name any
// more: the name is then forgotten, its cached value too (a later Get
// builds a new one).
func (ps *Policies[P]) RemoveLimits(o *Owner, name string, report Report[P]) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.removeLocked(o, name, report)
}

// CloseOwner forgets every limit and window o reported, as RemoveLimits
// does for each of its names, in the order of the names: o is a
// middleware that was closed. An Owner reporting limits again after
// CloseOwner has them again.
func (ps *Policies[P]) CloseOwner(o *Owner, report Report[P]) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, name := range slices.Sorted(maps.Keys(o.names)) {
		ps.removeLocked(o, name, report)
	}
	clear(o.windows)
}

// removeLocked is RemoveLimits; it requires that ps.mu is held.
func (ps *Policies[P]) removeLocked(o *Owner, name string, report Report[P]) {
	delete(o.names, name)
	delete(o.windows, name)
	n := ps.limits[name]
	if n == nil {
		return
	}
	i := n.index(o)
	if i < 0 {
		return
	}
	before, _ := n.current()
	n.reports = slices.Delete(n.reports, i, i+1)
	after, ok := n.current()
	if !ok {
		delete(ps.limits, name)
		ps.forgetLocked(name)
	}
	if report != nil && (!ok || !after.same(before)) {
		report(limitsOf(name, n, after), ok)
	}
}

// forgetLocked drops the cached value of name; it requires that ps.mu is
// held.
func (ps *Policies[P]) forgetLocked(name string) {
	old := ps.cache.Load()
	if old == nil {
		return
	}
	if _, ok := (*old)[name]; !ok {
		return
	}
	mp := make(map[string]P, len(*old)-1)
	for k, v := range *old {
		if k != name {
			mp[k] = v
		}
	}
	ps.cache.Store(&mp)
}

// index returns the index of o's report, or -1.
func (n *named[P]) index(o *Owner) int {
	return slices.IndexFunc(n.reports, func(r reported) bool { return r.owner == o })
}

// current returns the report made last, and false if there is none.
func (n *named[P]) current() (reported, bool) {
	if len(n.reports) == 0 {
		return reported{}, false
	}
	return slices.MaxFunc(n.reports, func(a, b reported) int { return cmp.Compare(a.seq, b.seq) }), true
}

// AppendLimits appends the limits every policy name that has them reports
// to dst, in the order of the names, and returns it. A nil dst is given
// room for them all. The order is stable so that an SDK keeping a bounded
// number of series per instrument (an OpenTelemetry cardinality limit:
// the first sets observed keep theirs, later ones share an overflow
// series) keeps the same policies' series at every collection.
func (ps *Policies[P]) AppendLimits(dst []Limits[P]) []Limits[P] {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if dst == nil {
		dst = make([]Limits[P], 0, len(ps.limits))
	}
	for _, name := range slices.Sorted(maps.Keys(ps.limits)) {
		n := ps.limits[name]
		r, _ := n.current()
		dst = append(dst, limitsOf(name, n, r))
	}
	return dst
}

// Count calls add with the value (Get) of each policy a request counts
// under, once for each series it counts, as both adapters count them:
//   - a request whose policies could not be prepared (Result not taken,
//     Result.Err a *policy.KeyError or *policy.CostError) counts ErrKey
//     under the policy the KeyError names, or ErrCost under each policy
//     the CostError names (its Policy and Others), and nothing more, but for
//     a shadowed store failure (ShadowDenied with another error), counted
//     as below;
//   - a failed store call (the fallback store decided, or Result.Err is
//     set without it: no decision was taken, or the middleware refused
//     the decisions taken, such as a Delay their policy cannot give; the
//     request not abandoned) counts ErrStore under each evaluated policy;
//     decisions the middleware refused count no outcome. Abandoned here
//     is reported Abandoned, or ShadowDenied with its context ended:
//     shadow mode serves the request the middleware would otherwise
//     report Abandoned (it tells them apart by the context, as the
//     middleware does); the call ended with the request's context, not
//     by a fault of the store's backend, unless the middleware counted it
//     as one (Result.StoreFailed: a deadline that gave the backend every
//     chance ran out), which an Abandoned request counts as ErrStore too;
//   - a request with decisions counts Allowed under each evaluated policy
//     when admitted, but for a policy that a middleware further out
//     counted the request under as a request of that policy
//     ([middleware.Event.CountedFurtherOut]: a copy lowered here by
//     SetLimit or a reload), which counted it Allowed there, so that a
//     request passing nested middlewares counts once under the policy
//     whether or not its limit is lowered further in; and Denied or
//     ShadowDenied under each policy that denied it;
//   - an Abandoned request (not served: its context ended before the
//     decision or during a leaky_queue hold, or its deadline comes before
//     the end of its Delay) counts Abandoned under each evaluated policy,
//     whether or not it was decided, and no other outcome, but for a
//     policy a middleware further out counted the request under
//     (CountedFurtherOut, as above), which counted it Allowed there: it
//     counts nothing more under it, as when that policy, not lowered
//     further in, is left out there, so that a request counts once under
//     the policy (its store errors count, as for Allowed). Shadow mode
//     serves the request it would report Abandoned, as ShadowDenied: that
//     one counts nothing.
//
// e.Result must not be nil. Count allocates nothing when add does not
// and every policy is cached.
func (ps *Policies[P]) Count(e middleware.Event, add func(p P, s Series)) {
	res := e.Result
	switch e.Outcome {
	case middleware.KeyRejected, middleware.Denied, middleware.ShadowDenied:
		if !res.Taken() && res.Err() != nil {
			// Prepare failed: a missing key or a cost out of range.
			// (errors.AsType, not errors.As, whose targets would escape:
			// two allocations per request.)
			ke, isKey := errors.AsType[*policy.KeyError](res.Err())
			ce, isCost := errors.AsType[*policy.CostError](res.Err())
			switch {
			case isKey:
				add(ps.Get(ke.Policy.Name()), ErrKey)
			case isCost:
				for p := range ce.All() {
					add(ps.Get(p.Name()), ErrCost)
				}
			}
			if e.Outcome == middleware.ShadowDenied && !isKey && !isCost {
				if e.Request != nil && e.Request.Context().Err() != nil && !res.StoreFailed() {
					// Its client went away (or its deadline ran out)
					// during the store call: Abandoned but for shadow
					// mode, not a store failure (unless the middleware
					// counted it as one, as for Abandoned below).
					return
				}
				break // shadowed store failure: counted below
			}
			return
		}
	}
	// The store call failed: with no decision, or with decisions the
	// middleware refused (a Delay their policy cannot give), which
	// decided nothing. Err is also set when the fallback store decided:
	// its decisions count.
	failed := res.Err() != nil && !res.Fallback()
	storeErr := res.Fallback() || failed && (e.Outcome != middleware.Abandoned || res.StoreFailed())
	decided := res.Taken() && !failed
	for i := 0; i < res.Len(); i++ {
		c := ps.Get(res.Policy(i).Name())
		if storeErr {
			add(c, ErrStore)
		}
		if e.Outcome == middleware.Abandoned {
			if !e.CountedFurtherOut(i) {
				add(c, Abandoned)
			}
			continue
		}
		if !decided {
			continue
		}
		switch e.Outcome {
		case middleware.Allowed:
			if !e.CountedFurtherOut(i) {
				add(c, Allowed)
			}
		case middleware.Denied:
			if e.DeniedBy(i) {
				add(c, Denied)
			}
		case middleware.ShadowDenied:
			if e.DeniedBy(i) {
				add(c, ShadowDenied)
			}
		}
	}
}

// A Hold is how the hold of a request a leaky_queue held ended: the
// outcome label of the hold histogram, valued as the requests counter
// labels the same outcomes, so that the two join on it.
type Hold uint8

// The ends of a hold, in the order the adapters create their series.
const (
	HoldAllowed   Hold = iota // outcome "allowed": the hold ran its course and the request was served
	HoldAbandoned             // outcome "abandoned": the hold was cut short (its client gone, its deadline run out); not served
)

// NumHolds is the number of Holds, for arrays indexed by them.
const NumHolds = int(HoldAbandoned) + 1

// Label returns the value of h's outcome label.
func (h Hold) Label() string {
	if h == HoldAbandoned {
		return Abandoned.Label()
	}
	return Allowed.Label()
}

// Holds calls observe with the hold of e, a request the middleware held
// for its turn in a leaky_queue ([middleware.Event.Held]), once under
// each policy of e.Result whose decision had a Delay (a leaky_queue that
// queued it; the middleware refuses a Delay of any other kind), with the
// policy's name, how the hold ended, and the seconds that policy's queue
// held it: the smaller of its Delay and the time held. The request was
// held for the longest Delay of its policies; one queued by two queues
// counts under the shorter one only that queue's Delay, the longer one
// having held it the rest. A hold cut short (Abandoned) counts the time
// held until then under each queue whose Delay it had not reached.
//
// A request not held (Event.Held's ok false: no Delay, shadow mode, or
// refused at once because its deadline comes before its turn) observes
// nothing, nor does an Event without a taken Result. Holds allocates
// nothing when observe does not.
func Holds(e middleware.Event, observe func(policy string, h Hold, seconds float64)) {
	held, ok := e.Held()
	res := e.Result
	if !ok || res == nil || !res.Taken() {
		return
	}
	var h Hold
	switch e.Outcome {
	case middleware.Allowed:
		h = HoldAllowed
	case middleware.Abandoned:
		h = HoldAbandoned
	default: // no other outcome follows a hold
		return
	}
	for i := 0; i < res.Len(); i++ {
		if d := res.Decision(i).Delay; d > 0 {
			observe(res.Policy(i).Name(), h, max(min(d, held), 0).Seconds())
		}
	}
}

// StateValues are the failure_state gauges, indexed by [middleware.State]:
// 1 for each failure state an observed middleware is in, and for
// StateHealthy when none is failing; else 0.
type StateValues [len(middleware.States)]int64

// States counts the failure state transitions reported to an adapter, so
// that its gauges hold for one adapter observing several middlewares (one
// failing closed while another recovers is not healthy) and whatever the
// order in which concurrent requests report the transitions they made.
// The zero value is every middleware healthy. It is safe for concurrent
// use.
type States struct {
	mu sync.Mutex
	// failing counts, per State, the transitions into it less those out
	// of it (healthy not counted): the middlewares in that state, once
	// every transition made has been reported. It may be negative while
	// a transition made earlier has not been reported yet.
	failing [len(middleware.States)]int64
}

// Transition counts the transition from → to and then, unless report is
// nil, calls it with the gauges' values, the lock still held: reports
// are made in the order of the transitions counted.
func (st *States) Transition(from, to middleware.State, report func(StateValues)) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if from != middleware.StateHealthy && int(from) < len(st.failing) {
		st.failing[from]--
	}
	if to != middleware.StateHealthy && int(to) < len(st.failing) {
		st.failing[to]++
	}
	if report != nil {
		report(st.valuesLocked())
	}
}

// Subtract takes out of st the transitions counted in other (those of
// some of the middlewares st counts, counted in other too), as if those
// middlewares had all returned to healthy, and then, unless report is
// nil, calls it with the gauges' values, the lock still held. other must
// not be st.
func (st *States) Subtract(other *States, report func(StateValues)) {
	other.mu.Lock()
	counted := other.failing
	other.mu.Unlock()
	st.mu.Lock()
	defer st.mu.Unlock()
	for s, n := range counted {
		st.failing[s] -= n
	}
	if report != nil {
		report(st.valuesLocked())
	}
}

// Values returns the gauges' values.
func (st *States) Values() StateValues {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.valuesLocked()
}

func (st *States) valuesLocked() StateValues {
	var v StateValues
	v[middleware.StateHealthy] = 1
	for _, s := range middleware.States {
		if s != middleware.StateHealthy && st.failing[s] > 0 {
			v[s], v[middleware.StateHealthy] = 1, 0
		}
	}
	return v
}
