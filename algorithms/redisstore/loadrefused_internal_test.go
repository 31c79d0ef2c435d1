package redisstore

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// loadCounter counts the FUNCTION LOAD commands a client sends, and those
// the server accepted.
type loadCounter struct {
	redistest.PassHooks
	sent, loaded atomic.Int64
}

func (h *loadCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if a := cmd.Args(); len(a) >= 2 && strings.EqualFold(cmd.Name(), "function") && strings.EqualFold(a[1].(string), "load") {
			h.sent.Add(1)
			if err == nil { // the client sets cmd's error after its hooks
				h.loaded.Add(1)
			}
		}
		return err
	}
}

// TestLoadRefusedNotResent: on a server that lost the library and refuses
// to load it again as it refuses any write (at its maxmemory: OOM; a
// read-only replica: READONLY), a Peek runs as the script, which it
// answers, but every Peek sent FUNCTION LOAD with the whole library
// (about 120 kB) first, refused again. The store remembers the refusal:
// for the refusedCalls calls after one, a call runs as the script without
// loading, so at most one load in refusedCalls+1 calls; no decision
// changes (the script is the same code), a Take that would write still
// fails, and once the server accepts writes again, the library is loaded
// again within refusedCalls+1 calls and runs the calls.
func TestLoadRefusedNotResent(t *testing.T) {
	ctx := context.Background()
	c := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Hour}, Key: "refused"}
	for _, how := range []string{"maxmemory", "replica"} {
		t.Run(how, func(t *testing.T) {
			var srv *redistest.Server
			if how == "replica" {
				// A replica of a master that is not there: read-only,
				// and its data (none) served stale.
				srv = redistest.New(t, "--replicaof", "127.0.0.1", strconv.Itoa(unusedPort(t)))
			} else {
				srv = redistest.New(t)
			}
			admin := redis.NewClient(&redis.Options{Addr: srv.Addr})
			defer admin.Close()
			loads := &loadCounter{}
			client := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
			defer client.Close()
			client.AddHook(loads)
			clk := algotest.NewClock(time.Date(2026, 11, 30, 7, 0, 10, 0, time.UTC))
			s, err := New(client, WithClock(clk))
			if err != nil {
				t.Fatal(err)
			}
			remaining := int64(5)
			if how == "maxmemory" {
				if _, err := s.Take(ctx, c, c); err != nil { // 3 left, and the library loaded
					t.Fatal(err)
				}
				remaining = 3
				if err := admin.FunctionFlush(ctx).Err(); err != nil {
					t.Fatal(err)
				}
				if err := admin.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
					t.Fatal(err)
				}
			}
			peek := func(when string, i int) {
				t.Helper()
				dst := make([]algorithms.Decision, 1)
				if err := s.Peek(ctx, dst, []algorithms.Check{c}); err != nil || dst[0].Allowed != (remaining > 0) || dst[0].Remaining != remaining {
					t.Fatalf("%s, Peek %d = %+v, %v; want %d left", when, i, dst[0], err, remaining)
				}
			}
			loads.sent.Store(0)
			loads.loaded.Store(0)
			const calls = 2*refusedCalls + 5
			for i := range calls {
				peek("refusing writes", i)
				if i%50 == 0 {
					if ds, err := s.Take(ctx, c); err == nil { // a write: refused
						t.Fatalf("refusing writes, Take %d = %+v, nil error; want the server's refusal", i, ds)
					}
				}
			}
			calls2 := calls + calls/50 + 1
			if n, most := loads.sent.Load(), int64(1+calls2/(refusedCalls+1)); n < 1 || n > most {
				t.Fatalf("refusing writes: %d FUNCTION LOAD sent in %d calls; want 1 to %d (one per %d calls at most)", n, calls2, most, refusedCalls+1)
			}
			if n := loads.loaded.Load(); n != 0 {
				t.Fatalf("refusing writes: %d FUNCTION LOAD accepted", n)
			}
			// The server accepts writes again.
			if how == "replica" {
				err = admin.Do(ctx, "REPLICAOF", "NO", "ONE").Err()
			} else {
				err = admin.ConfigSet(ctx, "maxmemory", "0").Err()
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i <= refusedCalls && loads.loaded.Load() == 0; i++ {
				peek("writable again", i)
			}
			if loads.loaded.Load() != 1 {
				t.Fatalf("writable again: the library was not loaded in %d calls", refusedCalls+1)
			}
			loads.sent.Store(0)
			for i := range 10 {
				if _, err := s.Take(ctx, c); err != nil {
					t.Fatalf("writable again, Take %d: %v", i, err)
				}
				remaining = max(remaining-1, 0)
				peek("writable again, after a Take", i)
			}
			if n := loads.sent.Load(); n != 0 {
				t.Fatalf("writable again, library loaded: %d FUNCTION LOAD sent", n)
			}
		})
	}
}

// unusedPort returns a port nothing listens on (one just freed).
func unusedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
