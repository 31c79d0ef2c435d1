package otelmetrics_test

import (
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/middleware/otelmetrics"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestWithAttributesGivenTwice: options are often put together from two
// lists (a base list of the application's, and a limiter's own), so
// WithAttributes may come twice. Its attributes add up, as its name says:
// the second does not silently drop the first, which would leave two
// Observers on one MeterProvider, told apart by the first, recording into
// the same series (their counters summed, their gauges overwriting each
// other). A key given in both is an error, as in one.
func TestWithAttributesGivenTwice(t *testing.T) {
	obs, reader := newObserver(t,
		otelmetrics.WithAttributes(attribute.String("limiter", "api")),
		otelmetrics.WithAttributes(attribute.String("region", "eu")))
	m := middleware.MustNew(memStore(t), []*policy.Policy{fixed("p", 5, user)}, middleware.WithObserver(obs))
	metrictest.KeepAlive(t, m)
	get(router(m), "/", "X-User", "ann")
	points, _ := collect(t, reader)
	wantLines(t, "collected", nonzero(points, "ratekeeper.requests")+"\n"+only(points, "ratekeeper.effective_limit")+"\n"+
		only(points, "ratekeeper.failure_state{limiter=api,region=eu,state=healthy}"),
		"ratekeeper.requests{limiter=api,outcome=allowed,policy=p,region=eu} 1",
		"ratekeeper.effective_limit{limiter=api,policy=p,region=eu} 5",
		"ratekeeper.failure_state{limiter=api,region=eu,state=healthy} 1",
	)

	_, err := otelmetrics.New(sdkmetric.NewMeterProvider(),
		otelmetrics.WithAttributes(attribute.String("limiter", "api")),
		otelmetrics.WithAttributes(attribute.String("limiter", "admin")))
	if err == nil || !strings.Contains(err.Error(), `otelmetrics: WithAttributes: key "limiter" given twice`) {
		t.Errorf("the key limiter in two WithAttributes: New = %v, want an error naming it given twice", err)
	}
}
