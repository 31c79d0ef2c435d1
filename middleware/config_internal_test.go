package middleware

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// The in-memory store that a configuration's failure_mode fallback gets
// when the caller brings none is bounded: during an outage of the shared
// store, a client rotating its keys must not grow it without limit. The
// bound is lowered here so that the test fills it quickly.
func TestConfigFallbackStoreIsBounded(t *testing.T) {
	defer func(n int) { fallbackMaxKeys = n }(fallbackMaxKeys)
	fallbackMaxKeys = 512
	p := policy.Must(policy.Per("day", 10, 24*time.Hour, keyfunc.Global()))
	opts, err := ConfigOptions(&policy.Config{FailureMode: policy.FailureFallback, Policies: []*policy.Policy{p}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var m Middleware
	for _, o := range opts {
		if err := o(&m); err != nil {
			t.Fatal(err)
		}
	}
	store, ok := m.failure.store.(*algorithms.MemoryStore)
	if m.failure.mode != fallBack || !ok {
		t.Fatalf("failure %+v: want a fallback to a *algorithms.MemoryStore", m.failure)
	}
	spec := p.Spec()
	for i := range 4 * fallbackMaxKeys {
		if _, err := store.TakeOne(context.Background(), algorithms.Check{Spec: spec, Key: "k" + strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := store.Len(); n > fallbackMaxKeys {
		t.Errorf("fallback store holds %d keys after %d distinct ones; want at most %d", n, 4*fallbackMaxKeys, fallbackMaxKeys)
	}
}
