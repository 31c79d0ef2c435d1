package otelmetrics_test

import (
	"errors"
	"math"
	"testing"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/ratekeeper/ratekeeper/middleware/otelmetrics"
)

// refusingProvider's meters refuse to make the instrument named fail.
type refusingProvider struct {
	noop.MeterProvider
	fail string
}

func (p refusingProvider) Meter(string, ...metric.MeterOption) metric.Meter {
	return refusingMeter{fail: p.fail}
}

type refusingMeter struct {
	noop.Meter
	fail string
}

var errRefused = errors.New("refused")

func (m refusingMeter) Int64Counter(name string, opts ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	if name == m.fail {
		return nil, errRefused
	}
	return m.Meter.Int64Counter(name, opts...)
}

func (m refusingMeter) Float64Histogram(name string, opts ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	if name == m.fail {
		return nil, errRefused
	}
	return m.Meter.Float64Histogram(name, opts...)
}

func (m refusingMeter) Int64ObservableGauge(name string, opts ...metric.Int64ObservableGaugeOption) (metric.Int64ObservableGauge, error) {
	if name == m.fail {
		return nil, errRefused
	}
	return m.Meter.Int64ObservableGauge(name, opts...)
}

func (m refusingMeter) RegisterCallback(f metric.Callback, insts ...metric.Observable) (metric.Registration, error) {
	if m.fail == "callback" {
		return nil, errRefused
	}
	return m.Meter.RegisterCallback(f, insts...)
}

// TestNewReportsRefusedInstrument: an instrument the meter refuses, or
// its refusal of the gauges' callback, is New's error, naming what was
// refused, and no Observer is returned.
func TestNewReportsRefusedInstrument(t *testing.T) {
	for _, name := range []string{"ratekeeper.requests", "ratekeeper.errors", "ratekeeper.decision.duration", "ratekeeper.given_back",
		"ratekeeper.failure_state", "ratekeeper.effective_limit", "ratekeeper.configured_limit", "callback"} {
		obs, err := otelmetrics.New(refusingProvider{fail: name})
		want := "otelmetrics: " + name + ": refused"
		if name == "callback" {
			want = "otelmetrics: registering the gauges' callback: refused"
		}
		if obs != nil || err == nil || err.Error() != want || !errors.Is(err, errRefused) {
			t.Errorf("meter refusing %s: New = %v, %v; want nil, %q", name, obs, err, want)
		}
	}
	if obs, err := otelmetrics.New(refusingProvider{}); obs == nil || err != nil {
		t.Errorf("meter refusing nothing: New = %v, %v; want an Observer", obs, err)
	}
}

// TestBucketsRefuseEitherInfinity: a bucket boundary of -Inf is refused
// as +Inf and NaN are.
func TestBucketsRefuseEitherInfinity(t *testing.T) {
	if obs, err := otelmetrics.New(refusingProvider{}, otelmetrics.WithBuckets(math.Inf(-1), 0.001)); obs != nil || err == nil {
		t.Errorf("WithBuckets(-Inf, 0.001): New = %v, %v; want an error", obs, err)
	}
}
