package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// watchedKey marks the context of the call a flushHook watches.
type watchedKey struct{}

// flushHook records the commands of the calls on a context marked with
// watchedKey, and, before the watched call's n-th FCALL (from 1) is sent,
// runs before(n), if set.
type flushHook struct {
	redistest.PassHooks
	before func(n int)

	mu     sync.Mutex
	fcalls int
	cmds   []string
}

func (h *flushHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if ctx.Value(watchedKey{}) == nil {
			return next(ctx, cmd)
		}
		name := cmd.Name()
		if name == "function" {
			if a := cmd.Args(); len(a) > 1 {
				name += " " + strings.ToLower(fmt.Sprint(a[1]))
			}
		}
		h.mu.Lock()
		h.cmds = append(h.cmds, name)
		if name == "fcall" {
			h.fcalls++
		}
		n := h.fcalls
		h.mu.Unlock()
		if name == "fcall" && h.before != nil {
			h.before(n)
		}
		return next(ctx, cmd)
	}
}

// sent returns the watched calls' commands since the last sent, and
// forgets them.
func (h *flushHook) sent() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.cmds
	h.cmds, h.fcalls = nil, 0
	return c
}

// TestFunctionFlushedAgainAfterAnotherLoad: a call X finds the function
// missing twice, each time just after another call's load ended and
// FUNCTION FLUSH removed the library again (before each of X's FCALLs:
// another call loads the library, then it is flushed). X takes each of
// those loads for one its FCALL may have preceded, and calls again; the
// second time it must not take the function still missing for a
// redirection (to a cluster node the load did not reach), since no load
// followed its FCALL: it loads the library then and runs as the function.
// Before, the second load's answer was ignored: X ran as the script
// (EVALSHA, EVAL) and so, for 10 s, did every call that found the
// function missing, loading nothing, though the library could be loaded.
// A go-redis hook counts the commands of X, and of a call after one more
// flush; every decision is checked.
func TestFunctionFlushedAgainAfterAnotherLoad(t *testing.T) {
	srv, h, take, flush := newFlushRig(t)
	take(context.Background(), "warm", 9) // the library loaded

	watched := context.WithValue(context.Background(), watchedKey{}, true)
	h.before = func(n int) {
		if n > 2 {
			return
		}
		// Another call loads the library (it finds it missing), then
		// it is flushed: X's FCALL finds it missing, after a load that
		// ended since X read the count of loads.
		flush()
		take(context.Background(), fmt.Sprintf("other-%d", n), 9)
		flush()
	}
	take(watched, "x", 9)
	h.before = nil
	got := h.sent()
	if slices.Contains(got, "evalsha") || slices.Contains(got, "eval") {
		t.Errorf("X, which found the function missing after others' loads and flushes, ran as the script: commands %q; want it to load the library and run as the function", got)
	}
	if n := strings.Count(strings.Join(got, ","), "function load"); n != 1 {
		t.Errorf("X loaded the library %d times (commands %q), want once", n, got)
	}

	// One more flush: the next call loads the library again, as after
	// any flush, rather than run as the script for 10 s.
	flush()
	take(watched, "y", 9)
	if got, want := h.sent(), []string{"fcall", "function load", "fcall"}; !slices.Equal(got, want) {
		t.Errorf("a call after one more FUNCTION FLUSH sent %q, want %q (the library loaded again)", got, want)
	}
	list, err := srv.Do("FUNCTION", "LIST")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(list, "ratekeeper_") {
		t.Errorf("FUNCTION LIST = %q, want the store's library loaded", list)
	}
	// The keys' state: each admitted once.
	take(context.Background(), "x", 8)
	take(context.Background(), "y", 8)
}

// TestFunctionFlushedAfterTheCallsOwnLoad: a call X finds the function
// missing, loads the library, and FUNCTION FLUSH removes it again before
// X calls the function again (as concurrent flushes do). On a
// *redis.Client no call is ever redirected to another node, so the
// function missing after X's own load says the library went again: X
// loads it once more and runs as the function. Before, X took the server
// for a node a redirection reached (see call): it ran as the script, and
// so, for 10 s, did every call that found the function missing, loading
// nothing (with Takes in 8 goroutines and FUNCTION FLUSH every
// millisecond, some 3,900 of 3,950 calls ran as the script, 1 to 3
// loads).
func TestFunctionFlushedAfterTheCallsOwnLoad(t *testing.T) {
	_, h, take, flush := newFlushRig(t)
	take(context.Background(), "warm", 9)
	flush()

	watched := context.WithValue(context.Background(), watchedKey{}, true)
	h.before = func(n int) {
		if n == 2 { // after X's own load
			flush()
		}
	}
	take(watched, "x", 9)
	h.before = nil
	if got, want := h.sent(), []string{"fcall", "function load", "fcall", "function load", "fcall"}; !slices.Equal(got, want) {
		t.Errorf("X, whose library was flushed after its own load, sent %q, want %q (loaded again, run as the function)", got, want)
	}
	flush()
	take(watched, "y", 9)
	if got, want := h.sent(), []string{"fcall", "function load", "fcall"}; !slices.Equal(got, want) {
		t.Errorf("a call after one more FUNCTION FLUSH sent %q, want %q (the library loaded again)", got, want)
	}
	take(context.Background(), "x", 8)
	take(context.Background(), "y", 8)
}

// newFlushRig starts a redis-server and a store on a *redis.Client whose
// commands h watches, and returns them with take, which takes a unit of a
// fixed window of 10 an hour on key and requires it admitted with
// remaining left, and flush, which sends FUNCTION FLUSH to the server.
func newFlushRig(t *testing.T) (srv *redistest.Server, h *flushHook, take func(ctx context.Context, key string, remaining int64), flush func()) {
	t.Helper()
	srv = redistest.New(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { client.Close() })
	h = &flushHook{}
	client.AddHook(h)
	s, err := redisstore.New(client, redisstore.WithTimeout(loadBound))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour}
	take = func(ctx context.Context, key string, remaining int64) {
		t.Helper()
		d, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: key})
		if err != nil || !d[0].Allowed || d[0].Remaining != remaining {
			t.Fatalf("Take(%s) = %+v, %v; want admitted with Remaining %d", key, d, err, remaining)
		}
	}
	flush = func() {
		t.Helper()
		if _, err := srv.Do("FUNCTION", "FLUSH"); err != nil {
			t.Fatal(err)
		}
	}
	return srv, h, take, flush
}

// TestFunctionMissingAfterEveryLoad: on a *redis.Client where the function
// is missing after each of a call's loads (FUNCTION FLUSH before every
// FCALL here; a proxy that sends FUNCTION LOAD to one server and FCALL to
// another would do the same), the call gives up after loadTries loads and
// runs as the script, and so, for 10 s, do the calls that find the
// function missing, loading nothing: the library (about 120 kB) is not
// sent three times more with every call. Before, the next call loaded it
// three times again, and so did every call after it: seven round trips a
// Take (found by today's review).
func TestFunctionMissingAfterEveryLoad(t *testing.T) {
	_, h, take, flush := newFlushRig(t)
	take(context.Background(), "warm", 9)

	watched := context.WithValue(context.Background(), watchedKey{}, true)
	h.before = func(int) { flush() }
	take(watched, "x", 9)
	want := []string{"fcall", "function load", "fcall", "function load", "fcall", "function load", "fcall", "evalsha", "eval"}
	if got := h.sent(); !slices.Equal(got, want) {
		t.Errorf("X, the function missing after each of its loads, sent %q, want %q (three loads, then the script)", got, want)
	}
	take(watched, "y", 9)
	if got, want := h.sent(), []string{"fcall", "evalsha"}; !slices.Equal(got, want) {
		t.Errorf("the call after X sent %q, want %q (the script, no load)", got, want)
	}
	h.before = nil
	take(context.Background(), "x", 8)
	take(context.Background(), "y", 8)
}
