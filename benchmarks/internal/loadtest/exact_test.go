package loadtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// redisBinaryOrSkip returns the reason to skip the Redis parts, or fails t
// when there is no redis-server and RATEKEEPER_REQUIRE_REDIS is set. It
// returns "" when redis-server is there.
func redisSkipReason(t *testing.T) string {
	t.Helper()
	if _, err := RedisBinary(); err != nil {
		if os.Getenv(EnvRequireRedis) != "" {
			t.Fatalf("%v, and %s is set", err, EnvRequireRedis)
		}
		return err.Error() + " (set " + EnvRequireRedis + "=1 to make this a failure)"
	}
	return ""
}

// requireRedis starts a redis-server for t, or skips t with the reason when
// there is no redis-server and RATEKEEPER_REQUIRE_REDIS is unset.
func requireRedis(t *testing.T) *Redis {
	t.Helper()
	if reason := redisSkipReason(t); reason != "" {
		t.Skip("skipping the Redis part: " + reason)
	}
	r, err := StartRedis(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Stop() })
	return r
}

const reducedWindows = 10

// reducedExact is the CI-sized exactness run: 20 per 200ms, offered 5x for
// 10 windows (2 s per backend, the kinds in parallel), 64 connections.
func reducedExact(r *Redis, backends ...string) ExactConfig {
	return ExactConfig{Limit: 20, Window: 200 * time.Millisecond, Windows: reducedWindows, Factor: 5, Conns: 64, Redis: r, Parallel: true, Backends: backends}
}

// checkExact asserts what must hold whatever the machine's load: no request
// lost, the client saw exactly the store's decisions, the limiter was
// loaded, sliding_log never over-admitted, and (serialised runs) every
// decision is the model's.
func checkExact(t *testing.T, results []ExactResult, want int) {
	t.Helper()
	if got := len(results); got != want {
		t.Fatalf("RunExactness returned %d results, want %d", got, want)
	}
	for _, r := range results {
		name := r.Backend + " " + string(r.Spec.Algorithm)
		t.Logf("%-38s sent=%d 200=%d 429=%d other=%d admitted=%d model=%d differ=%d maxInW=%d over=%d late=%d",
			name, r.Sent, r.OK, r.Limited, r.Other, r.Admitted, r.Expected, r.Mismatches, r.MaxInWindow, r.OverAdmitted, r.Late)
		if r.Other != 0 {
			t.Errorf("%s: %d requests neither 200 nor 429 (first error %q)", name, r.Other, r.FirstError)
		}
		if r.OK != r.Admitted || r.Limited != r.Denied {
			t.Errorf("%s: client saw %d 200 and %d 429, store admitted %d and denied %d", name, r.OK, r.Limited, r.Admitted, r.Denied)
		}
		// No kind admits more than Limit·(Windows+1) in the run (a burst
		// of Limit, then Limit a window); past that some must be denied.
		// A slow machine may not reach the offered rate: then say so.
		most := int(r.Spec.Limit) * (reducedWindows + 1)
		switch {
		case r.Admitted == 0:
			t.Errorf("%s: nothing admitted", name)
		case r.Sent > most && r.Denied == 0:
			t.Errorf("%s: %d sent, more than any kind admits (%d), but none denied", name, r.Sent, most)
		case r.Sent <= most:
			t.Logf("%s: the load generator sent only %d (offered %.0f/s): the limiter was not loaded", name, r.Sent, r.Offered)
		}
		if r.Spec.Algorithm == algorithms.SlidingLog && (r.OverAdmitted != 0 || r.MaxInWindow > int(r.Spec.Limit)) {
			t.Errorf("%s: %d over-admissions, %d admitted within one window, limit %d", name, r.OverAdmitted, r.MaxInWindow, r.Spec.Limit)
		}
		if r.Expected >= 0 && (r.Mismatches != 0 || r.Admitted != r.Expected) {
			t.Errorf("%s: admitted %d, model %d, %d decisions differ from the model", name, r.Admitted, r.Expected, r.Mismatches)
		}
	}
}

func TestExactnessMemory(t *testing.T) {
	res, err := RunExactness(context.Background(), reducedExact(nil, BackendMemory, BackendMemoryConcurrent))
	if err != nil {
		t.Fatal(err)
	}
	checkExact(t, res, len(algorithms.Kinds)+1)
}

func TestExactnessRedis(t *testing.T) {
	r := requireRedis(t)
	res, err := RunExactness(context.Background(), reducedExact(r, BackendRedis, BackendRedisConcurrent))
	if err != nil {
		t.Fatal(err)
	}
	checkExact(t, res, len(algorithms.Kinds)+1)
}

func TestRunExactnessConfigErrors(t *testing.T) {
	good := reducedExact(nil)
	for _, tc := range []struct {
		name string
		edit func(*ExactConfig)
	}{
		{"Limit", func(c *ExactConfig) { c.Limit = 0 }},
		{"Window", func(c *ExactConfig) { c.Window = time.Microsecond }},
		{"Windows", func(c *ExactConfig) { c.Windows = 0 }},
		{"Factor", func(c *ExactConfig) { c.Factor = -1 }},
		{"Conns", func(c *ExactConfig) { c.Conns = 0 }},
		{"Backends", func(c *ExactConfig) { c.Backends = []string{BackendRedis} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.edit(&c)
			if _, err := RunExactness(context.Background(), c); err == nil {
				t.Fatalf("RunExactness with bad %s: nil error", tc.name)
			}
		})
	}
}
