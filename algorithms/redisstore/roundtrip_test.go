package redisstore_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// countHook counts the commands and pipelines a client sends.
type countHook struct {
	mu        sync.Mutex
	cmds      []string
	pipelines int
}

func (h *countHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (h *countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.mu.Lock()
		h.cmds = append(h.cmds, cmd.Name())
		h.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (h *countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.mu.Lock()
		h.pipelines++
		h.mu.Unlock()
		return next(ctx, cmds)
	}
}

func (h *countHook) reset() {
	h.mu.Lock()
	h.cmds, h.pipelines = nil, 0
	h.mu.Unlock()
}

func (h *countHook) snapshot() ([]string, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.cmds...), h.pipelines
}

// everyKind returns one check of each kind, on distinct keys and on one key.
func everyKind(key string) []algorithms.Check {
	var cs []algorithms.Check
	for _, k := range algorithms.Kinds {
		s := algorithms.Spec{Algorithm: k, Limit: 5, Window: time.Second}
		switch k {
		case algorithms.SlidingBuckets:
			s.Buckets = 10
		case algorithms.LeakyQueue:
			s.MaxDelay = time.Second
		}
		cs = append(cs, algorithms.Check{Spec: s, Key: key})
	}
	return cs
}

// TestOneRoundTripPerTake counts, with a go-redis hook, the commands every
// Take sends: exactly one EVALSHA, however many checks, of whichever kinds,
// on the server's clock and on an injected one.
func TestOneRoundTripPerTake(t *testing.T) {
	srv := sharedServer(t)
	for _, injected := range []bool{false, true} {
		name := "server_time"
		if injected {
			name = "injected_clock"
		}
		t.Run(name, func(t *testing.T) {
			client := redis.NewClient(&redis.Options{Addr: srv.Addr})
			defer client.Close()
			hook := &countHook{}
			client.AddHook(hook)
			opts := []redisstore.Option{redisstore.WithPrefix(uniquePrefix(t))}
			if injected {
				clk := &manualClock{t: time.Unix(1_800_000_000, 0)}
				opts = append(opts, redisstore.WithClock(clk))
			}
			s, err := redisstore.New(client, opts...)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			all := everyKind("k")
			// The first call may load the script (EVALSHA, NOSCRIPT, EVAL).
			if _, err := s.Take(ctx, all[0]); err != nil {
				t.Fatal(err)
			}
			hook.reset()
			takes := 0
			for n := 1; n <= len(all); n++ {
				for _, checks := range [][]algorithms.Check{all[:n], everyKind("other")[len(all)-n:]} {
					if _, err := s.Take(ctx, checks...); err != nil {
						t.Fatal(err)
					}
					takes++
				}
			}
			dst := make([]algorithms.Decision, 4)
			if err := s.TakeInto(ctx, dst, all[:4]); err != nil {
				t.Fatal(err)
			}
			takes++
			cmds, pipes := hook.snapshot()
			if len(cmds) != takes || pipes != 0 {
				t.Fatalf("%d Takes sent %d commands %v and %d pipelines, want one command each", takes, len(cmds), cmds, pipes)
			}
			for _, c := range cmds {
				if c != "evalsha" {
					t.Fatalf("Take sent %q, want evalsha (commands %v)", c, cmds)
				}
			}
		})
	}
}

// TestScriptFlushed: after SCRIPT FLUSH the store reloads the script (EVAL
// on NOSCRIPT) and goes on deciding.
func TestScriptFlushed(t *testing.T) {
	client := newClient(t)
	s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// A token bucket refilling 5 per day: nothing refills during the test.
	check := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 5, Window: 24 * time.Hour}, Key: "k"}
	for i := range 3 {
		if err := client.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		d, err := s.Take(ctx, check)
		if err != nil {
			t.Fatalf("Take after SCRIPT FLUSH: %v", err)
		}
		if got, want := d[0].Remaining, int64(4-i); got != want {
			t.Fatalf("Take %d: Remaining = %d, want %d", i, got, want)
		}
	}
}
