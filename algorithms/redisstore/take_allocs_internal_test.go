package redisstore

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/redis/go-redis/v9"
)

// cannedReplies answers every FCALL with each check admitted, and records
// the last command, without a server: what it measures is the store's
// own work on a Take (and go-redis's command, without its connection).
type cannedReplies struct{ last redis.Cmder }

func (*cannedReplies) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *cannedReplies) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.last = cmd
		if c, ok := cmd.(*redis.Cmd); ok {
			n := (len(c.Args()) - 3) / 2 // one key and one argument per check
			v := make([]any, 0, 4*n)
			for range n {
				v = append(v, int64(1999999), int64(0), int64(1000), int64(1000))
			}
			c.SetVal(v)
		}
		return nil
	}
}
func (*cannedReplies) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// allocChecks returns n checks on the Specs the Take benchmark decides (benchChecks
// of benchmarks/algorithms/redisstore, a module of its own this test cannot
// import), so that the allocations counted here are the benchmark's.
func allocChecks(n int) []algorithms.Check {
	specs := []algorithms.Spec{
		{Algorithm: algorithms.TokenBucket, Limit: 1_000_000, Window: time.Second},
		{Algorithm: algorithms.SlidingWindow, Limit: 10_000_000, Window: 10 * time.Second},
		{Algorithm: algorithms.FixedWindow, Limit: 10_000_000, Window: time.Hour},
		{Algorithm: algorithms.LeakyBucket, Limit: 1_000_000, Window: time.Second},
	}
	cs := make([]algorithms.Check, n)
	for i := range cs {
		cs[i] = algorithms.Check{Spec: specs[i%len(specs)], Key: "client"}
	}
	return cs
}

// TestTakeCommandAsFCall: a Take's FCALL is the command go-redis's FCall
// makes of the same keys and arguments (the same values of the same types,
// the first key at position 3, which a Cluster routes by), and its
// allocations are bounded: a Take of one check allocated 11 times on a
// client answering without a server (its context and timer 5, go-redis's
// argument slice 1 and its boxing of the function's name and of each key,
// the Cmd 1, the reply's integers, the key 1), four checks 17.
func TestTakeCommandAsFCall(t *testing.T) {
	h := new(cannedReplies)
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer client.Close()
	client.AddHook(h)
	s, err := New(client, WithPrefix("p"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		checks    int
		maxAllocs float64
	}{{1, 10}, {4, 16}} {
		checks := allocChecks(tc.checks)
		dst := make([]algorithms.Decision, tc.checks)
		if err := s.TakeInto(ctx, dst, checks); err != nil {
			t.Fatal(err)
		}
		if !dst[0].Allowed || dst[0].Remaining != 999999 {
			t.Fatalf("%d checks: decision %+v, want the canned reply's", tc.checks, dst[0])
		}
		sent, ok := h.last.(*redis.Cmd)
		if !ok {
			t.Fatalf("%d checks: sent %T, want a *redis.Cmd", tc.checks, h.last)
		}
		args := sent.Args()
		keys := make([]string, tc.checks)
		for i := range keys {
			keys[i] = args[3+i].(string)
		}
		want := redis.NewCmd(ctx)
		probe := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
		probe.AddHook(&captured{cmd: &want})
		probe.FCall(ctx, takeFunction, keys, args[3+len(keys):]...)
		_ = probe.Close()
		if !reflect.DeepEqual(args, want.Args()) {
			t.Errorf("%d checks: sent %#v, FCall sends %#v", tc.checks, args, want.Args())
		}
		if got, want := keyPos(sent), keyPos(want); got != want {
			t.Errorf("%d checks: first key at %d, FCall's at %d", tc.checks, got, want)
		}
		if raceEnabled {
			continue // sync.Pool drops requests at random under the race detector
		}
		if a := testing.AllocsPerRun(200, func() {
			if err := s.TakeInto(ctx, dst, checks); err != nil {
				t.Fatal(err)
			}
		}); a > tc.maxAllocs {
			t.Errorf("Take of %d checks: %v allocations, want at most %v", tc.checks, a, tc.maxAllocs)
		}
	}
}

// keyPos reads the first key's position a command was given
// (SetFirstKeyPos), which go-redis does not export.
func keyPos(cmd *redis.Cmd) int64 {
	return reflect.ValueOf(cmd).Elem().FieldByName("keyPos").Int()
}

// captured records the command a client would send, and sends nothing.
type captured struct{ cmd **redis.Cmd }

func (*captured) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *captured) ProcessHook(redis.ProcessHook) redis.ProcessHook {
	return func(_ context.Context, cmd redis.Cmder) error {
		*c.cmd = cmd.(*redis.Cmd)
		return nil
	}
}
func (*captured) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
