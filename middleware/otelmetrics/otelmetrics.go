// Package otelmetrics exports what a rate-limiting middleware does as
// OpenTelemetry metrics. It is the counterpart of package
// middleware/prommetrics for services that export through OpenTelemetry:
// package middleware defines the [middleware.Observer] interface and
// imports no metrics library; this package implements it with the
// OpenTelemetry metrics API (go.opentelemetry.io/otel/metric), and the
// application's SDK exports it.
//
//	obs, err := otelmetrics.New(otel.GetMeterProvider())
//	...
//	m, err := middleware.New(store, policies, middleware.WithObserver(obs))
//
// New takes the MeterProvider explicitly, as prommetrics.New takes its
// registry: the package reads no global. otel.GetMeterProvider() is the
// global one (it forwards to the provider set later with
// otel.SetMeterProvider). The meter's instrumentation scope is named after
// this package's import path, [ScopeName], as OpenTelemetry
// instrumentation libraries name theirs.
//
// The instruments carry the signals of prommetrics, with the same meaning
// and the same attribute values:
//
//	ratekeeper.requests{policy,outcome}  counter ({request}): outcome "allowed" (each
//	                                     evaluated policy of a request its decisions
//	                                     admitted and that was passed on, a held one
//	                                     when its leaky_queue hold ended), "denied" and
//	                                     "shadow_denied" (each policy that denied it),
//	                                     "abandoned" (each evaluated policy of a request
//	                                     not served, its context over: its client gone
//	                                     before the decision or during the hold, or its
//	                                     deadline sooner than the end of its Delay, a
//	                                     503; shadow mode serves such a request and
//	                                     counts it nowhere); a request let through or
//	                                     refused without a decision, as the store
//	                                     failed (failing open or closed), counts only
//	                                     in ratekeeper.errors
//	ratekeeper.errors{policy,kind}       counter ({error}): kind "store" (a request whose
//	                                     store call failed, answered with decisions the
//	                                     middleware refused, such as a Delay their policy
//	                                     cannot give, or that the circuit breaker kept
//	                                     from the store: each evaluated policy; not a
//	                                     failed refund or give-back, which only
//	                                     Stats.StoreErrors counts, nor a request whose
//	                                     context ended first, shadowed or not), "key" (no
//	                                     key), "cost" (a cost out of range: under
//	                                     each policy whose range it is out of)
//	ratekeeper.decision.duration         histogram (s): time to decide (keys and store
//	                                     call); bucket boundaries given as advice
//	                                     ([DefaultBuckets], [WithBuckets])
//	ratekeeper.hold.duration{policy,outcome}
//	                                     histogram (s): time a leaky_queue held a request
//	                                     for its turn, once per held request under each
//	                                     policy whose decision had a Delay: that Delay,
//	                                     or the time held when the hold was cut short;
//	                                     outcome "allowed" (served after the hold) or
//	                                     "abandoned" (its client gone or its deadline run
//	                                     out during the hold); a request not held (no
//	                                     Delay, shadow mode, refused at once as its
//	                                     deadline comes before its turn) records nothing;
//	                                     boundaries given as advice
//	                                     ([DefaultHoldBuckets], [WithHoldBuckets])
//	ratekeeper.failure_state{state}      observable gauge ({state}): 1 for each failure
//	                                     state (open, closed, fallback) an observed
//	                                     middleware is in, and for healthy when none is
//	                                     failing; else 0 (a middleware closed is
//	                                     counted out)
//	ratekeeper.effective_limit{policy}   observable gauge ({request}): the limit enforced
//	                                     (adaptive, fleet)
//	ratekeeper.configured_limit{policy}  observable gauge ({request}): the limit configured
//	ratekeeper.limit.window{policy}      observable gauge (s): the window both limits
//	                                     count requests in (algorithms.Spec.Window),
//	                                     told by the middleware with the limits
//	                                     (middleware.PolicyObserver), as prommetrics'
//	                                     limit_window_seconds (see its package doc,
//	                                     Limits)
//	ratekeeper.given_back{policy}        counter ({request}): admitted requests whose
//	                                     units went back to the store, their responses
//	                                     not counting under the policy (policy.CountIf)
//
// Translated to Prometheus names as the OpenTelemetry specification
// translates them (the default of the Go Prometheus exporter: a unit in
// braces dropped, _total added to counters, "s" made _seconds), the
// counters and gauges have prommetrics' names
// (ratekeeper_requests_total{policy,outcome}, ratekeeper_effective_limit,
// ratekeeper_limit_window_seconds, ...); the histograms are
// ratekeeper_decision_duration_seconds and
// ratekeeper_hold_duration_seconds (prommetrics' decision_seconds and
// hold_seconds). The exporter adds the instrumentation scope to every series:
// otel_scope_name="github.com/ratekeeper/ratekeeper/middleware/otelmetrics"
// (its otel_scope_version and otel_scope_schema_url are empty, which
// Prometheus takes as absent), so a selector or an aggregation written for
// prommetrics (by policy, outcome, state) reads the same values; its
// option WithoutScopeInfo leaves the label out. The SDK's Resource is
// exported apart, as target_info.
//
// Their names being prommetrics', the exporter and a prommetrics.Metrics
// of its default namespace must not share a registry (the exporter's
// default is prometheus.DefaultRegisterer, the one a prommetrics.New
// is often given): the registry refuses the mixture at every scrape, and
// its other metrics are lost with it (promhttp answers 500). With the
// scope label the help texts of ratekeeper_limit_window_seconds differ;
// without it every series is there twice. To run both, as while moving
// from one to the other, give the Metrics another
// prommetrics.WithNamespace, or give the exporter a registry of its own.
//
// The series of a policy's requests and errors are reported from the
// moment the middleware reports the policy, at zero, as prommetrics
// reports them (on otel.GetMeterProvider() before the SDK is set, from
// the first collection of the SDK set later); given_back has a series
// once a request was given back, and hold.duration a series of a policy
// and outcome once a hold of that outcome was recorded under the policy
// (only leaky_queue policies have them). Why the holds are counted per outcome, and what the buckets
// are, is told in prommetrics' package doc (Holds): the same holds are
// recorded here.
//
// # Cardinality
//
// The attributes are bounded as prommetrics bounds its labels: policy is
// the name of a configured policy, outcome, kind and state take the fixed
// values above, and no attribute ever holds a client's key, address or
// path. The callback observes the policies' limits in the order of their
// names, so that under an SDK cardinality limit smaller than the number
// of policies the gauges of the same policies, the first by name, keep
// their series at every collection.
//
// The limit gauges of a policy a reload removed from the rule set
// (SetPolicies, or ApplyConfig, which package policy/reload calls) stop
// being reported, unless another middleware the Observer observes has the
// policy: they would state a limit no longer enforced. Its counters and its hold.duration histogram
// stay, as prommetrics keeps them (see its package doc, Removed
// policies): under cumulative temporality (the default, and Prometheus's)
// the SDK goes on exporting them at their last values, and they resume
// from them if a reload brings the policy back; under delta temporality
// the SDK exports only what was recorded in each interval, so they are no
// longer exported once nothing is recorded under them.
//
// Under cumulative temporality those kept series count against the SDK's
// cardinality limit of each instrument (2000 series by default,
// sdkmetric.WithCardinalityLimit): a middleware holds at most
// policy.MaxPolicies policies at once, but every name the Observer has
// counted under keeps its four series of ratekeeper.requests and three of
// ratekeeper.errors for the life of the MeterProvider. Reloads that
// rename policies (a version in the name) thus use the limit up after
// some 500 names, and then the requests of the policies in force are
// counted in the SDK's overflow series (otel.metric.overflow=true), not
// under their names: keep names stable across reloads, or raise the
// limit.
//
// # Several middlewares
//
// Share one Observer among any number of middlewares: each is kept
// apart, as in prommetrics (see its package doc, Several middlewares). An
// Observer is a [middleware.SharedObserver]: [middleware.WithObserver]
// gives each middleware built its own observer of it
// ([Observer.ForMiddleware]). The counters, histograms and failure_state
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
// to the others, and the points stop when none has it; one dropped
// without Close is counted out alike (of failure_state too) once the
// garbage collector finds it unreachable. A middleware rebuilt from a new
// configuration, given the same Observer, and the old one closed thus
// report the new one's limits alone. (An Observer inside an observer of
// the application's, which WithObserver does not ask for a ForMiddleware,
// cannot tell the middlewares apart: give the wrapper a ForMiddleware
// that wraps the Observer's.)
//
// # Cost per request
//
// Recording a request does not allocate: the attribute sets of each
// policy and outcome are built once, when the middleware reports the
// policy's limit (or at the policy's first request), and passed with
// metric.WithAttributeSet; a policy no observed middleware has any more
// (removed from the rule set, or its middleware closed) drops them.
// A request's measurements (ratekeeper.requests, ratekeeper.errors,
// ratekeeper.decision.duration, ratekeeper.hold.duration) are made with
// its context, so an SDK
// sampling exemplars can link them to the request's trace; a give-back,
// told without the request ([Observer.ObserveGiveBack]), is not linked.
//
// The gauges are observable: a callback reads them at each collection.
// [Observer.Close] unregisters it.
package otelmetrics

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/errlist"
	"github.com/ratekeeper/ratekeeper/internal/nilness"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metricset"
)

// ScopeName is the name of the instrumentation scope of the meter New
// gets from its MeterProvider: this package's import path.
const ScopeName = "github.com/ratekeeper/ratekeeper/middleware/otelmetrics"

// The attribute keys of the instruments. [WithAttributes] may not use
// them.
const (
	AttrPolicy  = attribute.Key("policy")
	AttrOutcome = attribute.Key("outcome")
	AttrKind    = attribute.Key("kind")
	AttrState   = attribute.Key("state")
)

// An Observer is a [middleware.Observer] recording OpenTelemetry metrics.
// Build one per MeterProvider with [New] and pass it to any number of
// middlewares (one rebuilt from a new configuration too): each is kept
// apart, as a [middleware.SharedObserver] (see Several middlewares in the
// package doc). They add up in its counters and histograms;
// failure_state is 1 for every state one of them is in; a policy name
// that several have reports the limits set last. To tell them apart in
// every instrument, build one Observer per middleware, with
// [WithAttributes]. Two
// Observers on one MeterProvider without distinct WithAttributes record
// into the same series: their counters add up, but their gauges, each
// observed by its own callback, overwrite each other; the histograms'
// bucket boundaries are the first Observer's (see [WithBuckets]). It is
// safe for concurrent use.
type Observer struct {
	requests  metric.Int64Counter
	errs      metric.Int64Counter
	latency   metric.Float64Histogram
	hold      metric.Float64Histogram
	givenBack metric.Int64Counter

	// base holds the attributes of WithAttributes; latencyOpts records
	// with them.
	base        []attribute.KeyValue
	latencyOpts []metric.RecordOption
	stateSets   [len(middleware.States)]attribute.Set

	// policies holds the measurement options of each policy and the
	// limit gauges' values, read by the callback.
	policies *metricset.Policies[*perPolicy]
	own      metricset.Owner // the limits reported to the Observer itself (a middleware reports to a Binding)
	states   metricset.States

	reg       metric.Registration
	closeOnce sync.Once
	closeErr  error
}

// perPolicy holds the measurement options of one policy, built once.
type perPolicy struct {
	series    [metricset.NumSeries][]metric.AddOption
	givenBack []metric.AddOption
	hold      [metricset.NumHolds][]metric.RecordOption
	set       attribute.Set // {policy} and the base attributes
	// collected says the gauges' callback has seen the policy: its
	// series of requests and errors were made at zero then too.
	collected atomic.Bool
}

type options struct {
	attrs       []attribute.KeyValue
	buckets     []float64
	holdBuckets []float64
}

// An Option configures an Observer.
type Option func(*options) error

// WithAttributes adds attributes to every measurement, such as
// attribute.String("limiter", "public-api") for one of several
// middlewares. Several WithAttributes add up (a base list of options and
// a limiter's own may each give some), so their keys must be distinct
// across them all: a key given twice is an error, whether in one
// WithAttributes or in two. Their keys must be valid, and not those of
// the instruments ([AttrPolicy], [AttrOutcome], [AttrKind], [AttrState]),
// nor "le": exported to Prometheus (the OpenTelemetry exporter, or a
// Collector), an attribute becomes a label of its name, and "le" is the
// bucket label of the histograms (ratekeeper.decision.duration,
// ratekeeper.hold.duration), whose series would then carry it twice, in an exposition a Prometheus scrape refuses
// (prommetrics.WithConstLabels refuses it alike). For the same reason a
// key that becomes an otel_scope_* label (the exporter's, on every series:
// "otel.scope.name") or one with a "__" prefix (reserved) is refused, and so
// is a key or a string value that is not valid UTF-8 (the exporter's
// registry refuses every series that has it). The OpenTelemetry way
// to describe the service itself is the SDK's Resource, not these.
func WithAttributes(attrs ...attribute.KeyValue) Option {
	return func(o *options) error {
		// The keys of the WithAttributes given before, which these add to.
		seen := make(map[attribute.Key]bool, len(o.attrs)+len(attrs))
		for _, kv := range o.attrs {
			seen[kv.Key] = true
		}
		for _, kv := range attrs {
			switch {
			case !kv.Valid():
				return fmt.Errorf("otelmetrics: WithAttributes: attribute %q is invalid (an empty key or no value)", kv.Key)
			case !utf8.ValidString(string(kv.Key)):
				return fmt.Errorf("otelmetrics: WithAttributes: key %q is not valid UTF-8", kv.Key)
			case kv.Value.Type() == attribute.STRING && !utf8.ValidString(kv.Value.AsString()):
				return fmt.Errorf("otelmetrics: WithAttributes: the value of key %q is not valid UTF-8", kv.Key)
			case kv.Key == AttrPolicy, kv.Key == AttrOutcome, kv.Key == AttrKind, kv.Key == AttrState:
				return fmt.Errorf("otelmetrics: WithAttributes: key %q is an attribute of the instruments", kv.Key)
			case kv.Key == "le":
				return fmt.Errorf("otelmetrics: WithAttributes: key %q is the bucket label of the histograms in Prometheus", kv.Key)
			case strings.HasPrefix(promLabel(kv.Key), "otel_scope_"):
				return fmt.Errorf("otelmetrics: WithAttributes: key %q is, in Prometheus, a label the OpenTelemetry exporter puts on every series (otel_scope_*)", kv.Key)
			case strings.HasPrefix(promLabel(kv.Key), "__"):
				return fmt.Errorf("otelmetrics: WithAttributes: key %q is, in Prometheus, a reserved label name (a \"__\" prefix)", kv.Key)
			case seen[kv.Key]:
				return fmt.Errorf("otelmetrics: WithAttributes: key %q given twice", kv.Key)
			}
			seen[kv.Key] = true
		}
		o.attrs = append(slices.Clip(o.attrs), attrs...)
		return nil
	}
}

// promLabel returns the Prometheus label name the exporters make of key
// with the classic escaping: each character other than a letter, a digit
// or '_' made '_'.
func promLabel(key attribute.Key) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, string(key))
}

// WithBuckets sets the explicit bucket boundaries the decision duration
// histogram advises, in seconds, in increasing order; the default runs
// from 1µs (a decision on the memory store) to 1s (a Redis round trip is
// typically under a millisecond).
// A View of the SDK may still replace them. The instruments are the
// meter's, one per name: on a MeterProvider that has an Observer already,
// the SDK keeps the boundaries of the first one built (another's
// WithBuckets changes nothing): give the Observers of one provider the
// same.
func WithBuckets(buckets ...float64) Option {
	return func(o *options) error { return bucketRule.Given("WithBuckets", &o.buckets, buckets) }
}

// WithHoldBuckets sets the explicit bucket boundaries the hold histogram
// (ratekeeper.hold.duration) advises, in seconds, in increasing order; the
// default ([DefaultHoldBuckets]) runs from 1ms to 60s. Boundaries past
// the longest MaxDelay of the leaky_queue policies observed count
// nothing: a queue holding at most 2 s is read best with boundaries up to
// 2. A View of the SDK may still replace them, and on a MeterProvider
// that has an Observer already the first one's hold (see [WithBuckets]).
func WithHoldBuckets(buckets ...float64) Option {
	return func(o *options) error { return bucketRule.Given("WithHoldBuckets", &o.holdBuckets, buckets) }
}

// bucketRule rejects boundaries no histogram can have: none, a NaN or an
// infinity, or bounds that do not increase.
var bucketRule = metricset.BucketRule{Prefix: "otelmetrics", Invalid: func(b float64) string {
	if math.IsNaN(b) || math.IsInf(b, 0) {
		return fmt.Sprintf("a bucket boundary is %v", b)
	}
	return ""
}}

// DefaultBuckets are the decision duration bucket boundaries, in seconds,
// those of prommetrics: 1µs, 2.5µs, 5µs, 10µs, 25µs, 50µs, 100µs, 250µs,
// 500µs, 1ms, 2.5ms, 5ms, 10ms, 25ms, 50ms, 100ms, 250ms, 500ms and 1s. [New] reads
// them when no [WithBuckets] is given, and keeps a copy.
var DefaultBuckets = metricset.DefaultBuckets()

// DefaultHoldBuckets are the hold duration bucket boundaries, in seconds,
// those of prommetrics: 1ms, 2.5ms, 5ms, 10ms, 25ms, 50ms, 100ms, 250ms,
// 500ms, 1s, 2.5s, 5s, 10s, 30s and 60s, from a queue spacing
// (Window/Limit: 1ms for a thousand a second) to a MaxDelay of a minute.
// [New] reads them when no [WithHoldBuckets] is given, and keeps a copy.
var DefaultHoldBuckets = metricset.DefaultHoldBuckets()

// New returns an Observer recording with a meter of mp, of scope
// [ScopeName]. mp must not be nil (nor a nil pointer): pass
// otel.GetMeterProvider() for the global one. An error of mp creating an instrument is New's error.
func New(mp metric.MeterProvider, opts ...Option) (*Observer, error) {
	if nilness.Is(mp) {
		// Also a pointer never assigned (a nil *sdkmetric.MeterProvider),
		// on which mp.Meter would panic.
		return nil, errors.New("otelmetrics: New: MeterProvider is nil (otel.GetMeterProvider() is the global one)")
	}
	var o options
	// Every refused option is reported, one per line.
	var errs []error
	for i, opt := range opts {
		if opt == nil {
			errs = append(errs, fmt.Errorf("otelmetrics: Options hold a nil Option at index %d", i))
		} else if err := opt(&o); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errlist.Join(errs); err != nil {
		return nil, err
	}
	if err := bucketRule.Resolve("DefaultBuckets", &o.buckets, DefaultBuckets); err != nil {
		return nil, err
	}
	if err := bucketRule.Resolve("DefaultHoldBuckets", &o.holdBuckets, DefaultHoldBuckets); err != nil {
		return nil, err
	}
	meter := mp.Meter(ScopeName)
	ob := &Observer{base: o.attrs}
	ob.policies = metricset.NewPolicies(ob.newPerPolicy)
	var err error
	if ob.requests, err = meter.Int64Counter("ratekeeper.requests", metric.WithUnit("{request}"),
		metric.WithDescription("Requests decided, per policy and outcome (allowed, denied, shadow_denied, abandoned).")); err != nil {
		return nil, fmt.Errorf("otelmetrics: ratekeeper.requests: %w", err)
	}
	if ob.errs, err = meter.Int64Counter("ratekeeper.errors", metric.WithUnit("{error}"),
		metric.WithDescription("Failures per policy and kind (store, key, cost).")); err != nil {
		return nil, fmt.Errorf("otelmetrics: ratekeeper.errors: %w", err)
	}
	if ob.latency, err = meter.Float64Histogram("ratekeeper.decision.duration", metric.WithUnit("s"),
		metric.WithDescription("Time to decide a request: key extraction and the store call."),
		metric.WithExplicitBucketBoundaries(o.buckets...)); err != nil {
		return nil, fmt.Errorf("otelmetrics: ratekeeper.decision.duration: %w", err)
	}
	if ob.hold, err = meter.Float64Histogram("ratekeeper.hold.duration", metric.WithUnit("s"),
		metric.WithDescription("Time a request was held for its turn by a leaky_queue policy, per policy and outcome (allowed: served after the hold; abandoned: the hold cut short)."),
		metric.WithExplicitBucketBoundaries(o.holdBuckets...)); err != nil {
		return nil, fmt.Errorf("otelmetrics: ratekeeper.hold.duration: %w", err)
	}
	if ob.givenBack, err = meter.Int64Counter("ratekeeper.given_back", metric.WithUnit("{request}"),
		metric.WithDescription("Admitted requests whose units went back to the store, per policy, their responses not counting under it (policy.CountIf).")); err != nil {
		return nil, fmt.Errorf("otelmetrics: ratekeeper.given_back: %w", err)
	}
	state, err := meter.Int64ObservableGauge("ratekeeper.failure_state", metric.WithUnit("{state}"),
		metric.WithDescription("1 for each failure state (open, closed, fallback) an observed middleware is in; healthy is 1 when none is failing."))
	if err != nil {
		return nil, fmt.Errorf("otelmetrics: ratekeeper.failure_state: %w", err)
	}
	effective, err := meter.Int64ObservableGauge("ratekeeper.effective_limit", metric.WithUnit("{request}"),
		metric.WithDescription("The limit enforced per policy, after adaptive and fleet adjustments."))
	if err != nil {
		return nil, fmt.Errorf("otelmetrics: ratekeeper.effective_limit: %w", err)
	}
	configured, err := meter.Int64ObservableGauge("ratekeeper.configured_limit", metric.WithUnit("{request}"),
		metric.WithDescription("The limit configured per policy."))
	if err != nil {
		return nil, fmt.Errorf("otelmetrics: ratekeeper.configured_limit: %w", err)
	}
	window, err := meter.Float64ObservableGauge("ratekeeper.limit.window", metric.WithUnit("s"),
		metric.WithDescription("The window of the limits per policy: ratekeeper.effective_limit and ratekeeper.configured_limit count requests per this many seconds."))
	if err != nil {
		return nil, fmt.Errorf("otelmetrics: ratekeeper.limit.window: %w", err)
	}
	if len(ob.base) > 0 {
		ob.latencyOpts = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(ob.base...))}
	}
	for _, s := range middleware.States {
		ob.stateSets[s] = ob.set(AttrState.String(s.String()))
	}
	ob.reg, err = meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		for s, v := range ob.states.Values() {
			o.ObserveInt64(state, v, metric.WithAttributeSet(ob.stateSets[s]))
		}
		for _, l := range ob.policies.AppendLimits(nil) {
			o.ObserveInt64(effective, l.Limit, metric.WithAttributeSet(l.Policy.set))
			o.ObserveInt64(configured, l.Configured, metric.WithAttributeSet(l.Policy.set))
			if l.Window > 0 {
				o.ObserveFloat64(window, l.Window.Seconds(), metric.WithAttributeSet(l.Policy.set))
			}
			if !l.Policy.collected.Swap(true) {
				// Made at zero again, at the first collection that sees
				// the policy: those made when it was first reported were
				// lost if mp forwarded to no SDK then (the global
				// MeterProvider before otel.SetMeterProvider); the SDK
				// set later calls this callback at its collections.
				ob.zero(ctx, l.Policy)
			}
		}
		return nil
	}, state, effective, configured, window)
	if err != nil {
		return nil, fmt.Errorf("otelmetrics: registering the gauges' callback: %w", err)
	}
	return ob, nil
}

// Close unregisters the callback of the observable gauges: the failure
// state and the limits are no longer reported. The counters and the
// histogram keep what they recorded (and record what they are still
// told). Close is idempotent.
func (ob *Observer) Close() error {
	ob.closeOnce.Do(func() { ob.closeErr = ob.reg.Unregister() })
	return ob.closeErr
}

// set returns the attribute set of kvs and the base attributes.
func (ob *Observer) set(kvs ...attribute.KeyValue) attribute.Set {
	all := make([]attribute.KeyValue, 0, len(kvs)+len(ob.base))
	all = append(all, ob.base...)
	all = append(all, kvs...)
	return attribute.NewSet(all...)
}

// newPerPolicy builds the measurement options of the policy named name,
// and reports its series of requests and errors at zero.
func (ob *Observer) newPerPolicy(name string) *perPolicy {
	p := AttrPolicy.String(name)
	set := ob.set(p)
	c := &perPolicy{givenBack: []metric.AddOption{metric.WithAttributeSet(set)}, set: set}
	for s := range metricset.Series(metricset.NumSeries) {
		key := AttrOutcome
		if s.IsError() {
			key = AttrKind
		}
		c.series[s] = []metric.AddOption{metric.WithAttributeSet(ob.set(p, key.String(s.Label())))}
	}
	// The hold's sets; its series exist once a hold is recorded.
	for h := range metricset.Hold(metricset.NumHolds) {
		c.hold[h] = []metric.RecordOption{metric.WithAttributeSet(ob.set(p, AttrOutcome.String(h.Label())))}
	}
	// The policy's series of requests and errors exist from now on, at
	// zero, as prommetrics creates them: a dashboard or an alert on
	// denials sees 0, not an absent series.
	ob.zero(context.Background(), c)
	return c
}

// zero makes c's series of requests and errors, adding 0 to each.
func (ob *Observer) zero(ctx context.Context, c *perPolicy) {
	for s, opts := range c.series {
		ob.counter(metricset.Series(s)).Add(ctx, 0, opts...)
	}
}

// counter returns the counter of series s: errors for an error kind,
// requests for an outcome.
func (ob *Observer) counter(s metricset.Series) metric.Int64Counter {
	if s.IsError() {
		return ob.errs
	}
	return ob.requests
}

// ObserveRequest implements [middleware.Observer]. It counts as
// prommetrics counts, and records a held request's hold
// ([middleware.Event.Held]) in ratekeeper.hold.duration. An Event without
// a Result (the middleware always sets one) records its duration and
// counts nothing else.
func (ob *Observer) ObserveRequest(e middleware.Event) {
	ctx := context.Background()
	if e.Request != nil {
		ctx = e.Request.Context()
	}
	// A latency below zero (the middleware's clock set back during the
	// decision) counts as zero: the histogram's sum is read as a counter.
	ob.latency.Record(ctx, max(e.Latency, 0).Seconds(), ob.latencyOpts...)
	if e.Result == nil {
		return
	}
	ob.policies.Count(e, func(c *perPolicy, s metricset.Series) {
		ob.counter(s).Add(ctx, 1, c.series[s]...)
	})
	metricset.Holds(e, func(name string, h metricset.Hold, seconds float64) {
		ob.hold.Record(ctx, seconds, ob.policies.Get(name).hold[h]...)
	})
}

// ObserveState implements [middleware.Observer]. Counting the
// transitions, rather than taking the last report for the state, keeps the
// several middlewares one Observer may observe apart (one failing while
// another is healthy), and ends in the state made last even for an
// observer told out of order.
func (ob *Observer) ObserveState(from, to middleware.State) {
	ob.states.Transition(from, to, nil)
}

// ObserveClose implements [middleware.CloseObserver]: a middleware closed
// in State last is counted out of ratekeeper.failure_state, as if it had
// returned to healthy. A middleware given ob tells its own
// [Observer.ForMiddleware] instead, which also takes its limits out of
// the limit gauges; called on ob itself, which cannot tell whose limits
// it was told, ObserveClose leaves them.
func (ob *Observer) ObserveClose(last middleware.State) {
	ob.states.Transition(last, middleware.StateHealthy, nil)
}

// ObserveLimit implements [middleware.Observer]: the limit gauges of the
// policy report limit and configured from now on, and the policy's
// attribute sets are built if they are not.
func (ob *Observer) ObserveLimit(name string, limit, configured int64) {
	ob.policies.SetLimits(&ob.own, name, limit, configured, nil)
}

// ObservePolicy implements [middleware.PolicyObserver]:
// ratekeeper.limit.window reports the window of spec for the policy,
// beside its limit gauges (at once if the policy's limits were reported,
// else with them, which the middleware reports right after).
func (ob *Observer) ObservePolicy(name string, spec algorithms.Spec) {
	ob.policies.SetWindow(&ob.own, name, spec.Window, nil)
}

// ObservePolicyRemoved implements [middleware.RemovalObserver]: the
// effective and configured limit gauges of a policy that left the rule
// set are no longer reported (a gauge kept would report a limit no longer
// enforced), unless another middleware ob observes has the policy: they
// report its limits then.
// Otherwise its cached attribute sets are dropped. Its counters and hold
// histogram stay, as counters of a past policy do.
func (ob *Observer) ObservePolicyRemoved(name string) {
	ob.policies.RemoveLimits(&ob.own, name, nil)
}

// ObserveGiveBack implements [middleware.GiveBackObserver]: it counts the
// request in ratekeeper.given_back under the policy.
func (ob *Observer) ObserveGiveBack(name string) {
	ob.givenBack.Add(context.Background(), 1, ob.policies.Get(name).givenBack...)
}

var (
	_ middleware.SharedObserver   = (*Observer)(nil)
	_ middleware.RemovalObserver  = (*Observer)(nil)
	_ middleware.PolicyObserver   = (*Observer)(nil)
	_ middleware.GiveBackObserver = (*Observer)(nil)
	_ middleware.CloseObserver    = (*Observer)(nil)
	_ middleware.RemovalObserver  = (*Binding)(nil)
	_ middleware.PolicyObserver   = (*Binding)(nil)
	_ middleware.GiveBackObserver = (*Binding)(nil)
	_ middleware.CloseObserver    = (*Binding)(nil)
	_ middleware.BoundObserver    = (*Binding)(nil)
)

// A Binding is the observer of one middleware among those an Observer
// observes: it records with the Observer, and keeps the limits its
// middleware reports apart from the other middlewares', so that its
// middleware's Close, or a reload of it dropping a policy, removes from
// the limit gauges what it reported and nothing another middleware
// reports (see Several middlewares in the package doc).
// [middleware.WithObserver] gives each middleware its own; a Binding is
// not a [middleware.SharedObserver], so that it is not bound again. An
// application calling ForMiddleware itself gives the Binding to one
// middleware, in place of the Observer: WithObserver refuses the two given
// to one middleware. It is safe for concurrent use.
//
// A middleware dropped without Close is counted out of the gauges
// (failure_state and the limits) as by Close once the garbage collector
// finds its Binding unreachable: the middleware is then gone (nothing can
// serve through it), and the gauges do not report it for ever, though
// they do until a collection.
type Binding struct {
	ob *Observer
	mb *metricset.Member // apart from the Binding: the argument of its cleanup
}

// ForMiddleware returns a new observer of one middleware, a *[Binding],
// recording with ob. It implements [middleware.SharedObserver]:
// [middleware.WithObserver] calls it for each middleware given ob, so an
// application need not; one that does passes the result to that
// middleware alone.
func (ob *Observer) ForMiddleware() middleware.Observer {
	b := &Binding{ob: ob, mb: new(metricset.Member)}
	runtime.AddCleanup(b, ob.forget, b.mb)
	return b
}

// BoundTo implements [middleware.BoundObserver]: it returns the Observer b
// records into, so that [middleware.WithObserver] refuses b given to a
// middleware beside it (or beside another of its Bindings), where both
// would count each request.
func (b *Binding) BoundTo() middleware.SharedObserver { return b.ob }

// forget counts mb, the middleware of a Binding, out of the gauges: out of
// failure_state as if it had returned to healthy, and out of the limit
// gauges as if it had dropped every policy.
func (ob *Observer) forget(mb *metricset.Member) {
	ob.states.Subtract(&mb.States, nil)
	ob.policies.CloseOwner(&mb.Owner, nil)
}

// ObserveRequest implements [middleware.Observer], as
// [Observer.ObserveRequest].
func (b *Binding) ObserveRequest(e middleware.Event) { b.ob.ObserveRequest(e) }

// ObserveState implements [middleware.Observer], as
// [Observer.ObserveState].
func (b *Binding) ObserveState(from, to middleware.State) {
	b.mb.States.Transition(from, to, nil)
	b.ob.ObserveState(from, to)
}

// ObserveGiveBack implements [middleware.GiveBackObserver], as
// [Observer.ObserveGiveBack].
func (b *Binding) ObserveGiveBack(name string) { b.ob.ObserveGiveBack(name) }

// ObserveLimit implements [middleware.Observer]: the limits of the policy
// as b's middleware has it, which its gauges report from now on (until
// another middleware reports the name's).
func (b *Binding) ObserveLimit(name string, limit, configured int64) {
	b.ob.policies.SetLimits(&b.mb.Owner, name, limit, configured, nil)
}

// ObservePolicy implements [middleware.PolicyObserver]: the window of
// the policy as b's middleware has it, which ratekeeper.limit.window
// reports with the limits b's middleware reports (see
// [Binding.ObserveLimit]).
func (b *Binding) ObservePolicy(name string, spec algorithms.Spec) {
	b.ob.policies.SetWindow(&b.mb.Owner, name, spec.Window, nil)
}

// ObservePolicyRemoved implements [middleware.RemovalObserver]: b's
// middleware no longer has the policy. Its limit gauges report the limits
// of another middleware that has it, or stop if none has.
func (b *Binding) ObservePolicyRemoved(name string) {
	b.ob.policies.RemoveLimits(&b.mb.Owner, name, nil)
}

// ObserveClose implements [middleware.CloseObserver]: b's middleware is
// counted out of ratekeeper.failure_state, as by [Observer.ObserveClose],
// and out of the limit gauges, as if it had dropped every policy: a name
// it alone has stops being reported, one another middleware has reports
// that one's limits.
func (b *Binding) ObserveClose(last middleware.State) {
	b.mb.States.Transition(last, middleware.StateHealthy, nil)
	b.ob.ObserveClose(last)
	b.ob.policies.CloseOwner(&b.mb.Owner, nil)
}
