package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// gateHook holds the script calls on a key whose client key is one of
// gates until the test says how each ends, and fails those on "{fail}".
type gateHook struct {
	redistest.PassHooks
	gates map[string]*gate
}

type gate struct {
	entered chan struct{}
	outcome chan error // nil: the call goes on to Redis
}

func newGate() *gate { return &gate{entered: make(chan struct{}, 1), outcome: make(chan error, 1)} }

func (h *gateHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		if cmd.Name() == "fcall" && len(args) > 3 {
			key, _ := args[3].(string)
			if strings.Contains(key, "{fail}") {
				err := errors.New("ERR injected failure")
				cmd.SetErr(err)
				return err
			}
			for name, g := range h.gates {
				if strings.Contains(key, "{"+name+"}") {
					g.entered <- struct{}{}
					if err := <-g.outcome; err != nil {
						cmd.SetErr(err)
						return err
					}
				}
			}
		}
		return next(ctx, cmd)
	}
}

// TestBreakerOneProbeDespiteStaleFailure: a call let through while the
// circuit was closed that fails after the circuit opened, while the
// half-open probe is still in flight, is not the probe's outcome: it must
// not let a second probe through (the breaker lets one at a time), and the
// probe's success still closes the circuit.
func TestBreakerOneProbeDespiteStaleFailure(t *testing.T) {
	srv := sharedServer(t)
	stale, probe := newGate(), newGate()
	hook := &gateHook{gates: map[string]*gate{"stale": stale, "probe": probe}}
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
	defer client.Close()
	client.AddHook(hook)
	clk := &manualClock{t: time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)}
	s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)), redisstore.WithClock(clk), redisstore.WithCircuitBreaker(1, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Hour}
	take := func(key string) error {
		_, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: key})
		return err
	}
	if err := take("warm"); err != nil { // loads the library
		t.Fatal(err)
	}
	staleErr := make(chan error, 1)
	go func() { staleErr <- take("stale") }()
	<-stale.entered // let through while closed, still in flight
	if err := take("fail"); err == nil || errors.Is(err, redisstore.ErrCircuitOpen) {
		t.Fatalf("failing Take = %v, want the Redis error", err)
	}
	if err := take("other"); !errors.Is(err, redisstore.ErrCircuitOpen) {
		t.Fatalf("after the failure, Take = %v, want ErrCircuitOpen", err)
	}
	clk.t = clk.t.Add(10 * time.Second)
	probeErr := make(chan error, 1)
	go func() { probeErr <- take("probe") }()
	<-probe.entered // the probe is in flight
	stale.outcome <- errors.New("ERR stale failure")
	if err := <-staleErr; err == nil {
		t.Fatal("stale call: nil error, want its failure")
	}
	clk.t = clk.t.Add(10 * time.Second)
	if err := take("other"); !errors.Is(err, redisstore.ErrCircuitOpen) {
		t.Errorf("with the probe in flight after a stale call failed, Take = %v, want ErrCircuitOpen (a second probe went)", err)
	}
	probe.outcome <- nil
	if err := <-probeErr; err != nil {
		t.Fatalf("probe = %v", err)
	}
	if err := take("other"); err != nil {
		t.Fatalf("after the probe succeeded, Take = %v", err)
	}
}
