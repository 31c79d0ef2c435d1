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
//	                                     evaluated policy of an admitted request),
//	                                     "denied" and "shadow_denied" (each policy that
//	                                     denied it)
//	ratekeeper.errors{policy,kind}       counter ({error}): kind "store" (a failed store
//	                                     call; each evaluated policy), "key" (no key),
//	                                     "cost" (a cost out of range)
//	ratekeeper.decision.duration         histogram (s): time to decide (keys and store
//	                                     call); bucket boundaries given as advice
//	                                     ([DefaultBuckets], [WithBuckets])
//	ratekeeper.failure_state{state}      observable gauge ({state}): 1 for each failure
//	                                     state (open, closed, fallback) an observed
//	                                     middleware is in, and for healthy when none is
//	                                     failing; else 0
//	ratekeeper.effective_limit{policy}   observable gauge ({request}): the limit enforced
//	                                     (adaptive, fleet)
//	ratekeeper.configured_limit{policy}  observable gauge ({request}): the limit configured
//	ratekeeper.given_back{policy}        counter ({request}): admitted requests whose
//	                                     units went back to the store, their responses
//	                                     not counting under the policy (policy.CountIf)
//
// Translated to Prometheus names as the OpenTelemetry specification
// translates them (the default of the Go Prometheus exporter: a unit in
// braces dropped, _total added to counters, "s" made _seconds), the
// counters and gauges have prommetrics' names
// (ratekeeper_requests_total{policy,outcome}, ratekeeper_effective_limit,
// ...); the histogram is ratekeeper_decision_duration_seconds.
//
// The series of a policy's requests and errors are reported from the
// moment the middleware reports the policy, at zero, as prommetrics
// reports them; given_back has a series once a request was given back.
//
// # Cardinality
//
// The attributes are bounded as prommetrics bounds its labels: policy is
// the name of a configured policy, outcome, kind and state take the fixed
// values above, and no attribute ever holds a client's key, address or
// path. The limit gauges of a policy removed from the rule set stop being
// reported ([Observer.ObservePolicyRemoved]); its counters stay, as
// counters of a past policy do.
//
// # Cost per request
//
// Recording a request does not allocate: the attribute sets of each
// policy and outcome are built once, when the middleware reports the
// policy's limit (or at the policy's first request), and passed with
// metric.WithAttributeSet; a policy removed from the rule set drops them.
// The measurements are made with the request's context, so an SDK
// sampling exemplars can link them to the request's trace.
//
// The gauges are observable: a callback reads them at each collection.
// [Observer.Close] unregisters it.
package otelmetrics

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
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
// Build one per MeterProvider with [New] and pass it to every middleware
// to observe (with [WithAttributes] to tell several apart, build one per
// middleware). Middlewares sharing one Observer add up in its counters and
// histogram; their policy names must differ, as the limit gauges are per
// name (one middleware's reload removing a policy stops the gauges of that
// name); failure_state is 1 for every state one of them is in. Two
// Observers on one MeterProvider without distinct WithAttributes record
// into the same series: their counters add up, but their gauges, each
// observed by its own callback, overwrite each other. It is safe for
// concurrent use.
type Observer struct {
	requests  metric.Int64Counter
	errs      metric.Int64Counter
	latency   metric.Float64Histogram
	givenBack metric.Int64Counter

	// base holds the attributes of WithAttributes; latencyOpts records
	// with them.
	base        []attribute.KeyValue
	latencyOpts []metric.RecordOption
	stateSets   [len(middleware.States)]attribute.Set

	mu       sync.Mutex // serialises writers of policies and limits
	policies atomic.Pointer[map[string]*perPolicy]
	// limits are the gauges' values per policy, read by the callback
	// under mu.
	limits map[string]limits

	stateMu sync.Mutex
	// failing counts, per State, the transitions into it less those out
	// of it (healthy not counted): the middlewares in that state, once
	// every transition made has been reported. It may be negative while
	// a transition made earlier has not been reported yet.
	failing [len(middleware.States)]int64

	reg       metric.Registration
	closeOnce sync.Once
	closeErr  error
}

// perPolicy holds the measurement options of one policy, built once.
type perPolicy struct {
	allowed, denied, shadow, errStore, errKey, errCost, givenBack []metric.AddOption
	set                                                           attribute.Set // {policy} and the base attributes
}

// limits are the gauges of one policy.
type limits struct {
	set               attribute.Set
	limit, configured int64
}

type options struct {
	attrs   []attribute.KeyValue
	buckets []float64
}

// An Option configures an Observer.
type Option func(*options) error

// WithAttributes adds attributes to every measurement, such as
// attribute.String("limiter", "public-api") for one of several
// middlewares. Their keys must be valid and distinct, and not those of
// the instruments ([AttrPolicy], [AttrOutcome], [AttrKind], [AttrState]).
// The OpenTelemetry way to describe the service itself is the SDK's
// Resource, not these.
func WithAttributes(attrs ...attribute.KeyValue) Option {
	return func(o *options) error {
		seen := make(map[attribute.Key]bool, len(attrs))
		for _, kv := range attrs {
			switch {
			case !kv.Valid():
				return fmt.Errorf("otelmetrics: WithAttributes: attribute %q is invalid (an empty key or no value)", kv.Key)
			case kv.Key == AttrPolicy, kv.Key == AttrOutcome, kv.Key == AttrKind, kv.Key == AttrState:
				return fmt.Errorf("otelmetrics: WithAttributes: key %q is an attribute of the instruments", kv.Key)
			case seen[kv.Key]:
				return fmt.Errorf("otelmetrics: WithAttributes: key %q given twice", kv.Key)
			}
			seen[kv.Key] = true
		}
		o.attrs = slices.Clone(attrs)
		return nil
	}
}

// WithBuckets sets the explicit bucket boundaries the decision duration
// histogram advises, in seconds, in increasing order; the default runs
// from 10µs to 1s (a Redis round trip is typically under a millisecond).
// A View of the SDK may still replace them.
func WithBuckets(buckets ...float64) Option {
	return func(o *options) error {
		if err := checkBuckets("WithBuckets", buckets); err != nil {
			return err
		}
		o.buckets = slices.Clone(buckets)
		return nil
	}
}

// checkBuckets returns an error naming where for boundaries no histogram
// can have: none, a NaN or an infinity, or bounds that do not increase.
func checkBuckets(where string, buckets []float64) error {
	if len(buckets) == 0 {
		return fmt.Errorf("otelmetrics: %s: no buckets", where)
	}
	for i, b := range buckets {
		if math.IsNaN(b) || math.IsInf(b, 0) {
			return fmt.Errorf("otelmetrics: %s: a bucket boundary is %v", where, b)
		}
		if i > 0 && b <= buckets[i-1] {
			return fmt.Errorf("otelmetrics: %s: buckets must increase: %v after %v", where, b, buckets[i-1])
		}
	}
	return nil
}

// DefaultBuckets are the decision duration bucket boundaries, in seconds,
// those of prommetrics. [New] reads them when no [WithBuckets] is given,
// and keeps a copy.
var DefaultBuckets = []float64{.00001, .000025, .00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}

// New returns an Observer recording with a meter of mp, of scope
// [ScopeName]. mp must not be nil: pass otel.GetMeterProvider() for the
// global one. An error of mp creating an instrument is New's error.
func New(mp metric.MeterProvider, opts ...Option) (*Observer, error) {
	if mp == nil {
		return nil, errors.New("otelmetrics: New: MeterProvider is nil (otel.GetMeterProvider() is the global one)")
	}
	var o options
	for _, opt := range opts {
		if opt == nil {
			return nil, errors.New("otelmetrics: nil Option")
		}
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	if o.buckets == nil {
		if err := checkBuckets("DefaultBuckets", DefaultBuckets); err != nil {
			return nil, err
		}
		o.buckets = slices.Clone(DefaultBuckets)
	}
	meter := mp.Meter(ScopeName)
	ob := &Observer{base: o.attrs, limits: make(map[string]limits)}
	var err error
	if ob.requests, err = meter.Int64Counter("ratekeeper.requests", metric.WithUnit("{request}"),
		metric.WithDescription("Requests decided, per policy and outcome (allowed, denied, shadow_denied).")); err != nil {
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
	if len(ob.base) > 0 {
		ob.latencyOpts = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(ob.base...))}
	}
	for _, s := range middleware.States {
		ob.stateSets[s] = ob.set(AttrState.String(s.String()))
	}
	ob.reg, err = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for s, v := range ob.stateValues() {
			o.ObserveInt64(state, v, metric.WithAttributeSet(ob.stateSets[s]))
		}
		ob.mu.Lock()
		ls := make([]limits, 0, len(ob.limits))
		for _, l := range ob.limits {
			ls = append(ls, l)
		}
		ob.mu.Unlock()
		for _, l := range ls {
			o.ObserveInt64(effective, l.limit, metric.WithAttributeSet(l.set))
			o.ObserveInt64(configured, l.configured, metric.WithAttributeSet(l.set))
		}
		return nil
	}, state, effective, configured)
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

// newPerPolicy builds the measurement options of the policy named name.
func (ob *Observer) newPerPolicy(name string) *perPolicy {
	p := AttrPolicy.String(name)
	add := func(kv attribute.KeyValue) []metric.AddOption {
		return []metric.AddOption{metric.WithAttributeSet(ob.set(p, kv))}
	}
	set := ob.set(p)
	return &perPolicy{
		allowed:   add(AttrOutcome.String("allowed")),
		denied:    add(AttrOutcome.String("denied")),
		shadow:    add(AttrOutcome.String("shadow_denied")),
		errStore:  add(AttrKind.String("store")),
		errKey:    add(AttrKind.String("key")),
		errCost:   add(AttrKind.String("cost")),
		givenBack: []metric.AddOption{metric.WithAttributeSet(set)},
		set:       set,
	}
}

// of returns the options of the policy named name, built at its first
// call if ObserveLimit has not built them.
func (ob *Observer) of(name string) *perPolicy {
	if mp := ob.policies.Load(); mp != nil {
		if c, ok := (*mp)[name]; ok {
			return c
		}
	}
	ob.mu.Lock()
	defer ob.mu.Unlock()
	return ob.ofLocked(name)
}

// ofLocked is of; it requires that ob.mu is held.
func (ob *Observer) ofLocked(name string) *perPolicy {
	old := ob.policies.Load()
	if old != nil {
		if c, ok := (*old)[name]; ok {
			return c
		}
	}
	c := ob.newPerPolicy(name)
	// The policy's series of requests and errors exist from now on, at
	// zero, as prommetrics creates them: a dashboard or an alert on
	// denials sees 0, not an absent series.
	ctx := context.Background()
	for _, opts := range [][]metric.AddOption{c.allowed, c.denied, c.shadow} {
		ob.requests.Add(ctx, 0, opts...)
	}
	for _, opts := range [][]metric.AddOption{c.errStore, c.errKey, c.errCost} {
		ob.errs.Add(ctx, 0, opts...)
	}
	mp := make(map[string]*perPolicy, 1+lenOf(old))
	if old != nil {
		for k, v := range *old {
			mp[k] = v
		}
	}
	mp[name] = c
	ob.policies.Store(&mp)
	return c
}

func lenOf(m *map[string]*perPolicy) int {
	if m == nil {
		return 0
	}
	return len(*m)
}

// ObserveRequest implements [middleware.Observer]. It counts as
// prommetrics counts.
func (ob *Observer) ObserveRequest(e middleware.Event) {
	ctx := context.Background()
	if e.Request != nil {
		ctx = e.Request.Context()
	}
	// A latency below zero (the middleware's clock set back during the
	// decision) counts as zero: the histogram's sum is read as a counter.
	ob.latency.Record(ctx, max(e.Latency, 0).Seconds(), ob.latencyOpts...)
	res := e.Result
	if res == nil {
		return
	}
	switch e.Outcome {
	case middleware.KeyRejected, middleware.Denied, middleware.ShadowDenied:
		if !res.Taken() && res.Err != nil {
			// Prepare failed: a missing key or a cost out of range.
			var ke *policy.KeyError
			var ce *policy.CostError
			switch {
			case errors.As(res.Err, &ke):
				ob.errs.Add(ctx, 1, ob.of(ke.Policy.Name()).errKey...)
			case errors.As(res.Err, &ce):
				ob.errs.Add(ctx, 1, ob.of(ce.Policy.Name()).errCost...)
			}
			if e.Outcome == middleware.ShadowDenied && ce == nil && ke == nil {
				break // shadowed store failure: counted below
			}
			return
		}
	}
	storeErr := res.Fallback || !res.Taken() && res.Err != nil && e.Outcome != middleware.Abandoned
	for i := 0; i < res.Len(); i++ {
		c := ob.of(res.Policy(i).Name())
		if storeErr {
			ob.errs.Add(ctx, 1, c.errStore...)
		}
		if !res.Taken() {
			continue
		}
		switch e.Outcome {
		case middleware.Allowed:
			ob.requests.Add(ctx, 1, c.allowed...)
		case middleware.Denied:
			if e.DeniedBy(i) {
				ob.requests.Add(ctx, 1, c.denied...)
			}
		case middleware.ShadowDenied:
			if e.DeniedBy(i) {
				ob.requests.Add(ctx, 1, c.shadow...)
			}
		}
	}
}

// ObserveState implements [middleware.Observer]. Counting the
// transitions, rather than taking the last report for the state, keeps the
// several middlewares one Observer may observe apart (one failing while
// another is healthy), and ends in the state made last even for an
// observer told out of order.
func (ob *Observer) ObserveState(from, to middleware.State) {
	ob.stateMu.Lock()
	defer ob.stateMu.Unlock()
	if from != middleware.StateHealthy && int(from) < len(ob.failing) {
		ob.failing[from]--
	}
	if to != middleware.StateHealthy && int(to) < len(ob.failing) {
		ob.failing[to]++
	}
}

// stateValues returns the failure_state gauges, indexed by State.
func (ob *Observer) stateValues() [len(middleware.States)]int64 {
	ob.stateMu.Lock()
	defer ob.stateMu.Unlock()
	var v [len(middleware.States)]int64
	v[middleware.StateHealthy] = 1
	for _, s := range middleware.States {
		if s != middleware.StateHealthy && ob.failing[s] > 0 {
			v[s], v[middleware.StateHealthy] = 1, 0
		}
	}
	return v
}

// ObserveLimit implements [middleware.Observer]: the limit gauges of the
// policy report limit and configured from now on, and the policy's
// attribute sets are built if they are not.
func (ob *Observer) ObserveLimit(name string, limit, configured int64) {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	c := ob.ofLocked(name)
	ob.limits[name] = limits{set: c.set, limit: limit, configured: configured}
}

// ObservePolicyRemoved implements [middleware.RemovalObserver]: the
// effective and configured limit gauges of a policy that left the rule
// set are no longer reported (a gauge kept would report a limit no longer
// enforced), and its cached attribute sets are dropped. Its counters and
// histogram stay, as counters of a past policy do.
func (ob *Observer) ObservePolicyRemoved(name string) {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	delete(ob.limits, name)
	old := ob.policies.Load()
	if old == nil {
		return
	}
	if _, ok := (*old)[name]; !ok {
		return
	}
	mp := make(map[string]*perPolicy, len(*old)-1)
	for k, v := range *old {
		if k != name {
			mp[k] = v
		}
	}
	ob.policies.Store(&mp)
}

// ObserveGiveBack implements [middleware.GiveBackObserver]: it counts the
// request in ratekeeper.given_back under the policy.
func (ob *Observer) ObserveGiveBack(name string) {
	ob.givenBack.Add(context.Background(), 1, ob.of(name).givenBack...)
}

var (
	_ middleware.RemovalObserver  = (*Observer)(nil)
	_ middleware.GiveBackObserver = (*Observer)(nil)
)
