package redisstore_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// TestStateAheadExactThresholds pins doc.go's "Clocks that go back" to the
// nanosecond, through the fast path (one check, on a limit of 1) and the
// general path (the check twice in one Take, on a limit of 2). After one
// request on a 24 h spec the injected
// clock steps back to just within and just past each threshold:
//
//   - the window kinds keep a state whose latest instant (the start of its
//     window, or sub-window) is 2^51 ns ahead of the instant, and decide as
//     the memory store does, with durations lengthened past 2^51 ns (exact
//     still); one 2^51+1 ns ahead is treated as expired;
//   - the bucket kinds and sliding_log keep a state whose stored whole
//     second s is 2·10^6 s from the instant's second (the instant is
//     (s−2·10^6)·10^9 ns), and treat it as expired one nanosecond earlier.
//
// Kept, Redis decides as the memory store, which keeps every state;
// expired, as a fresh memory store.
func TestStateAheadExactThresholds(t *testing.T) {
	ctx := context.Background()
	client := newClient(t)
	t0 := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	const far = 1 << 51
	for _, k := range algorithms.Kinds {
		spec := algorithms.Spec{Algorithm: k, Limit: 1, Window: 24 * time.Hour}
		if k == algorithms.SlidingBuckets {
			spec.Buckets = 4 // 6 h sub-windows: t0 starts one
		}
		for _, twice := range []bool{false, true} {
			c := algorithms.Check{Spec: spec, Key: "k"}
			if twice {
				// Two units, so that the check twice is a Take the key can
				// admit at once (see algorithms.ValidateChecks).
				c.Spec.Limit = 2
				if k == algorithms.LeakyQueue {
					c.Spec.MaxDelay = 12 * time.Hour // capacity 2
				}
			}
			for _, past := range []bool{false, true} {
				clk := &manualClock{t: t0}
				mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clk))
				if err != nil {
					t.Fatal(err)
				}
				prefix := uniquePrefix(t)
				rs := clockedStore(t, client, clk, redisstore.WithPrefix(prefix))
				for _, st := range []algorithms.Store{mem, rs} {
					if d, err := st.Take(ctx, c); err != nil || !d[0].Allowed {
						t.Fatalf("%s: first request = %+v, %v", k, d, err)
					}
				}
				var at time.Time
				switch k {
				case algorithms.FixedWindow, algorithms.SlidingWindow, algorithms.SlidingBuckets:
					latest := t0.Truncate(24 * time.Hour) // the window's start
					if k == algorithms.SlidingBuckets {
						latest = t0 // the sub-window's start
					}
					at = latest.Add(-far)
				default:
					at = time.Unix(storedSecond(t, client, prefix, c)-2_000_000, 0)
				}
				if past {
					at = at.Add(-1)
				}
				clk.t = at
				ref := algorithms.Store(mem)
				if past {
					if ref, err = algorithms.NewMemoryStore(algorithms.WithClock(clk)); err != nil {
						t.Fatal(err)
					}
				}
				want := sameTake(t, ref, rs, c, twice, fmt.Sprintf("%s, twice %v, past the threshold %v (clock at %s)", k, twice, past, at.Format(time.RFC3339Nano)))
				if !past && (k == algorithms.FixedWindow || k == algorithms.SlidingWindow) && want[0].ResetAfter <= far {
					t.Errorf("%s: kept state's ResetAfter %v, want it past 2^51 ns (the durations a late decision reports)", k, want[0].ResetAfter)
				}
			}
		}
	}
}

// storedSecond returns the whole second s of the instant check c's state
// holds in Redis under prefix: the "s n rem" of a bucket kind, the newest
// "s n cost" event of a sliding_log.
func storedSecond(t *testing.T, client *redis.Client, prefix string, c algorithms.Check) int64 {
	t.Helper()
	ctx := context.Background()
	keys := redisKeys(prefix, c)
	var v string
	var err error
	if c.Spec.Algorithm == algorithms.SlidingLog {
		v, err = client.LIndex(ctx, keys[1], -1).Result()
	} else {
		v, err = client.Get(ctx, keys[0]).Result()
	}
	if err != nil {
		t.Fatalf("%s: reading its state: %v", c.Spec, err)
	}
	s, err := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
	if err != nil {
		t.Fatalf("%s: state %q: %v", c.Spec, v, err)
	}
	return s
}

// modeHook records the script mode of each FCALL a client sends (see
// fcallMode), phase by phase.
type modeHook struct {
	redistest.PassHooks
	mu    sync.Mutex
	modes []string
}

func (h *modeHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if _, mode, ok := fcallMode(cmd); ok {
			h.mu.Lock()
			h.modes = append(h.modes, mode)
			h.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}

func (h *modeHook) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.modes
	h.modes = nil
	return m
}

// TestClusterCrossSlotRoundTrips checks doc.go's "an admitted cross-slot
// Take costs two parallel round trips, one that phase 1 denies one": on a
// three-node cluster, a Take whose five keys span five slots sends one
// peek (mode 3) per slot and, every check admitted, then one reservation
// (mode 1) per slot, every peek before any reservation; a denied one sends
// the peeks alone. A Take of one slot is one call.
func TestClusterCrossSlotRoundTrips(t *testing.T) {
	client := sharedCluster(t)
	hook := &modeHook{}
	client.AddHook(hook)
	s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: 24 * time.Hour}
	warmUp(t, client, algorithms.Check{Spec: spec, Key: "warm"}) // loads the library on every master
	hook.take()
	var checks []algorithms.Check
	for _, k := range keysOnThreeSlots() {
		checks = append(checks, algorithms.Check{Spec: spec, Key: k})
	}
	n := len(checks)
	want := func(what string, allowed bool, modes ...string) {
		t.Helper()
		d, err := s.Take(ctx, checks...)
		if err != nil {
			t.Fatal(err)
		}
		for i := range d {
			if d[i].Allowed != allowed {
				t.Fatalf("%s: check %d = %+v, want Allowed %v", what, i, d[i], allowed)
			}
		}
		if got := hook.take(); !slices.Equal(got, modes) {
			t.Fatalf("%s sent FCALLs of modes %v, want %v", what, got, modes)
		}
	}
	want("an admitted cross-slot Take", true, slices.Concat(slices.Repeat([]string{"3"}, n), slices.Repeat([]string{"1"}, n))...)
	want("a denied cross-slot Take", false, slices.Repeat([]string{"3"}, n)...)
	if _, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: "per-second:ip-9"}, algorithms.Check{Spec: spec, Key: "per-minute:ip-9"}); err != nil {
		t.Fatal(err)
	}
	if got := hook.take(); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("a Take of one slot sent FCALLs of modes %v, want one plain call", got)
	}
}

// contactHook counts the dials and commands of a client.
type contactHook struct {
	dials, cmds, pipes atomic.Int64
}

func (h *contactHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		h.dials.Add(1)
		return next(ctx, network, addr)
	}
}

func (h *contactHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.cmds.Add(1)
		return next(ctx, cmd)
	}
}

func (h *contactHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.pipes.Add(1)
		return next(ctx, cmds)
	}
}

// TestNewContactsNoRedis checks New's "It does not contact Redis": with
// every option, on a standalone and on a cluster client, New dials nothing
// and sends nothing; the first Take does (the library is loaded then).
func TestNewContactsNoRedis(t *testing.T) {
	srv := sharedServer(t)
	for _, tc := range []struct {
		name   string
		client func() redis.UniversalClient
	}{
		{"standalone", func() redis.UniversalClient { return redis.NewClient(&redis.Options{Addr: srv.Addr}) }},
		{"cluster", func() redis.UniversalClient {
			return redis.NewClusterClient(&redis.ClusterOptions{Addrs: sharedCluster(t).Options().Addrs})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := tc.client()
			defer client.Close()
			hook := &contactHook{}
			client.AddHook(hook)
			clk := &manualClock{t: time.Unix(1_800_000_000, 0)}
			s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)), redisstore.WithClock(clk),
				redisstore.WithMinTTL(time.Minute), redisstore.WithTimeout(time.Second),
				redisstore.WithCircuitBreaker(1, time.Second), redisstore.WithDenyCache(10))
			if err != nil {
				t.Fatal(err)
			}
			if d, c, p := hook.dials.Load(), hook.cmds.Load(), hook.pipes.Load(); d+c+p != 0 {
				t.Fatalf("New dialled %d times and sent %d commands and %d pipelines, want nothing", d, c, p)
			}
			if _, err := s.Take(context.Background(), everyKind("k")[0]); err != nil {
				t.Fatal(err)
			}
			if hook.cmds.Load() == 0 {
				t.Fatal("the first Take sent no command: the hook sees nothing")
			}
		})
	}
}

// infoInt returns the integer field name of Redis's INFO section.
func infoInt(t *testing.T, c *redis.Client, section, name string) int64 {
	t.Helper()
	info, err := c.Info(context.Background(), section).Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO %s: %s = %q", section, name, v)
			}
			return n
		}
	}
	t.Fatalf("INFO %s has no %s", section, name)
	return 0
}

// TestLibraryMemory checks doc.go's numbers for the function library on a
// server of its own: its code takes about 130 kB of function memory
// (INFO's used_memory_functions: about 120 kB of source, in the
// allocator's 128 KiB size class; 112 KiB until the bucket give-back's
// note, lua/notes.lua, took it past), and the fast path's memo of keys' last writes
// holds at most 4096 keys, about 1 MB for keys of about 50 bytes: after
// Takes of 24576 distinct keys (which would take some 7 MB unbounded),
// the library's Lua memory (used_memory_vm_functions, garbage included)
// has grown by well under 2.5 MB at every sample.
func TestLibraryMemory(t *testing.T) {
	srv := redistest.New(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	ctx := context.Background()
	s, err := redisstore.New(client)
	if err != nil {
		t.Fatal(err)
	}
	spec := algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 100, Window: time.Minute}
	code0 := infoInt(t, client, "memory", "used_memory_functions")
	if _, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: "per-minute:first"}); err != nil {
		t.Fatal(err)
	}
	if code := infoInt(t, client, "memory", "used_memory_functions") - code0; code < 100_000 || code > 150_000 {
		t.Errorf("the library takes %d bytes of function memory, want about 130 kB as doc.go says", code)
	}
	vm0 := infoInt(t, client, "memory", "used_memory_vm_functions")
	const keys, workers, sample = 6 * 4096, 4, 1024
	var most int64
	for from := 0; from < keys; from += sample {
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Go(func() {
				for i := from + w; i < from+sample; i += workers {
					// Keys as the policy layer writes them: "rk:{203.0.x.y}:per-minute:sw:100:60000000000:0:0:0".
					if _, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: fmt.Sprintf("per-minute:203.0.%d.%d", i/256, i%256)}); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		most = max(most, infoInt(t, client, "memory", "used_memory_vm_functions")-vm0)
	}
	if most > 2_500_000 {
		t.Fatalf("after Takes of %d keys the library's Lua memory grew by up to %d bytes, want the memo bounded (about 1 MB)", keys, most)
	}
	t.Logf("the library's Lua memory grew by at most %d bytes", most)
}

// commandCalls returns the calls of each command the server counted
// (INFO commandstats, which counts the commands scripts and functions run
// too) since its statistics were last reset.
func commandCalls(t *testing.T, c *redis.Client) map[string]int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int64{}
	for line := range strings.Lines(info) {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.Split(rest, ",")[0], 10, 64)
		if err != nil {
			t.Fatalf("INFO commandstats: %q", line)
		}
		calls[strings.TrimPrefix(name, "cmdstat_")] = n
	}
	return calls
}

// TestSlidingLogReadsLazily checks doc.go's "read lazily (a decision reads
// the newest event, the ones leaving the window, and for a wait only as
// many as it needs)" and that the list's layout is as documented: on a log
// of 1000 events written by the test as doc.go describes them (a total,
// and a list of "s n cost" events oldest first), a Take that none leaves
// and that is denied sends at most two LRANGEs (the newest event's chunk,
// the oldest's), where reading the whole list takes 32. It is decided as
// the memory store decides the same 1000 events.
func TestSlidingLogReadsLazily(t *testing.T) {
	srv := redistest.New(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	ctx := context.Background()
	t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	clk := &manualClock{t: t0}
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	prefix := uniquePrefix(t)
	rs := clockedStore(t, client, clk, redisstore.WithPrefix(prefix))
	c := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 1000, Window: time.Hour}, Key: "k"}
	warmUp(t, client, c) // loads the library
	keys := redisKeys(prefix, c)
	var items []any
	for i := range 1000 {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		clk.t = at
		if d, err := mem.Take(ctx, c); err != nil || !d[0].Allowed {
			t.Fatalf("memory store, event %d: %+v, %v", i, d, err)
		}
		items = append(items, fmt.Sprintf("%d %d 1", at.Unix(), at.Nanosecond()))
	}
	if err := client.RPush(ctx, keys[1], items...).Err(); err != nil {
		t.Fatal(err)
	}
	if err := client.Set(ctx, keys[0], "1000", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		client.Expire(ctx, k, 2*time.Hour)
	}
	clk.t = t0.Add(time.Second)
	if err := client.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	got, err := rs.Take(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	calls := commandCalls(t, client)
	want, err := mem.Take(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != want[0] || got[0].Allowed {
		t.Fatalf("Take on the written log = %+v, want %+v (denied)", got[0], want[0])
	}
	if calls["lrange"] > 2 {
		t.Fatalf("a denied Take on a log of 1000 events, none leaving, sent %d LRANGEs, want at most 2 (commands %v)", calls["lrange"], calls)
	}
}

// TestNoPatternLookups checks doc.go's "nothing is ever looked up by
// pattern (no KEYS or SCAN)": on a server of its own, Takes of every kind
// (plain, stacked, a key twice), Peeks, GiveBacks, Refunds, Resets and a
// sliding_log whose total is rebuilt send no KEYS, SCAN or other
// keyspace-wide command, counting those scripts and functions run.
func TestNoPatternLookups(t *testing.T) {
	srv := redistest.New(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	ctx := context.Background()
	prefix := uniquePrefix(t)
	clk := &manualClock{t: time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)}
	rs, err := redisstore.New(client, redisstore.WithClock(clk), redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	all := everyKind("k")
	for _, checks := range [][]algorithms.Check{all, everyKind("j")[:1], append(all[:2:2], all[:2]...)} {
		for range 6 {
			d, err := rs.Take(ctx, checks...)
			if err != nil {
				t.Fatal(err)
			}
			res := make([]algorithms.Refunded, len(checks))
			if err := rs.GiveBack(ctx, res, checks, d, 0); err != nil {
				t.Fatal(err)
			}
			if d, err = rs.Take(ctx, checks...); err != nil {
				t.Fatal(err)
			}
			if err := rs.Refund(ctx, res, checks, d, 0); err != nil {
				t.Fatal(err)
			}
			if err := rs.Peek(ctx, make([]algorithms.Decision, len(checks)), checks); err != nil {
				t.Fatal(err)
			}
			clk.t = clk.t.Add(100 * time.Millisecond)
		}
	}
	log := all[1]
	client.Del(ctx, redisKeys(prefix, log)[0]) // the total alone: rebuilt from the list
	if _, err := rs.Take(ctx, log); err != nil {
		t.Fatal(err)
	}
	if err := rs.Reset(ctx, all...); err != nil {
		t.Fatal(err)
	}
	calls := commandCalls(t, client)
	if calls["llen"] == 0 || calls["del"] == 0 {
		t.Fatalf("the server counted %v: want the commands scripts run counted too", calls)
	}
	for _, name := range []string{"keys", "scan", "randomkey", "dbsize", "flushdb", "flushall"} {
		if calls[name] > 0 {
			t.Errorf("the store sent %s %d times", strings.ToUpper(name), calls[name])
		}
	}
}

// TestTakeReplyLostIsSentAgain pins doc.go's "a Take may be sent again so,
// and then consumes twice, erring towards denying": go-redis (MaxRetries
// 3) sends a Take whose reply was lost after Redis ran it (io.EOF) again,
// and the key then holds both runs' units: the Take is admitted, and a
// Peek shows two of the five units gone, never fewer than one Take's.
func TestTakeReplyLostIsSentAgain(t *testing.T) {
	ctx := context.Background()
	srv := sharedServer(t)
	proxy := newReplyDropper(t, srv.Addr)
	client := redis.NewClient(&redis.Options{Addr: proxy.Addr(), MaxRetries: 3})
	defer client.Close()
	clk := &manualClock{t: time.Unix(1_700_000_000, 0)}
	store, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)), redisstore.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	c := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Minute}, Key: "k"}
	warmUp(t, client, algorithms.Check{Spec: c.Spec, Key: "warm"}) // loads the library
	proxy.armed.Store(true)
	d, err := store.Take(ctx, c)
	if proxy.dropped.Load() != 1 {
		t.Fatalf("the proxy dropped %d replies, want 1 (Take: %+v, %v)", proxy.dropped.Load(), d, err)
	}
	if err != nil || !d[0].Allowed {
		t.Fatalf("Take whose first reply was lost = %+v, %v; want admitted (sent again)", d, err)
	}
	if d[0].Remaining != 3 {
		t.Errorf("Take sent again reports Remaining %d, want 3 (the second run's: both consumed)", d[0].Remaining)
	}
	peek := make([]algorithms.Decision, 1)
	if err := store.Peek(ctx, peek, []algorithms.Check{c}); err != nil {
		t.Fatal(err)
	}
	if peek[0].Remaining != 3 {
		t.Errorf("after one Take sent twice, Peek reports Remaining %d, want 3", peek[0].Remaining)
	}
}

// TestSlidingWindowProductsPast2To52 checks doc.go's "ceil(prev·(W−e)/W)
// is taken on plain numbers exactly when the computed product prev·(W−e)
// is below 2^52" and "so is each product of the waits (slidingWait)" at
// products that a double cannot hold: a sliding_window of 10^9 per
// 33.554433 ms (L·W and prev·(W−e) up to 2^55) whose previous window
// counted prev units, close to 10^9, taken at the offsets e where rounding
// the product to a double would move its quotient's ceiling (and at a few
// others), alone (the fast path) and twice in one Take (the general path).
// Every decision is the memory store's.
func TestSlidingWindowProductsPast2To52(t *testing.T) {
	ctx := context.Background()
	client := newClient(t)
	const W = 33_554_433
	spec := algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 1_000_000_000, Window: W}
	type at struct{ prev, e int64 }
	var cases []at
	for prev := int64(999_999_999); len(cases) < 8 && prev > 999_999_000; prev-- {
		for e := int64(0); e < W; e++ {
			p := prev * (W - e)
			if p < 1<<52 {
				break
			}
			if r := int64(float64(p)); (p+W-1)/W != (r+W-1)/W {
				cases = append(cases, at{prev, e})
			}
		}
	}
	if len(cases) < 8 {
		t.Fatalf("found %d offsets where rounding moves the ceiling, want 8", len(cases))
	}
	cases = append(cases, at{999_999_999, 0}, at{999_999_999, 1}, at{999_999_999, W / 3}, at{999_999_999, W - 1})
	k := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC).UnixNano() / W
	clk := &manualClock{}
	mem, rs := pairedStores(t, client, clk)
	for i, tc := range cases {
		for _, twice := range []bool{false, true} {
			c := algorithms.Check{Spec: spec, Key: fmt.Sprint("k", i, twice)}
			clk.t = time.Unix(0, (k-1)*W)
			for _, st := range []algorithms.Store{mem, rs} {
				if d, err := st.Take(ctx, algorithms.Check{Spec: spec, Key: c.Key, Cost: tc.prev}); err != nil || !d[0].Allowed {
					t.Fatalf("filling the previous window: %+v, %v", d, err)
				}
			}
			clk.t = time.Unix(0, k*W+tc.e)
			sameTake(t, mem, rs, c, twice, fmt.Sprintf("prev %d, e = %d, twice %v", tc.prev, tc.e, twice))
		}
	}
}

// sameTake takes c (twice in one Take with twice) on the reference store
// ref and on rs, fails the test, naming what, where their decisions
// differ, and returns ref's.
func sameTake(t *testing.T, ref, rs algorithms.Store, c algorithms.Check, twice bool, what string) []algorithms.Decision {
	t.Helper()
	ctx := context.Background()
	checks := []algorithms.Check{c}
	if twice {
		checks = append(checks, c)
	}
	want, err := ref.Take(ctx, checks...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := rs.Take(ctx, checks...)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: check %d: redis %+v, want %+v", what, i, got[i], want[i])
		}
	}
	return want
}
