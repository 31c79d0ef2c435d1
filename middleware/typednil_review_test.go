package middleware_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestTypedNilRefusedAtConstruction: a nil pointer in an interface (a
// *MemoryStore or *prommetrics.Metrics variable never assigned) is not an
// interface nil, so "== nil" let it through and New panicked (an
// observer's ObserveLimit) or the first request did (the store). Each is
// refused at construction, the error naming what is nil.
func TestTypedNilRefusedAtConstruction(t *testing.T) {
	var (
		nilStore   *algorithms.MemoryStore
		nilMetrics *prommetrics.Metrics
		nilClock   *algotestClock
	)
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ps := []*policy.Policy{policy.Must(policy.PerSecond("p", 10, keyfunc.Must(keyfunc.IP())))}
	cases := []struct {
		name  string
		store algorithms.Store
		opts  []middleware.Option
		want  string
	}{
		{"store", nilStore, nil, "middleware: store is nil"},
		{"observer", store, []middleware.Option{middleware.WithObserver(nilMetrics)}, "middleware: WithObserver: observer is nil"},
		{"fallback", store, []middleware.Option{middleware.OnStoreError(middleware.FallBack(nilStore))}, "middleware: OnStoreError: FallBack store is nil"},
		{"clock", store, []middleware.Option{middleware.WithClock(nilClock)}, "middleware: WithClock: clock is nil"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("New panicked: %v", p)
					}
				}()
				_, err = middleware.New(c.store, ps, c.opts...)
			}()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("New: %v; want an error saying %q", err, c.want)
			}
		})
	}
}

// algotestClock is a Clock type whose nil pointer stands for a clock
// never assigned.
type algotestClock struct{ t time.Time }

func (c *algotestClock) Now() time.Time { return c.t }
