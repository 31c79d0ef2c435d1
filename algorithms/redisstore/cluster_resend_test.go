package redisstore_test

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// afterRun acts once armed, after the first script call of mode whose
// first key is key has run: it calls then (if set), and with lose it
// loses the call's reply: the node client reports io.EOF, as when the
// connection fails after the call was sent, and the cluster client sends
// the call again (the same arguments: the same reservation id).
type afterRun struct {
	redistest.PassHooks
	key, mode string
	lose      bool
	then      func()
	armed     atomic.Bool
	hits      atomic.Int64
	args      []any // the call's arguments, when it hit
}

func (h *afterRun) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if key, mode, ok := fcallMode(cmd); ok && key == h.key && mode == h.mode && err == nil && h.armed.CompareAndSwap(true, false) {
			h.hits.Add(1)
			h.args = append([]any(nil), cmd.Args()...)
			if h.then != nil {
				h.then()
			}
			if h.lose {
				cmd.SetErr(io.EOF)
				return io.EOF
			}
		}
		return err
	}
}

// resendCase is one run of TestClusterReservationReplyLostIsSentAgain.
type resendCase struct {
	spec    algorithms.Spec
	denied  bool // z lost a race between the phases
	between bool // another instance takes a unit of m after m's reservation ran
	race    int64
	// evict deletes m's reservation marker after the run, before the call
	// is sent again, as Redis under maxmemory evicts a key.
	evict bool
	// reset has another instance Reset m after the run, before the call
	// is sent again.
	reset bool
	// replay sends m's reservation, the same call, once more after the
	// Take returned (after its undo, denied): a copy delayed on its way.
	replay bool
}

// resendOutcome is what a run leaves: the Take's decisions, what a Peek
// of m and of z alone decides, and the PTTL of each reservation marker.
type resendOutcome struct {
	take   []algorithms.Decision
	mz     []algorithms.Decision
	marker []time.Duration
}

// markerKey matches a reservation's marker: a key of its slot plus ":r"
// and its id (cluster.go, reserve).
var markerKey = regexp.MustCompile(`:r[0-9a-f]{16}$`)

// raceCost returns the cost of another instance's Take of z after the
// first Take (m 2, z 1) such that one more Take of z alone is admitted
// and then the Take (m 2, z 1) is denied, on the Model.
func raceCost(t *testing.T, spec algorithms.Spec, m, z string) int64 {
	t.Helper()
	mc, zc := algorithms.Check{Spec: spec, Key: m, Cost: 2}, algorithms.Check{Spec: spec, Key: z}
	for c := int64(1); c <= 20; c++ {
		model := algotest.NewModel()
		at := algotest.Base
		take := func(cs ...algorithms.Check) bool {
			d, err := model.TakeAt(at, cs...)
			if err != nil {
				t.Fatal(err)
			}
			return d[len(d)-1].Allowed
		}
		if take(mc, zc) && take(algorithms.Check{Spec: spec, Key: z, Cost: c}) && take(zc) && !take(mc, zc) {
			return c
		}
	}
	t.Fatalf("%v: no race cost", spec)
	return 0
}

// model returns what the Model decides in the run of tc.
func (tc resendCase) model(t *testing.T, m, z string) resendOutcome {
	t.Helper()
	mc, zc := algorithms.Check{Spec: tc.spec, Key: m, Cost: 2}, algorithms.Check{Spec: tc.spec, Key: z}
	model := algotest.NewModel()
	at := algotest.Base
	take := func(cs ...algorithms.Check) []algorithms.Decision {
		d, err := model.TakeAt(at, cs...)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	take(mc, zc)
	if tc.denied {
		take(algorithms.Check{Spec: tc.spec, Key: z, Cost: tc.race})
		take(zc)
	}
	out := resendOutcome{take: take(mc, zc)}
	if tc.between {
		take(algorithms.Check{Spec: tc.spec, Key: m})
	}
	var err error
	if out.mz, err = model.PeekAt(at, algorithms.Check{Spec: tc.spec, Key: m}, zc); err != nil {
		t.Fatal(err)
	}
	return out
}

// run makes the run of tc on the shared cluster, losing the reply of m's
// reservation when lose, and returns what it leaves.
func (tc resendCase) run(t *testing.T, shared *redis.ClusterClient, m, z string, lose bool) resendOutcome {
	t.Helper()
	prefix := uniquePrefix(t)
	clk := algotest.NewClock(algotest.Base)
	mc, zc := algorithms.Check{Spec: tc.spec, Key: m, Cost: 2}, algorithms.Check{Spec: tc.spec, Key: z}
	// Both stores' timeouts are failure bounds (the Take under the hook
	// waits for other's Take between and for the call sent again): on a
	// loaded machine the default 2s ended a Take that was to decide.
	other, err := redisstore.New(shared, redisstore.WithClock(clk), redisstore.WithPrefix(prefix), redisstore.WithTimeout(slowMachineTimeout))
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSrv.Addrs()})
	defer client.Close()
	ctx := context.Background()
	hook := &afterRun{key: redisKeys(prefix, mc)[0], mode: "1", lose: lose}
	hook.then = func() {
		if tc.evict {
			mkey := redisKeys(prefix, mc)[0]
			n := 0
			for _, k := range keysUnder(t, shared, prefix) {
				if markerKey.MatchString(k) && strings.HasPrefix(k, mkey+":r") {
					n += int(shared.Del(ctx, k).Val())
				}
			}
			if n == 0 {
				t.Errorf("no marker of m's reservation to evict")
			}
		}
		if tc.reset {
			if err := other.Reset(ctx, algorithms.Check{Spec: tc.spec, Key: m}); err != nil {
				t.Errorf("other's Reset of m between = %v", err)
			}
		}
		if tc.between {
			if d, err := other.Take(ctx, algorithms.Check{Spec: tc.spec, Key: m}); err != nil || !d[0].Allowed {
				t.Errorf("other's Take of m between = %+v, %v", d, err)
			}
		}
	}
	client.OnNewNode(func(nc *redis.Client) { nc.AddHook(hook) })
	s, err := redisstore.New(client, redisstore.WithClock(clk), redisstore.WithPrefix(prefix), redisstore.WithTimeout(slowMachineTimeout))
	if err != nil {
		t.Fatal(err)
	}
	if d, err := s.Take(ctx, mc, zc); err != nil || !d[0].Allowed || !d[1].Allowed {
		t.Fatalf("first Take = %+v, %v", d, err)
	}
	if tc.denied {
		if d, err := other.Take(ctx, algorithms.Check{Spec: tc.spec, Key: z, Cost: tc.race}); err != nil || !d[0].Allowed {
			t.Fatalf("other's Take of z = %+v, %v", d, err)
		}
		client.AddHook(&beforeCall{key: redisKeys(prefix, zc)[0], mode: "1", do: func() {
			if d, err := other.Take(ctx, zc); err != nil || !d[0].Allowed {
				t.Errorf("racing Take of z = %+v, %v", d, err)
			}
		}})
	}
	hook.armed.Store(true)
	var out resendOutcome
	out.take, err = s.Take(ctx, mc, zc)
	if hook.hits.Load() != 1 {
		t.Fatalf("m's reservation ran %d times under the hook, want 1 (Take = %+v, %v)", hook.hits.Load(), out.take, err)
	}
	if err != nil {
		t.Fatalf("Take = %v", err)
	}
	if tc.replay {
		if err := shared.Do(ctx, hook.args...).Err(); err != nil {
			t.Fatalf("m's reservation sent once more = %v", err)
		}
	}
	out.mz = make([]algorithms.Decision, 2)
	if err := s.Peek(ctx, out.mz, []algorithms.Check{{Spec: tc.spec, Key: m}, zc}); err != nil {
		t.Fatal(err)
	}
	for _, k := range keysUnder(t, shared, prefix) {
		if markerKey.MatchString(k) {
			out.marker = append(out.marker, shared.PTTL(ctx, k).Val())
		}
	}
	return out
}

// resendEnv is the cluster of the lost-reply tests and their two keys:
// m, whose reservation loses its reply, on one node, and z on another.
type resendEnv struct {
	shared *redis.ClusterClient
	m, z   string
}

// eachLostReply runs check on a Take of m and z whose reservation of m
// lost its reply after it ran, for every kind, with z admitted and with z
// losing its race (denied), and with each of betweens (none: the case's
// default) as resendCase.between; set, if not nil, sets the case's other
// fields. The Take must admit m, and z unless denied.
func eachLostReply(t *testing.T, betweens []bool, set func(*resendCase), check func(t *testing.T, e resendEnv, tc resendCase, got resendOutcome)) {
	e := resendEnv{shared: sharedCluster(t)}
	e.m, _ = tagOnNode(t, e.shared, "moved", 0)
	e.z, _ = tagOnNode(t, e.shared, "stays", 2)
	for _, kind := range algorithms.Kinds {
		spec := algorithms.Spec{Algorithm: kind, Limit: 10, Window: time.Hour}
		switch kind {
		case algorithms.SlidingBuckets:
			spec.Buckets = 4
		case algorithms.LeakyQueue:
			spec.MaxDelay = time.Hour
		}
		race := raceCost(t, spec, e.m, e.z)
		for _, denied := range []bool{false, true} {
			name := fmt.Sprintf("%s/denied_%v", kind, denied)
			cases := []resendCase{{spec: spec, denied: denied, race: race}}
			if betweens != nil {
				cases = cases[:0]
				for _, between := range betweens {
					cases = append(cases, resendCase{spec: spec, denied: denied, race: race, between: between})
				}
			}
			for _, tc := range cases {
				if set != nil {
					set(&tc)
				}
				sub := name
				if betweens != nil {
					sub = fmt.Sprintf("%s/between_%v", name, tc.between)
				}
				t.Run(sub, func(t *testing.T) {
					got := tc.run(t, e.shared, e.m, e.z, true)
					lost := "its reply"
					if tc.evict {
						lost = "its reply and marker"
					}
					if len(got.take) != 2 || !got.take[0].Allowed || got.take[1].Allowed == tc.denied {
						t.Fatalf("Take whose reservation of m lost %s = %+v; want m admitted, z admitted %v", lost, got.take, !tc.denied)
					}
					check(t, e, tc, got)
				})
			}
		}
	}
}

// TestClusterReservationReplyLostIsSentAgain: a cross-slot Take whose
// reservation of m loses its reply after the script ran (io.EOF, as when
// the connection fails after the call was sent) is sent again by go-redis,
// the same call with the same reservation id, and that call must answer
// as the first run did without consuming again (cluster.go, reserve).
// For every kind, the Take decides, and leaves m and z, as the same Take
// whose reply arrived: admitted, m consumed once; denied (z lost a race
// to another instance between the phases), the undo gives back the one
// run, and the Take consumed nothing. Both are the Model's, the Take
// made once; with between, another instance's plain Take of m lands after
// the run and before the call sent again (it rewrites m's state, so the
// reservation's records in the key are gone), and the final state is
// still the Model's, but for a leaky_queue whose reservation is undone:
// its undo keeps the units when a request was counted since (doc.go,
// "Cluster"), with its reply lost or not.
// Before the fix, m was reserved twice: admitted, consumed twice; denied,
// the denial kept the first run's units.
func TestClusterReservationReplyLostIsSentAgain(t *testing.T) {
	eachLostReply(t, []bool{false, true}, nil, func(t *testing.T, e resendEnv, tc resendCase, got resendOutcome) {
		sent := tc.run(t, e.shared, e.m, e.z, false)
		for i, name := range []string{"m", "z"} {
			if got.take[i] != sent.take[i] {
				t.Errorf("the Take decides %s %+v, want %+v as when its reply arrives", name, got.take[i], sent.take[i])
			}
			if got.mz[i] != sent.mz[i] {
				t.Errorf("Peek of %s afterwards = %+v, want %+v as when the reply arrives", name, got.mz[i], sent.mz[i])
			}
		}
		want := tc.model(t, e.m, e.z)
		if !tc.between {
			for i, name := range []string{"m", "z"} {
				if got.take[i] != want.take[i] {
					t.Errorf("the Take decides %s %+v, want the Model's %+v", name, got.take[i], want.take[i])
				}
			}
		}
		kept := tc.denied && tc.between && tc.spec.Algorithm == algorithms.LeakyQueue
		for i, name := range []string{"m", "z"} {
			if got.mz[i] != want.mz[i] && !(kept && i == 0) {
				t.Errorf("Peek of %s afterwards = %+v, want the Model's %+v", name, got.mz[i], want.mz[i])
			}
		}
		if kept && got.mz[0].Remaining != want.mz[0].Remaining-2 {
			t.Errorf("Peek of m afterwards = %+v, want the Model's %+v less the place kept (2 units)", got.mz[0], want.mz[0])
		}
		// A marker per reservation (both of the first Take's,
		// then m's and z's, a denied one's too: see
		// TestClusterDeniedResendStopsTheAbandonedReservation), each
		// expiring within a minute.
		if n := 4; len(got.marker) != n || len(sent.marker) != n {
			t.Errorf("%d reservation markers (%d when the reply arrives), want %d", len(got.marker), len(sent.marker), n)
		}
		for _, pttl := range append(got.marker, sent.marker...) {
			if pttl <= 0 || pttl > time.Minute {
				t.Errorf("a reservation marker expires in %v, want within a minute", pttl)
			}
		}
	})
}

// TestClusterReservationReplyLostServerClock: on the server's clock, where
// the call sent again would decide at a later instant, it answers the
// first run's reply all the same: m consumed once (10-2-2 left of a limit
// of 10 an hour, which the milliseconds of the test do not refill by a
// unit), as the Take reports.
func TestClusterReservationReplyLostServerClock(t *testing.T) {
	shared := sharedCluster(t)
	m, _ := tagOnNode(t, shared, "moved", 0)
	z, _ := tagOnNode(t, shared, "stays", 2)
	for _, kind := range []algorithms.Kind{algorithms.SlidingLog, algorithms.TokenBucket} {
		t.Run(string(kind), func(t *testing.T) {
			prefix := uniquePrefix(t)
			spec := algorithms.Spec{Algorithm: kind, Limit: 10, Window: time.Hour}
			mc, zc := algorithms.Check{Spec: spec, Key: m, Cost: 2}, algorithms.Check{Spec: spec, Key: z}
			client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSrv.Addrs()})
			defer client.Close()
			hook := &afterRun{key: redisKeys(prefix, mc)[0], mode: "1", lose: true}
			client.OnNewNode(func(nc *redis.Client) { nc.AddHook(hook) })
			s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithTimeout(slowMachineTimeout))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if d, err := s.Take(ctx, mc, zc); err != nil || !d[0].Allowed || !d[1].Allowed {
				t.Fatalf("first Take = %+v, %v", d, err)
			}
			hook.armed.Store(true)
			d, err := s.Take(ctx, mc, zc)
			if hook.hits.Load() != 1 {
				t.Fatalf("%d replies lost, want 1 (Take = %+v, %v)", hook.hits.Load(), d, err)
			}
			if err != nil || !d[0].Allowed || !d[1].Allowed || d[0].Remaining != 6 {
				t.Fatalf("Take whose reservation of m lost its reply = %+v, %v; want both admitted, m's Remaining 6", d, err)
			}
			pk := make([]algorithms.Decision, 1)
			if err := s.Peek(ctx, pk, []algorithms.Check{{Spec: spec, Key: m}}); err != nil {
				t.Fatal(err)
			}
			if pk[0].Remaining != 6 {
				t.Errorf("m has %d remaining, want 6 (consumed once)", pk[0].Remaining)
			}
		})
	}
}

// TestClusterReservationMarkerEvicted: a reservation's marker that Redis
// evicts (maxmemory with a volatile-* policy, which takes the keys
// nearest their expiry, markers among the first, or an allkeys-* one)
// before go-redis sends the call again leaves the call to run again, as a
// marker expired does (doc.go, "Failures"): m consumed twice, admitted or
// denied (the undo gives back the run it heard of), so never more left
// than the Model's, with the Take made once: erring towards denying.
func TestClusterReservationMarkerEvicted(t *testing.T) {
	eachLostReply(t, nil, func(tc *resendCase) { tc.evict = true }, func(t *testing.T, e resendEnv, tc resendCase, got resendOutcome) {
		want := tc.model(t, e.m, e.z)
		if got.mz[0].Remaining != want.mz[0].Remaining-2 {
			t.Errorf("Peek of m afterwards = %+v, want the Model's %+v less the run sent again (2 units)", got.mz[0], want.mz[0])
		}
		if got.mz[1] != want.mz[1] {
			t.Errorf("Peek of z afterwards = %+v, want the Model's %+v", got.mz[1], want.mz[1])
		}
	})
}

// TestClusterReservationResetBeforeSentAgain: another instance's Reset of
// m between the run of m's reservation and the call go-redis sends again
// (its reply lost) forgets the run, as any Reset forgets what came before
// it; the call sent again finds the marker, which the Reset leaves, and
// consumes nothing on the key made anew: m is left full, admitted or
// denied (the undo then finds nothing of its run in m and gives nothing
// back). Without the marker the call would run again on the new key.
func TestClusterReservationResetBeforeSentAgain(t *testing.T) {
	eachLostReply(t, nil, func(tc *resendCase) { tc.reset = true }, func(t *testing.T, e resendEnv, tc resendCase, got resendOutcome) {
		if full := tc.spec.Capacity(); got.mz[0].Remaining != full {
			t.Errorf("Peek of m afterwards = %+v, want %d remaining (reset, nothing consumed since)", got.mz[0], full)
		}
		if want := tc.model(t, e.m, e.z); got.mz[1] != want.mz[1] {
			t.Errorf("Peek of z afterwards = %+v, want the Model's %+v", got.mz[1], want.mz[1])
		}
	})
}

// TestClusterReservationSentAgainAfterItsUndo: a copy of m's reservation
// call that reaches Redis only after the Take returned (one sent before
// go-redis gave up on its connection and held up on its way, while the
// call sent again answered) finds the marker, which the undo leaves, and
// consumes nothing: admitted, m consumed once; denied, after the undo
// gave back the one run, m as the Model's with the Take consuming
// nothing. The undo stays exact.
func TestClusterReservationSentAgainAfterItsUndo(t *testing.T) {
	eachLostReply(t, nil, func(tc *resendCase) { tc.replay = true }, func(t *testing.T, e resendEnv, tc resendCase, got resendOutcome) {
		want := tc.model(t, e.m, e.z)
		for i, name := range []string{"m", "z"} {
			if got.mz[i] != want.mz[i] {
				t.Errorf("Peek of %s afterwards = %+v, want the Model's %+v", name, got.mz[i], want.mz[i])
			}
		}
	})
}
