package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// The check CheckLines installs runs as a line's holder lets it go: a line
// whose turns are out of order, let go through unlock, is reported. The
// tests that run with CheckLines rely on it. Kills line.go:66's deleted
// (*check)(l) (no line was ever checked, and those tests could not fail
// on a broken line).
func TestLineCheckRunsOnUnlock(t *testing.T) {
	var broke []string
	defer CheckLines(func(why string) { broke = append(broke, why) })()
	at := time.Unix(1_700_000_000, 0)
	l := &line{sem: make(chan struct{}, 1)}
	l.pushBack(&turn{at: at.Add(time.Second)})
	l.pushBack(&turn{at: at})
	l.sem <- struct{}{}
	(&Transport{}).unlock("k", l)
	if len(broke) != 1 || !strings.Contains(broke[0], "behind one at") {
		t.Errorf("reported %q, want one turn behind a later one", broke)
	}
	if len(l.sem) != 0 {
		t.Error("the line is still held after unlock")
	}
}

// The lines nobody uses are swept when the map reaches twice the lines in
// use (64 at least): with no line in use, adding a 65th key first sweeps
// the 64 unused lines away; with 100 lines in use, the map grows to 128
// before a new key sweeps the unused ones, leaving the 100 and the new
// one. Kills line.go:190's len(ls.m) > ls.sweepAt (a sweep one line late),
// :196's max(65, …) and 3*len(ls.m) (a map a third larger before a sweep
// than the doc's "each time the map doubles").
func TestLinesSweptWhenMapDoubles(t *testing.T) {
	ls := &lines{m: map[string]*line{}}
	use := func(key string) { ls.release(ls.acquire(key)) }
	for i := range 64 {
		use(fmt.Sprint("a", i))
	}
	if n := len(ls.m); n != 64 {
		t.Fatalf("%d lines after 64 keys, want 64 (no sweep before)", n)
	}
	use("a64")
	if n := len(ls.m); n != 1 {
		t.Fatalf("%d lines after a 65th key, want 1 (the 64 unused swept)", n)
	}

	ls = &lines{m: map[string]*line{}}
	for i := range 100 {
		ls.acquire(fmt.Sprint("busy", i)) // in use: never released
	}
	for i := range 28 {
		use(fmt.Sprint("idle", i))
	}
	if n := len(ls.m); n != 128 {
		t.Fatalf("%d lines with 100 in use and 28 unused, want 128 (no sweep before)", n)
	}
	use("new")
	if n := len(ls.m); n != 101 {
		t.Errorf("%d lines after a new key, want 101 (the 100 in use and the new one)", n)
	}
	for i := range 100 {
		if l := ls.m[fmt.Sprint("busy", i)]; l == nil || l.refs != 1 {
			t.Fatalf("line busy%d swept or miscounted while in use: %+v", i, l)
		}
	}
}

// A request whose context ends while it waits for its line, which is free
// again by the time it gives its turn up, takes the turn out itself: the
// turn behind moves up to it (and is woken to sleep less), and the line is
// let go. At one per second, with turns at 1s and 2s in key's line and
// the line free, abandoning the first leaves the second at 1s, woken, and
// the line free. Kills line.go:90's deleted l.gmu.Unlock() (abandon
// deadlocked on the line's gone list as it let the line go), :91's deleted
// t.drop (the turn stayed in the line, the one behind at 2s) and :92's
// deleted t.unlock (the line held for ever). The tests that reach abandon
// through RoundTrip meet a busy line there, so none of these failed them.
func TestAbandonWithLineFree(t *testing.T) {
	clock := &stepClock{now: time.Unix(1_700_000_000, 0)}
	tr, err := New(roundTripFunc(nil), WithClock(clock), WithRate(1, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	l := tr.lines.acquire("k")
	defer tr.lines.release(l)
	now := clock.Now()
	first := &turn{at: now.Add(time.Second), queued: now}
	woken := false
	second := &turn{at: now.Add(2 * time.Second), queued: now, wake: func() { woken = true }}
	l.pushBack(first)
	l.pushBack(second)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	noHang(t, "abandon", func() { tr.abandon("k", l, goneTurn{ctx: ctx, tn: first}) })
	if l.head != second || l.tail != second || second.prev != nil {
		t.Error("the abandoned turn is still in the line")
	}
	if !second.at.Equal(now.Add(time.Second)) || !woken {
		t.Errorf("the turn behind is at %v (woken %v), want moved up to 1s and woken", second.at.Sub(now), woken)
	}
	if len(l.sem) != 0 {
		t.Error("the line is still held")
	}
}

// settleStore is a MemoryStore that counts the Takes asked of it, and
// fails them with err when it is set. With deaf set it answers even when
// the caller's context has ended (its answer raced the cancellation).
type settleStore struct {
	mem   *algorithms.MemoryStore
	err   error
	deaf  bool
	takes int
}

func (s *settleStore) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	s.takes++
	if s.err != nil {
		return nil, s.err
	}
	if s.deaf {
		ctx = context.Background()
	}
	return s.mem.Take(ctx, checks...)
}

func (s *settleStore) Refund(ctx context.Context, dst []algorithms.Refunded, checks []algorithms.Check, ds []algorithms.Decision, waited time.Duration) error {
	return s.mem.Refund(context.Background(), dst, checks, ds, waited)
}

// settleSetup returns a Transport pacing one per second with maxWait
// through a settleStore, the store, its clock's now and key k's line (held
// by the test, released at its end).
func settleSetup(t *testing.T, maxWait time.Duration) (*Transport, *settleStore, time.Time, *line) {
	t.Helper()
	clock := &stepClock{now: time.Unix(1_700_000_000, 0)}
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	store := &settleStore{mem: mem}
	tr, err := New(roundTripFunc(nil), WithClock(clock), WithRate(1, time.Second), WithMaxWait(maxWait), WithStore(store))
	if err != nil {
		t.Fatal(err)
	}
	l := tr.lines.acquire("k")
	t.Cleanup(func() { tr.lines.release(l) })
	return tr, store, clock.Now(), l
}

// noHang runs fn and fails the test if it has not returned within a few
// seconds of real time: a guard against a hang, not a wait.
func noHang(t *testing.T, what string, fn func()) {
	t.Helper()
	hangguard.Run(t, 5*time.Second, what+" did not return", fn)
}

// settleGuarded runs settle under noHang.
func settleGuarded(t *testing.T, tr *Transport, ctx context.Context, l *line, now time.Time) {
	t.Helper()
	noHang(t, "settle", func() { tr.settle(ctx, "k", l, now) })
}

// Outside a hold, settle leaves the requests that have turns as they are,
// and fails one behind without a turn whose turn would come too late when
// the last turn given out shows it already, without asking the store. At
// one per second with a maximum wait of 1s: the store gave out 0 (sent)
// and 1s to B; C, queued at 0, has none (as when a settle was cut short by
// its caller leaving). settle leaves B at 1s and fails C (2s: a wait of 2s)
// with no Take. Kills line.go:451's tn == nil (B was asked a new turn of
// the store, 2s, too late: B failed) and :452's deleted last = tn.at (C's
// lateness was asked of the store: a Take).
func TestSettleKeepsTurnsAhead(t *testing.T) {
	tr, store, now, l := settleSetup(t, time.Second)
	ctx := context.Background()
	for _, want := range []time.Duration{0, time.Second} {
		if d, err := tr.limiter.Allow(ctx, "k"); err != nil || d.Delay != want {
			t.Fatalf("store turn: %+v %v, want a delay of %v", d, err, want)
		}
	}
	store.takes = 0
	b := &turn{at: now.Add(time.Second), queued: now}
	c := &turn{queued: now}
	l.pushBack(b)
	l.pushBack(c)
	tr.settle(ctx, "k", l, now)
	if got := b.at.Sub(now); got != time.Second || b.err != nil {
		t.Errorf("B's turn at %v (%v), want kept at 1s", got, b.err)
	}
	var we *WaitError
	if !errors.As(c.err, &we) || we.Wait != 2*time.Second || we.Held {
		t.Errorf("C failed with %v, want a *WaitError of 2s, not held", c.err)
	}
	if store.takes != 0 {
		t.Errorf("%d Takes, want none (C's lateness is known without the store)", store.takes)
	}
}

// A store that fails settle's Take fails the request the turn was for, and
// the next asks again: with C and D in line without turns, outside a hold,
// and a store failing with boom, both fail with the pacing store's error,
// after a Take each. Kills line.go:488's deleted l.fail (C kept waiting,
// and D with it), :489's deleted tn = next (C failed over and over: settle
// never returned) and :490's deleted continue (D given a turn at once,
// asked of nobody).
func TestSettleStoreFails(t *testing.T) {
	tr, store, now, l := settleSetup(t, time.Minute)
	boom := errors.New("boom")
	store.err = boom
	c, d := &turn{queued: now}, &turn{queued: now}
	l.pushBack(c)
	l.pushBack(d)
	settleGuarded(t, tr, context.Background(), l, now)
	for name, tn := range map[string]*turn{"C": c, "D": d} {
		if !errors.Is(tn.err, boom) || !strings.HasPrefix(tn.err.Error(), "client: pacing store: ") || !tn.at.IsZero() {
			t.Errorf("%s: turn at %v, failed with %v; want the pacing store's error", name, tn.at, tn.err)
		}
	}
	if l.head != nil {
		t.Error("failed requests left in the line")
	}
	if store.takes != 2 {
		t.Errorf("%d Takes, want 2 (one for each request)", store.takes)
	}
}

// A settle whose caller leaves during its Take gives up, and wakes the
// requests still without a turn to take theirs; it fails none of them. A
// store that answers anyway (its answer raced the cancellation) is heeded:
// the turn it gave is given out. With C and D in line without turns and
// the caller's context ended: a store failing with the context's error
// leaves both waiting, woken, and one Take made; a store that answers
// gives C 1s and D 2s. Kills line.go:481's x == nil and :483's deleted
// x.wake() (C and D slept on, until their own waits ended) and :478's
// err != nil || ctx.Err() != nil (an answered Take taken for a failed one:
// its turn lost, C and D left without).
func TestSettleCallerGone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	t.Run("store fails", func(t *testing.T) {
		tr, store, now, l := settleSetup(t, time.Minute)
		store.err = context.Canceled
		woken := map[string]bool{}
		c := &turn{queued: now, wake: func() { woken["C"] = true }}
		d := &turn{queued: now, wake: func() { woken["D"] = true }}
		l.pushBack(c)
		l.pushBack(d)
		settleGuarded(t, tr, ctx, l, now)
		for name, tn := range map[string]*turn{"C": c, "D": d} {
			if tn.err != nil || !tn.at.IsZero() || !woken[name] {
				t.Errorf("%s: turn at %v, error %v, woken %v; want still waiting, woken", name, tn.at, tn.err, woken[name])
			}
		}
		if l.head != c || l.tail != d {
			t.Error("C and D are no longer the line")
		}
		if store.takes != 1 {
			t.Errorf("%d Takes, want 1", store.takes)
		}
	})
	t.Run("store answers", func(t *testing.T) {
		tr, store, now, l := settleSetup(t, time.Minute)
		store.deaf = true
		c, d := &turn{queued: now}, &turn{queued: now}
		l.pushBack(c)
		l.pushBack(d)
		settleGuarded(t, tr, ctx, l, now)
		for name, tc := range map[string]struct {
			tn   *turn
			want time.Duration
		}{"C": {c, 0}, "D": {d, time.Second}} {
			if got := tc.tn.at.Sub(now); tc.tn.at.IsZero() || got != tc.want || tc.tn.err != nil {
				t.Errorf("%s: turn at %v (zero %v, error %v), want %v", name, got, tc.tn.at.IsZero(), tc.tn.err, tc.want)
			}
		}
	})
}

// A store that denies settle's Take (its queue too long: other Transports
// sharing it took turns) fails the request with a *WaitError of the wait
// the store would have given it, and settle goes on. At one per second
// with a maximum wait of 1s, another Transport took 0 and 1s; C, alone in
// the line without a turn, fails with a wait of 2s, not held. Kills
// line.go:493's deleted late(…) (C kept waiting without a turn).
func TestSettleStoreDenies(t *testing.T) {
	tr, store, now, l := settleSetup(t, time.Second)
	for range 2 {
		if d, err := tr.limiter.Allow(context.Background(), "k"); err != nil || !d.Allowed {
			t.Fatalf("store turn: %+v %v", d, err)
		}
	}
	store.takes = 0
	c := &turn{queued: now}
	l.pushBack(c)
	settleGuarded(t, tr, context.Background(), l, now)
	var we *WaitError
	if !errors.As(c.err, &we) || we.Wait != 2*time.Second || we.Held || we.Deadline {
		t.Errorf("C failed with %v, want a *WaitError of 2s, not held", c.err)
	}
	if l.head != nil || store.takes != 1 {
		t.Errorf("line head %v after %d Takes, want C out after 1", l.head, store.takes)
	}
}
