// Package prommetrics exports what a rate-limiting middleware does as
// Prometheus metrics. It is an adapter: package middleware defines the
// [middleware.Observer] interface and imports no metrics library; this
// package implements it with github.com/prometheus/client_golang.
//
//	metrics, err := prommetrics.New(prometheus.DefaultRegisterer)
//	...
//	m, err := middleware.New(store, policies, middleware.WithObserver(metrics))
//
// The metrics, with the default namespace "ratekeeper":
//
//	ratekeeper_requests_total{policy,outcome}  counter: outcome "allowed" (each evaluated
//	                                           policy of a request its decisions admitted
//	                                           and that was passed on, a held one when its
//	                                           leaky_queue hold ended), "denied" and
//	                                           "shadow_denied" (each policy that denied it),
//	                                           "abandoned" (each evaluated policy of a request
//	                                           not served, its context over: its client gone
//	                                           before the decision or during the hold, or its
//	                                           deadline sooner than the end of its Delay, a
//	                                           503; shadow mode serves such a request and
//	                                           counts it nowhere); a request let through or
//	                                           refused without a decision, as the store
//	                                           failed (failing open or closed), counts only
//	                                           in errors_total
//	ratekeeper_errors_total{policy,kind}       counter: kind "store" (a request whose store
//	                                           call failed, answered with decisions the
//	                                           middleware refused, such as a Delay their
//	                                           policy cannot give, or that the circuit breaker
//	                                           kept from the store: each evaluated policy; not a
//	                                           failed refund or give-back, which only
//	                                           Stats.StoreErrors counts, nor a request whose
//	                                           context ended first, shadowed or not), "key"
//	                                           (no key), "cost" (under each policy whose
//	                                           range the request's cost is out of)
//	ratekeeper_decision_seconds                histogram: time to decide (keys and store call)
//	ratekeeper_hold_seconds{policy,outcome}    histogram: time a leaky_queue held a request for
//	                                           its turn, once per held request under each
//	                                           policy whose decision had a Delay: that Delay,
//	                                           or the time held when the hold was cut short;
//	                                           outcome "allowed" (served after the hold) or
//	                                           "abandoned" (its client gone or its deadline
//	                                           run out during the hold); a request not held
//	                                           (no Delay, shadow mode, refused at once as its
//	                                           deadline comes before its turn) observes
//	                                           nothing
//	ratekeeper_failure_state{state}            gauge: 1 for each failure state (open, closed,
//	                                           fallback) an observed middleware is in, and
//	                                           for healthy when none is failing; else 0
//	ratekeeper_effective_limit{policy}         gauge: the limit enforced (adaptive, fleet)
//	ratekeeper_configured_limit{policy}        gauge: the limit configured
//	ratekeeper_limit_window_seconds{policy}    gauge: the window both limits count requests
//	                                           in (algorithms.Spec.Window; see Limits)
//	ratekeeper_given_back_total{policy}        counter: admitted requests whose units went
//	                                           back to the store, their responses not
//	                                           counting under the policy (policy.CountIf)
//
// The series of a policy's requests_total and errors_total are reported
// from the moment the middleware reports the policy (its limit, when the
// rule set is built), at zero: a dashboard or an alert on denials reads 0,
// not an absent series. given_back_total has a series once a request was
// given back, and hold_seconds a series of a policy and outcome once a
// hold of that outcome was observed under the policy: only leaky_queue
// policies have them (the middleware does not tell which policies are
// queues before their first hold, and every other policy would add a
// histogram for ever empty).
//
// Recording a request does not allocate: the counters of each policy are
// looked up once and cached, and so are its hold series once created.
//
// The failure_state gauges count the transitions the middlewares report,
// so that they hold for one Metrics observing several middlewares (one
// failing closed while another recovers is not healthy) and whatever the
// order in which concurrent requests report the transitions they made. A
// middleware closed ([middleware.Middleware.Close]) is counted out of
// them: one an application discards for a middleware rebuilt from a new
// configuration leaves behind no State its store failed into.
//
// # Several middlewares
//
// Share one Metrics among any number of middlewares: each is kept apart.
// A Metrics is a [middleware.SharedObserver]: [middleware.WithObserver]
// gives each middleware built its own observer of it
// ([Metrics.ForMiddleware]). The counters, histograms and failure_state
// add the middlewares up, but for a policy that nested middlewares share:
// a request counts once under it, allowed by the middleware that counted
// its units, whether the one further in leaves the policy out (given to
// both as it is) or judges that count at a limit it lowered
// ([middleware.Middleware.SetLimit], a reload: see
// [middleware.Event.CountedFurtherOut]); a request that lowered copy
// refuses counts denied too. (A leaky_queue's lowered copy holds the
// request again, in a queue of its own, and counts it again.) The limit
// gauges, per policy name, report the limits reported last among the
// live middlewares that have the policy.
// One middleware closed, or reloaded without the policy, leaves the name
// to the others, at their limits, and the series go when none has it; one
// dropped without Close is counted out alike (of failure_state too) once
// the garbage collector finds it unreachable. An application that
// rebuilds its middleware (a change [middleware.Middleware.ApplyConfig]
// cannot make in place) and closes the old one thus reports the new one's
// limits alone:
//
//	old, err := middleware.New(store, policies, middleware.WithObserver(metrics))
//	...
//	m, err := middleware.New(store, rebuilt, middleware.WithObserver(metrics))
//	... // serve m
//	old.Close() // the gauges of a policy only old had go; m's stay
//
// (A Metrics inside an observer of the application's, which WithObserver
// does not ask for a ForMiddleware, cannot tell the middlewares apart:
// give the wrapper a ForMiddleware that wraps the Metrics'.)
//
// # Limits
//
// A limit is requests per window: limit_window_seconds gives each
// policy's, so that its rate per second, comparable between policies, is
//
//	ratekeeper_effective_limit / ratekeeper_limit_window_seconds
//
// (a token_bucket or leaky_bucket refills, a leaky_queue spaces, Limit
// per Window). It is a gauge of its own, not a label of the limits, so
// that a reload changing a window changes a value, not the series of the
// limits. The middleware tells each policy's window
// ([middleware.PolicyObserver]) with its limits: when it is built, before
// any request, and at a reload that brings the policy or changes its
// window (its limits unchanged or not). Like the limits, the gauge
// reports the middleware that reported the policy last, its limits and
// window together. An observer of the application's that forwards
// ObserveLimit but not ObservePolicy to the Metrics leaves the policy
// without the gauge.
//
// # Removed policies
//
// When a reload drops a policy ([middleware.Middleware.SetPolicies], or
// [middleware.Middleware.ApplyConfig], which package policy/reload calls),
// its effective_limit, configured_limit and limit_window_seconds series
// are deleted (unless another middleware this Metrics observes has the
// policy): they would state a limit no longer enforced.
// Its counters (requests_total, errors_total, given_back_total) and its
// hold_seconds histogram stay, at their last values, for the life of the Metrics: a counter must not go
// back, and one deleted would lose its increments since the last scrape
// (and read as a reset if the policy came back). A series that no longer
// moves adds 0 to every rate() and increase(); a reload that brings the
// policy back resumes its counters where they were, and reports its
// limits again.
//
// # Holds
//
// hold_seconds is the latency a leaky_queue adds to the requests it shapes
// (decision_seconds leaves it out). A request queued by two queues is
// held for the longer Delay, and each counts its own Delay: a policy's
// holds never exceed its MaxDelay. The outcome label keeps the two
// populations apart, as an operator needs them: "allowed" is the delay
// served requests saw (the quantiles to hold against an SLO, and to size
// MaxDelay by), "abandoned" how long clients waited before they gave up (a
// MaxDelay longer than the clients' timeouts shows as abandoned holds
// bunched at those timeouts); mixed, a wave of clients giving up at 2 s
// would pull the served requests' quantiles down. Its values are those of
// requests_total's outcome, so that the two divide: the share of a
// policy's served requests that it held is
//
//	sum by (policy) (rate(ratekeeper_hold_seconds_count{outcome="allowed"}[5m]))
//	  / sum by (policy) (rate(ratekeeper_requests_total{outcome="allowed"}[5m]))
//
// The labels stay bounded: policy names, two outcomes. The buckets
// ([DefaultHoldBuckets], [WithHoldBuckets]) run from 1ms to 60s.
package prommetrics

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/errlist"
	"github.com/ratekeeper/ratekeeper/internal/nilness"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metricset"
)

// A Metrics is a [middleware.Observer] recording Prometheus metrics. Build
// one per registry with [New] and pass it to any number of middlewares
// (one rebuilt from a new configuration too): each is kept apart, as a
// [middleware.SharedObserver] (see Several middlewares in the package
// doc). They add up in its counters and histograms; failure_state is 1
// for every state one of them is in; a policy name that several have
// reports the limits set last. To tell them apart in every metric, build
// one Metrics per middleware on the same registry, with
// [WithConstLabels]. It is safe for concurrent use.
type Metrics struct {
	requests   *prometheus.CounterVec
	errs       *prometheus.CounterVec
	latency    prometheus.Histogram
	hold       *prometheus.HistogramVec
	state      *prometheus.GaugeVec
	limit      *prometheus.GaugeVec
	configured *prometheus.GaugeVec
	window     *prometheus.GaugeVec
	givenBack  *prometheus.CounterVec

	// policies caches the counters of each policy, and keeps the limits
	// each middleware reported (a Binding's: those reported to it; own:
	// those reported to the Metrics itself, which a middleware does not,
	// WithObserver giving it a Binding).
	policies *metricset.Policies[*counters]
	own      metricset.Owner
	// holds caches the hold series of each policy, per outcome, created
	// at the policy's first hold of that outcome.
	holds  [metricset.NumHolds]*metricset.Policies[prometheus.Observer]
	states metricset.States
}

// counters are the metrics of one policy, per series.
type counters [metricset.NumSeries]prometheus.Counter

type options struct {
	namespace   string
	labels      prometheus.Labels
	buckets     []float64
	holdBuckets []float64
}

// An Option configures a Metrics.
type Option func(*options) error

// WithNamespace sets the metric name prefix (default "ratekeeper").
func WithNamespace(ns string) Option {
	return func(o *options) error {
		if ns == "" {
			return errors.New("prommetrics: WithNamespace: namespace is empty")
		}
		o.namespace = ns
		return nil
	}
}

// WithConstLabels adds labels to every metric, such as
// {"limiter": "public-api"} for one of several middlewares. Several
// WithConstLabels add up (a base list of options and a limiter's own may
// each give some): a name given in two is an error. The label
// "le" is the histograms' bucket label and an error. So
// are the labels of the metrics themselves (policy, outcome, kind,
// state) and a name the Prometheus client refuses (model.LabelName's
// rules, and no "__" prefix): the error names the first such name in
// lexical order.
func WithConstLabels(labels prometheus.Labels) Option {
	return func(o *options) error {
		// Checked here, in order: the client checks them in the order
		// of the map, so its error named any of several invalid names.
		for _, name := range slices.Sorted(maps.Keys(labels)) {
			if name == "le" {
				// The Prometheus client panics on it when the histogram is built.
				return errors.New(`prommetrics: WithConstLabels: "le" is the bucket label of the histograms (decision_seconds, hold_seconds)`)
			}
			if !model.LabelName(name).IsValid() || strings.HasPrefix(name, "__") {
				return fmt.Errorf("prommetrics: WithConstLabels: %q is not a valid label name", name)
			}
			if slices.Contains(ownLabels, name) {
				return fmt.Errorf("prommetrics: WithConstLabels: %q is a label of the metrics (%s)", name, strings.Join(ownLabels, ", "))
			}
			if _, ok := o.labels[name]; ok {
				return fmt.Errorf("prommetrics: WithConstLabels: %q given twice (WithConstLabels add up)", name)
			}
		}
		// A copy, with the labels of the WithConstLabels given before: the
		// caller's map is not kept, nor changed.
		all := make(prometheus.Labels, len(o.labels)+len(labels))
		maps.Copy(all, o.labels)
		maps.Copy(all, labels)
		o.labels = all
		return nil
	}
}

// ownLabels are the labels of the metrics, which WithConstLabels may not
// use.
var ownLabels = []string{"policy", "outcome", "kind", "state"}

// WithBuckets sets the upper bounds of the buckets of the decision
// latency histogram, in seconds, in increasing order; the default runs
// from 1µs (a decision on the memory store) to 1s (a Redis round trip is
// typically under a millisecond).
func WithBuckets(buckets ...float64) Option {
	return func(o *options) error { return bucketRule.Given("WithBuckets", &o.buckets, buckets) }
}

// WithHoldBuckets sets the upper bounds of the buckets of the hold
// histogram (hold_seconds), in seconds, in increasing order; the default
// ([DefaultHoldBuckets]) runs from 1ms to 60s. Bounds past the longest
// MaxDelay of the leaky_queue policies observed count nothing but in
// +Inf: a queue holding at most 2 s is read best with bounds up to 2.
func WithHoldBuckets(buckets ...float64) Option {
	return func(o *options) error { return bucketRule.Given("WithHoldBuckets", &o.holdBuckets, buckets) }
}

// bucketRule rejects buckets no histogram can have: none, a NaN, or
// bounds that do not increase.
var bucketRule = metricset.BucketRule{Prefix: "prommetrics", Invalid: func(b float64) string {
	if math.IsNaN(b) {
		return "a bucket is NaN"
	}
	return ""
}}

// DefaultBuckets are the decision latency buckets, in seconds: 1µs,
// 2.5µs, 5µs, 10µs, 25µs, 50µs, 100µs, 250µs, 500µs, 1ms, 2.5ms, 5ms,
// 10ms, 25ms, 50ms, 100ms, 250ms, 500ms and 1s. [New] reads them when no [WithBuckets] is
// given, and keeps a copy.
var DefaultBuckets = metricset.DefaultBuckets()

// DefaultHoldBuckets are the hold buckets, in seconds: 1ms, 2.5ms, 5ms,
// 10ms, 25ms, 50ms, 100ms, 250ms, 500ms, 1s, 2.5s, 5s, 10s, 30s and 60s.
// A leaky_queue holds a request for whole queue spacings (Window/Limit:
// 1ms for a thousand a second) up to its MaxDelay, commonly seconds and
// seldom past a minute; a longer hold counts in +Inf. [New] reads them
// when no [WithHoldBuckets] is given, and keeps a copy.
var DefaultHoldBuckets = metricset.DefaultHoldBuckets()

// New returns a Metrics registered with reg (nil: not registered, for
// callers that register it themselves as a prometheus.Collector; its
// names are checked all the same). A nil pointer in reg (a
// *prometheus.Registry never assigned) is an error.
func New(reg prometheus.Registerer, opts ...Option) (*Metrics, error) {
	o := options{namespace: "ratekeeper"}
	// Every refused option is reported, one per line.
	var errs []error
	for i, opt := range opts {
		if opt == nil {
			errs = append(errs, fmt.Errorf("prommetrics: Options hold a nil Option at index %d", i))
		} else if err := opt(&o); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errlist.Join(errs); err != nil {
		return nil, err
	}
	// The histogram keeps the slice it is given: a copy of
	// DefaultBuckets, so that DefaultBuckets edited later changes nothing
	// here.
	if err := bucketRule.Resolve("DefaultBuckets", &o.buckets, DefaultBuckets); err != nil {
		return nil, err
	}
	if err := bucketRule.Resolve("DefaultHoldBuckets", &o.holdBuckets, DefaultHoldBuckets); err != nil {
		return nil, err
	}
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: o.namespace, Name: "requests_total",
			Help: "Requests decided, per policy and outcome (allowed, denied, shadow_denied, abandoned).", ConstLabels: o.labels},
			[]string{"policy", "outcome"}),
		errs: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: o.namespace, Name: "errors_total",
			Help: "Failures per policy and kind (store, key, cost).", ConstLabels: o.labels},
			[]string{"policy", "kind"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: o.namespace, Name: "decision_seconds",
			Help: "Time to decide a request: key extraction and the store call.", Buckets: o.buckets, ConstLabels: o.labels}),
		hold: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: o.namespace, Name: "hold_seconds",
			Help:    "Time a request was held for its turn by a leaky_queue policy, per policy and outcome (allowed: served after the hold; abandoned: the hold cut short).",
			Buckets: o.holdBuckets, ConstLabels: o.labels},
			[]string{"policy", "outcome"}),
		state: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: o.namespace, Name: "failure_state",
			Help: "1 for each failure state (open, closed, fallback) an observed middleware is in; healthy is 1 when none is failing.", ConstLabels: o.labels},
			[]string{"state"}),
		limit: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: o.namespace, Name: "effective_limit",
			Help: "The limit enforced per policy, after adaptive and fleet adjustments.", ConstLabels: o.labels},
			[]string{"policy"}),
		configured: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: o.namespace, Name: "configured_limit",
			Help: "The limit configured per policy.", ConstLabels: o.labels},
			[]string{"policy"}),
		window: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: o.namespace, Name: "limit_window_seconds",
			Help: "The window of the limits per policy: effective_limit and configured_limit count requests per this many seconds.", ConstLabels: o.labels},
			[]string{"policy"}),
		givenBack: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: o.namespace, Name: "given_back_total",
			Help: "Admitted requests whose units went back to the store, per policy, their responses not counting under it (policy.CountIf).", ConstLabels: o.labels},
			[]string{"policy"}),
	}
	m.policies = metricset.NewPolicies(m.newCounters)
	for h := range metricset.Hold(metricset.NumHolds) {
		m.holds[h] = metricset.NewPolicies(func(name string) prometheus.Observer {
			return m.hold.WithLabelValues(name, h.Label())
		})
	}
	for _, s := range middleware.States {
		m.state.WithLabelValues(s.String()).Set(0)
	}
	m.state.WithLabelValues(middleware.StateHealthy.String()).Set(1)
	if reg != nil && nilness.Is(reg) {
		// A pointer never assigned (a nil *prometheus.Registry) is not
		// the nil that means "not registered": Register would panic on it.
		return nil, fmt.Errorf("prommetrics: New: the Registerer is a nil %T (pass nil, not a nil pointer, not to register)", reg)
	}
	// Checked first on a registry of its own, as a registry checks it: an
	// invalid namespace or constant label is New's error, not one of
	// every later registration or scrape; and an error of reg then comes
	// of what reg already holds.
	if err := prometheus.NewRegistry().Register(m); err != nil {
		return nil, fmt.Errorf("prommetrics: registering the metrics of namespace %q: %w", o.namespace, err)
	}
	if reg == nil {
		return m, nil
	}
	if err := reg.Register(m); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			return nil, fmt.Errorf("prommetrics: metrics of namespace %q with these constant labels are already registered with this registry: share one Metrics between the middlewares, or give each its own WithConstLabels (the same label names, other values): %w", o.namespace, err)
		}
		// Not typed: a clash with what reg holds, or a label a wrapping
		// Registerer adds (prometheus.WrapRegistererWith).
		return nil, fmt.Errorf("prommetrics: registering the metrics of namespace %q: %w (if this registry holds a metric of one of these names, from another Metrics with other WithConstLabels label names or from another library, give every Metrics on one registry the same constant label names, or this one another WithNamespace)", o.namespace, err)
	}
	return m, nil
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m.collectors() {
		c.Describe(ch)
	}
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	for _, c := range m.collectors() {
		c.Collect(ch)
	}
}

func (m *Metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.requests, m.errs, m.latency, m.hold, m.state, m.limit, m.configured, m.window, m.givenBack}
}

// newCounters returns the counters of the policy named name, creating
// its series (at zero).
func (m *Metrics) newCounters(name string) *counters {
	var c counters
	for s := range metricset.Series(metricset.NumSeries) {
		vec := m.requests
		if s.IsError() {
			vec = m.errs
		}
		c[s] = vec.WithLabelValues(name, s.Label())
	}
	return &c
}

// ObserveRequest implements [middleware.Observer]. An Event without a
// Result (the middleware always sets one) records its latency and counts
// nothing else, as otelmetrics does. A held request's hold
// ([middleware.Event.Held]) is observed in hold_seconds.
func (m *Metrics) ObserveRequest(e middleware.Event) {
	// A latency below zero (the middleware's clock set back during the
	// decision) counts as zero: _sum is read as a counter.
	m.latency.Observe(max(e.Latency, 0).Seconds())
	if e.Result == nil {
		return
	}
	m.policies.Count(e, func(c *counters, s metricset.Series) { c[s].Inc() })
	metricset.Holds(e, func(name string, h metricset.Hold, seconds float64) { m.holds[h].Get(name).Observe(seconds) })
}

// ObserveState implements [middleware.Observer]. One middleware reports
// its transitions in the order it makes them (under its state lock), to
// its [Metrics.ForMiddleware], which passes them on here. Counting the
// transitions, rather than taking the last report for the state, keeps
// the several middlewares one Metrics may observe apart (one failing
// while another is healthy), and ends in the state made last even for an
// observer told out of order.
func (m *Metrics) ObserveState(from, to middleware.State) {
	m.states.Transition(from, to, m.setStates)
}

// ObserveClose implements [middleware.CloseObserver]: a middleware closed
// in State last is counted out of the failure_state gauges, as if it had
// returned to healthy. A middleware given m tells its own
// [Metrics.ForMiddleware] instead, which also takes its limits out of the
// limit gauges; called on m itself, which cannot tell whose limits it was
// told, ObserveClose leaves them.
func (m *Metrics) ObserveClose(last middleware.State) {
	m.states.Transition(last, middleware.StateHealthy, m.setStates)
}

// setStates sets the failure_state gauges to v, the failure states first.
func (m *Metrics) setStates(v metricset.StateValues) {
	for _, s := range middleware.States {
		if s != middleware.StateHealthy {
			m.state.WithLabelValues(s.String()).Set(float64(v[s]))
		}
	}
	m.state.WithLabelValues(middleware.StateHealthy.String()).Set(float64(v[middleware.StateHealthy]))
}

// ObserveLimit implements [middleware.Observer]: it sets the limit
// gauges of the policy, and creates its series of requests_total and
// errors_total (at zero) if they are not, so that they are reported from
// the moment the middleware reports the policy, before its first request.
func (m *Metrics) ObserveLimit(name string, limit, configured int64) {
	m.policies.SetLimits(&m.own, name, limit, configured, m.setLimits)
}

// ObservePolicy implements [middleware.PolicyObserver]: it sets the
// limit_window_seconds gauge of the policy to the window of spec, beside
// its limit gauges (at once if the policy's limits were reported, else
// with them, which the middleware reports right after).
func (m *Metrics) ObservePolicy(name string, spec algorithms.Spec) {
	m.policies.SetWindow(&m.own, name, spec.Window, m.setLimits)
}

// ObservePolicyRemoved implements [middleware.RemovalObserver]: the
// effective and configured limit gauges of a policy that left the rule set
// are deleted (a gauge kept would report a limit no longer enforced),
// unless another middleware m observes has the policy: they report its
// limits then. Its counters and hold histogram
// stay, as counters of a past policy do.
func (m *Metrics) ObservePolicyRemoved(name string) {
	m.policies.RemoveLimits(&m.own, name, m.setLimits)
}

// setLimits sets the limit gauges of l's policy to l, or deletes them when
// ok is false; its window gauge is deleted too while its window is not
// known. It is a [metricset.Report], called in the order of the changes.
func (m *Metrics) setLimits(l metricset.Limits[*counters], ok bool) {
	if !ok {
		m.limit.DeleteLabelValues(l.Name)
		m.configured.DeleteLabelValues(l.Name)
		m.window.DeleteLabelValues(l.Name)
		return
	}
	m.limit.WithLabelValues(l.Name).Set(float64(l.Limit))
	m.configured.WithLabelValues(l.Name).Set(float64(l.Configured))
	if l.Window > 0 {
		m.window.WithLabelValues(l.Name).Set(l.Window.Seconds())
	} else {
		m.window.DeleteLabelValues(l.Name)
	}
}

// ObserveGiveBack implements [middleware.GiveBackObserver]: it counts the
// request in given_back_total under the policy.
func (m *Metrics) ObserveGiveBack(name string) {
	m.givenBack.WithLabelValues(name).Inc()
}

var (
	_ middleware.SharedObserver   = (*Metrics)(nil)
	_ middleware.RemovalObserver  = (*Metrics)(nil)
	_ middleware.PolicyObserver   = (*Metrics)(nil)
	_ middleware.GiveBackObserver = (*Metrics)(nil)
	_ middleware.CloseObserver    = (*Metrics)(nil)
	_ middleware.RemovalObserver  = (*Binding)(nil)
	_ middleware.PolicyObserver   = (*Binding)(nil)
	_ middleware.GiveBackObserver = (*Binding)(nil)
	_ middleware.CloseObserver    = (*Binding)(nil)
	_ middleware.BoundObserver    = (*Binding)(nil)
)

// A Binding is the observer of one middleware among those a Metrics
// observes: it records into the Metrics, and keeps the limits its
// middleware reports apart from the other middlewares', so that its
// middleware's Close, or a reload of it dropping a policy, removes from
// the limit gauges what it reported and nothing another middleware
// reports (see Several middlewares in the package doc).
// [middleware.WithObserver] gives each middleware its own; a Binding is
// not a [middleware.SharedObserver], so that it is not bound again. An
// application calling ForMiddleware itself gives the Binding to one
// middleware, in place of the Metrics: WithObserver refuses the two given
// to one middleware. It is safe for concurrent use.
//
// A middleware dropped without Close is counted out of the gauges
// (failure_state and the limits) as by Close once the garbage collector
// finds its Binding unreachable: the middleware is then gone (nothing can
// serve through it), and the gauges do not report it for ever, though
// they do until a collection.
type Binding struct {
	m  *Metrics
	mb *metricset.Member // apart from the Binding: the argument of its cleanup
}

// ForMiddleware returns a new observer of one middleware, a *[Binding],
// recording into m. It implements [middleware.SharedObserver]:
// [middleware.WithObserver] calls it for each middleware given m, so an
// application need not; one that does passes the result to that
// middleware alone.
func (m *Metrics) ForMiddleware() middleware.Observer {
	b := &Binding{m: m, mb: new(metricset.Member)}
	runtime.AddCleanup(b, m.forget, b.mb)
	return b
}

// BoundTo implements [middleware.BoundObserver]: it returns the Metrics b
// records into, so that [middleware.WithObserver] refuses b given to a
// middleware beside it (or beside another of its Bindings), where both
// would count each request.
func (b *Binding) BoundTo() middleware.SharedObserver { return b.m }

// forget counts mb, the middleware of a Binding, out of the gauges: out of
// failure_state as if it had returned to healthy, and out of the limit
// gauges as if it had dropped every policy.
func (m *Metrics) forget(mb *metricset.Member) {
	m.states.Subtract(&mb.States, m.setStates)
	m.policies.CloseOwner(&mb.Owner, m.setLimits)
}

// ObserveRequest implements [middleware.Observer], as
// [Metrics.ObserveRequest].
func (b *Binding) ObserveRequest(e middleware.Event) { b.m.ObserveRequest(e) }

// ObserveState implements [middleware.Observer], as [Metrics.ObserveState].
func (b *Binding) ObserveState(from, to middleware.State) {
	b.mb.States.Transition(from, to, nil)
	b.m.ObserveState(from, to)
}

// ObserveGiveBack implements [middleware.GiveBackObserver], as
// [Metrics.ObserveGiveBack].
func (b *Binding) ObserveGiveBack(name string) { b.m.ObserveGiveBack(name) }

// ObserveLimit implements [middleware.Observer]: the limits of the policy
// as b's middleware has it, which its gauges report from now on (until
// another middleware reports the name's).
func (b *Binding) ObserveLimit(name string, limit, configured int64) {
	b.m.policies.SetLimits(&b.mb.Owner, name, limit, configured, b.m.setLimits)
}

// ObservePolicy implements [middleware.PolicyObserver]: the window of
// the policy as b's middleware has it, which limit_window_seconds
// reports with the limits b's middleware reports (see
// [Binding.ObserveLimit]).
func (b *Binding) ObservePolicy(name string, spec algorithms.Spec) {
	b.m.policies.SetWindow(&b.mb.Owner, name, spec.Window, b.m.setLimits)
}

// ObservePolicyRemoved implements [middleware.RemovalObserver]: b's
// middleware no longer has the policy. Its limit gauges report the limits
// of another middleware that has it, or are deleted if none has.
func (b *Binding) ObservePolicyRemoved(name string) {
	b.m.policies.RemoveLimits(&b.mb.Owner, name, b.m.setLimits)
}

// ObserveClose implements [middleware.CloseObserver]: b's middleware is
// counted out of failure_state, as by [Metrics.ObserveClose], and out of
// the limit gauges, as if it had dropped every policy: a name it alone has
// loses its gauges, one another middleware has reports that one's limits.
func (b *Binding) ObserveClose(last middleware.State) {
	b.mb.States.Transition(last, middleware.StateHealthy, nil)
	b.m.ObserveClose(last)
	b.m.policies.CloseOwner(&b.mb.Owner, b.m.setLimits)
}

// StateGauge returns the failure_state gauge of state s ("healthy",
// "open", "closed", "fallback"), for tests and custom dashboards. For
// any other s it returns a gauge at 0 that is not exported: a misspelt
// state adds no series to the registry.
func (m *Metrics) StateGauge(s string) prometheus.Gauge {
	for _, st := range middleware.States {
		if st.String() == s {
			return m.state.WithLabelValues(s)
		}
	}
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: "unknown_failure_state", Help: "Not a failure state."})
}

// ErrorCounter returns the errors_total counter of a policy and kind
// ("store", "key", "cost"), creating the policy's series if it has none.
// For any other kind it returns a counter at 0 that is not exported: a
// misspelt kind adds no series to the registry.
func (m *Metrics) ErrorCounter(policy, kind string) prometheus.Counter {
	for s := range metricset.Series(metricset.NumSeries) {
		if s.IsError() && s.Label() == kind {
			return m.policies.Get(policy)[s]
		}
	}
	return prometheus.NewCounter(prometheus.CounterOpts{Name: "unknown_error_kind", Help: "Not an error kind."})
}
