package algorithms_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// diffClock reads a shared algotest.Clock; hook, when set, runs once in the
// next Now, after it has read the instant it returns (a Take that read
// the clock and then waited for its shard's lock), with the clock reading
// sweepAt for the calls hook makes (a Sweep at a later instant).
type diffClock struct {
	base    *algotest.Clock
	pinned  bool
	sweepAt time.Time
	hook    func()
}

func (c *diffClock) Now() time.Time {
	if c.pinned {
		return c.sweepAt
	}
	t := c.base.Now()
	if h := c.hook; h != nil {
		c.hook = nil
		c.pinned = true
		h()
		c.pinned = false
	}
	return t
}

// judgedDiffKinds are the kinds a check can be judged at a limit of its
// own under.
var judgedDiffKinds = []algorithms.Kind{algorithms.FixedWindow, algorithms.SlidingWindow, algorithms.SlidingLog, algorithms.SlidingBuckets}

// judgedDiffSpecs returns two or three Specs for a run: all of kind k, or
// of random window kinds when k is "".
func judgedDiffSpecs(r *rand.Rand, k algorithms.Kind) []algorithms.Spec {
	specs := make([]algorithms.Spec, 2+r.IntN(2))
	for i := range specs {
		kind := k
		if kind == "" {
			kind = judgedDiffKinds[r.IntN(len(judgedDiffKinds))]
		}
		s := algorithms.Spec{
			Algorithm: kind,
			Limit:     []int64{2, 3, 5, 8, 20, 100}[r.IntN(6)],
			Window:    []time.Duration{time.Second, 10 * time.Second, time.Minute}[r.IntN(3)],
		}
		if kind == algorithms.SlidingBuckets {
			s.Buckets = []int{1, 2, 4, 5, 10}[r.IntN(5)]
		}
		specs[i] = s
	}
	return specs
}

// TestTakeOneJudgedHeldMatchesTakeSteps is a differential test of
// TakeOne's decision in place of a check judged at a limit of its own
// (Check.Limit) on a held key (f1274d6): random runs of checks, judged
// ones among others, go to two stores reading one injected clock, with
// the same hash seed. The judged ones go through TakeOne on the first and
// through the steps of a Take of several checks (takeJudged, which TakeOne
// took before for every judged check) on the second; the others through
// TakeOne on both. Every Decision and error must be the same, so must
// every Sweep's count and, at the end, the store's size and a Peek of
// every key under every Spec (at its own limit and a judged one) now and
// later. The unjudged checks go through TakeOne on the first store and
// Take on the second. The runs take in every window kind, alone or mixed
// in a shard, stores bounded by WithMaxKeys or not, limits judged below
// the key's count and above the Spec's (up to MaxLimit, for the kinds
// whose limit can be raised; the unjudged checks then decide on counts
// above their limit), costs above 1 and invalid ones, denied checks, long idle gaps,
// a clock that goes back, sweeps (between a check's reading the clock and
// its taking the lock too) and Resets.
func TestTakeOneJudgedHeldMatchesTakeSteps(t *testing.T) {
	seeds := uint64(600) // about 17 s under -race on the CI machine; each run draws its own hash seed
	if testing.Short() {
		seeds = 200
	}
	for seed := range seeds {
		kind := algorithms.Kind("")
		if seed%5 < 4 {
			kind = judgedDiffKinds[seed%5]
		}
		if msg := runJudgedDiff(seed, kind, 400); msg != "" {
			t.Fatalf("seed %d (%s): %s", seed, kind, msg)
		}
	}
}

// runJudgedDiff runs one random run and returns "" or what differed, with
// the run's steps up to there.
func runJudgedDiff(seed uint64, kind algorithms.Kind, steps int) string {
	r := rand.New(rand.NewPCG(seed, 0x6a756467))
	specs := judgedDiffSpecs(r, kind)
	keys := make([]string, 3+r.IntN(10))
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	start := time.Unix(int64(r.IntN(1000))-500, int64(r.IntN(1e9)))
	base := algotest.NewClock(start)
	fc, sc := &diffClock{base: base}, &diffClock{base: base}
	var bound []algorithms.MemoryOption
	if r.IntN(2) == 0 {
		bound = append(bound, algorithms.WithMaxKeys(2+r.IntN(len(keys)*len(specs))))
	}
	fast, err := algorithms.NewMemoryStore(append([]algorithms.MemoryOption{algorithms.WithClock(fc)}, bound...)...)
	if err != nil {
		return err.Error()
	}
	slow, err := algorithms.NewMemoryStore(append([]algorithms.MemoryOption{algorithms.WithClock(sc)}, bound...)...)
	if err != nil {
		return err.Error()
	}
	algorithms.ShareSeed(slow, fast)
	var log []string
	fail := func(format string, args ...any) string {
		return fmt.Sprintf("specs %v, bound %v, start %v:\n\t%s\n%s", specs, len(bound) > 0, start.UnixNano(), strings.Join(log, "\n\t"), fmt.Sprintf(format, args...))
	}
	same := func(what string, fd, sd algorithms.Decision, ferr, serr error) string {
		if fmt.Sprint(ferr) != fmt.Sprint(serr) || fmt.Sprintf("%T", ferr) != fmt.Sprintf("%T", serr) {
			return fail("%s: TakeOne error %v (%T), the steps of a Take %v (%T)", what, ferr, ferr, serr, serr)
		}
		if fd != sd {
			return fail("%s: TakeOne decided %+v, the steps of a Take %+v", what, fd, sd)
		}
		if ferr == nil && (fd.Remaining < 0 || fd.Remaining > fd.Limit || fd.Allowed == (fd.RetryAfter > 0) || fd.Remaining < fd.Limit && fd.NextAfter <= 0) {
			return fail("%s: both decided %+v, which is not sane (Remaining in [0, Limit], RetryAfter only when denied, NextAfter below Limit)", what, fd)
		}
		return ""
	}
	peekAll := func(when string) string {
		checks := make([]algorithms.Check, 0, 2*len(specs)*len(keys))
		for _, sp := range specs {
			for _, k := range keys {
				checks = append(checks, algorithms.Check{Spec: sp, Key: k}, algorithms.Check{Spec: sp, Key: k, Limit: max(1, sp.Limit/2)})
				if sp.Algorithm.Raisable() {
					checks = append(checks, algorithms.Check{Spec: sp, Key: k, Limit: 2 * sp.Limit})
				}
			}
		}
		fd := make([]algorithms.Decision, len(checks))
		sd := make([]algorithms.Decision, len(checks))
		for i := range checks {
			// One at a time: a Peek of checks of one key under one
			// Spec counts them together.
			ferr := fast.Peek(ctx, fd[i:i+1], checks[i:i+1])
			serr := slow.Peek(ctx, sd[i:i+1], checks[i:i+1])
			if msg := same(fmt.Sprintf("Peek %s of %+v", when, checks[i]), fd[i], sd[i], ferr, serr); msg != "" {
				return msg
			}
		}
		return ""
	}
	for step := range steps {
		sp := specs[r.IntN(len(specs))]
		c := algorithms.Check{Spec: sp, Key: keys[r.IntN(len(keys))]}
		switch op := r.IntN(28); {
		case op >= 24:
			// A Take of two to four checks, judged ones among others,
			// through TakeInto on one store (held keys decided in place
			// by takeHeld) and through decideMany's steps alone on the
			// other.
			checks := make([]algorithms.Check, 2+r.IntN(3))
			for i := range checks {
				sp := specs[r.IntN(len(specs))]
				checks[i] = algorithms.Check{Spec: sp, Key: keys[r.IntN(len(keys))], Cost: 1 + r.Int64N(min(sp.Limit, 3))}
				switch r.IntN(5) {
				case 0:
				case 1:
					if sp.Algorithm.Raisable() {
						checks[i].Limit = sp.Limit + 1 + r.Int64N(3*sp.Limit)
						if r.IntN(3) == 0 {
							// A cost above the Spec's limit, within the
							// raised one.
							checks[i].Cost = sp.Limit + 1 + r.Int64N(checks[i].Limit-sp.Limit)
						}
						break
					}
					fallthrough
				case 2:
					if r.IntN(4) == 0 {
						// The ends and just past them: MaxLimit (an
						// error for sliding_log), a cost above the
						// judged limit, a limit out of range.
						lim := []int64{algorithms.MaxLimit, algorithms.MaxLimit + 1, -1, 1, sp.Limit + 1}[r.IntN(5)]
						checks[i].Limit = lim
						if lim >= 1 && r.IntN(2) == 0 {
							checks[i].Cost = lim + 1
						}
						break
					}
					fallthrough
				default:
					checks[i].Limit = checks[i].Cost + r.Int64N(sp.Limit-checks[i].Cost+1)
				}
			}
			fd := make([]algorithms.Decision, len(checks))
			sd := make([]algorithms.Decision, len(checks))
			ferr := fast.TakeInto(ctx, fd, checks)
			serr := algorithms.TakeIntoSteps(ctx, slow, sd, checks)
			log = append(log, fmt.Sprintf("%d: Take %+v at %v: %+v %v", step, checks, base.Now().Sub(start), sd, serr))
			for i := range checks {
				if msg := same(fmt.Sprintf("check %d of a Take of %d", i, len(checks)), fd[i], sd[i], ferr, serr); msg != "" {
					return msg
				}
			}
		case op < 13:
			// A judged check: mostly valid, a few invalid ones; for the
			// kinds whose limit can be raised, above the Spec's a
			// third of the time (just above, a few times it, MaxLimit).
			switch r.IntN(10) {
			case 0:
				c.Limit = 1
			case 1:
				c.Limit = sp.Limit
			case 2:
				c.Limit = []int64{sp.Limit + 1, -1, algorithms.MaxLimit + 1}[r.IntN(3)]
			default:
				c.Limit = 1 + r.Int64N(sp.Limit)
				if sp.Algorithm.Raisable() && r.IntN(3) == 0 {
					c.Limit = []int64{sp.Limit + 1, sp.Limit + 1 + r.Int64N(3*sp.Limit), algorithms.MaxLimit}[r.IntN(3)]
				}
			}
			lim := max(c.Limit, 1)
			switch r.IntN(8) {
			case 0:
				c.Cost = 0
			case 1:
				c.Cost = lim
			case 2:
				c.Cost = []int64{lim + 1, -1, sp.Limit}[r.IntN(3)]
			default:
				c.Cost = 1 + r.Int64N(min(lim, 3))
			}
			if r.IntN(12) == 0 {
				// A Sweep at a later instant between the check's reading
				// of the clock and its taking its shard's lock.
				d := time.Duration(r.Int64N(int64(2 * sp.Window)))
				at := base.Now().Add(d)
				fc.sweepAt, sc.sweepAt = at, at
				fc.hook = func() { fast.Sweep() }
				sc.hook = func() { slow.Sweep() }
				log = append(log, fmt.Sprintf("%d: (a sweep %v later before the lock)", step, d))
			}
			fd, ferr := fast.TakeOne(ctx, c)
			sd, serr := algorithms.TakeJudgedSteps(ctx, slow, c)
			log = append(log, fmt.Sprintf("%d: judged %s %s limit %d cost %d at %v: %+v %v", step, c.Spec, c.Key, c.Limit, c.Cost, base.Now().Sub(start), sd, serr))
			if msg := same("a judged check", fd, sd, ferr, serr); msg != "" {
				return msg
			}
		case op < 16:
			// At the Spec's limit, through TakeOne on one and a Take on
			// the other (on a count a raised limit may have taken past
			// the Spec's).
			c.Cost = 1 + r.Int64N(min(sp.Limit, 3))
			fd, ferr := fast.TakeOne(ctx, c)
			var sd algorithms.Decision
			sds, serr := slow.Take(ctx, c)
			if serr == nil {
				sd = sds[0]
			}
			log = append(log, fmt.Sprintf("%d: %s %s cost %d at %v: %+v %v", step, c.Spec, c.Key, c.Cost, base.Now().Sub(start), sd, serr))
			if msg := same("a check at the Spec's limit", fd, sd, ferr, serr); msg != "" {
				return msg
			}
		case op < 21:
			var d time.Duration
			switch r.IntN(5) {
			case 0:
				d = time.Duration(r.Int64N(int64(sp.Window / 8)))
			case 1:
				d = time.Duration(r.Int64N(int64(2 * sp.Window)))
			case 2:
				d = time.Duration(r.Int64N(int64(10 * sp.Window))) // an idle gap
			case 3:
				d = -time.Duration(r.Int64N(int64(2 * sp.Window))) // back
			default:
				d = -time.Duration(r.Int64N(int64(sp.Window / 4)))
			}
			base.Advance(d)
			log = append(log, fmt.Sprintf("%d: clock %+v", step, d))
		case op < 22:
			fn, sn := fast.Sweep(), slow.Sweep()
			log = append(log, fmt.Sprintf("%d: Sweep at %v: %d", step, base.Now().Sub(start), sn))
			if fn != sn {
				return fail("Sweep dropped %d keys of TakeOne's store, %d of the other", fn, sn)
			}
		case op < 23:
			algorithms.SweepDue(fast)
			algorithms.SweepDue(slow)
			log = append(log, fmt.Sprintf("%d: SweepDue", step))
		default:
			ferr, serr := fast.Reset(ctx, c), slow.Reset(ctx, c)
			log = append(log, fmt.Sprintf("%d: Reset %s %s", step, c.Spec, c.Key))
			if fmt.Sprint(ferr) != fmt.Sprint(serr) {
				return fail("Reset: %v and %v", ferr, serr)
			}
		}
		if fl, sl := fast.Len(), slow.Len(); fl != sl {
			return fail("TakeOne's store holds %d keys, the other %d", fl, sl)
		}
	}
	for _, d := range []time.Duration{0, specs[0].Window / 3, specs[0].Window, 3 * specs[0].Window} {
		base.Advance(d)
		if msg := peekAll(fmt.Sprintf("%v after the run", d)); msg != "" {
			return msg
		}
	}
	return ""
}

// TestTakeOneJudgedHeldConcurrent runs checks judged at a limit of their
// own on held keys through TakeOne from several goroutines, while others
// fill and sweep the shard's other Specs' tables (dropping and compacting
// them, which makes their tables dead between a lookup and a lock), on a
// clock that moves by milliseconds (run it with -race). Each key judged at
// l, of a Spec of limit L > l and a window of an hour, whose state nothing
// drops (it is never idle once counted), must have admitted exactly l
// units once every goroutine is done.
func TestTakeOneJudgedHeldConcurrent(t *testing.T) {
	for _, k := range judgedDiffKinds {
		t.Run(string(k), func(t *testing.T) {
			clk := algotest.NewClock(epoch.Add(1500 * time.Millisecond))
			s, err := algorithms.NewMemoryStore(algorithms.WithClock(clk))
			if err != nil {
				t.Fatal(err)
			}
			spec := algorithms.Spec{Algorithm: k, Limit: 100, Window: time.Hour}
			if k == algorithms.SlidingBuckets {
				spec.Buckets = 4
			}
			const keys, lim = 16, 37
			for i := range keys {
				take(t, s, algorithms.Check{Spec: spec, Key: fmt.Sprint("j", i), Limit: lim})
			}
			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				admitted = map[string]int64{}
				errs     []error
			)
			for g := range 4 {
				wg.Go(func() {
					r := rand.New(rand.NewPCG(uint64(g), 1))
					for range 3000 {
						c := algorithms.Check{Spec: spec, Key: fmt.Sprint("j", r.IntN(keys)), Limit: lim, Cost: 1 + r.Int64N(2)}
						d, err := s.TakeOne(ctx, c)
						if err != nil {
							mu.Lock()
							errs = append(errs, err)
							mu.Unlock()
							return
						}
						if d.Allowed {
							mu.Lock()
							admitted[c.Key] += c.Cost
							mu.Unlock()
						}
					}
				})
			}
			for g := range 2 {
				wg.Go(func() {
					for i := range 300 {
						// Specs that come and go: each is emptied by the
						// next Sweep: a window of a few ms.
						other := algorithms.Spec{Algorithm: k, Limit: 5, Window: time.Duration(1+i%7) * time.Millisecond}
						if k == algorithms.SlidingBuckets {
							other.Buckets = 1
						}
						if _, err := s.TakeOne(ctx, algorithms.Check{Spec: other, Key: fmt.Sprint("o", g, i)}); err != nil {
							mu.Lock()
							errs = append(errs, err)
							mu.Unlock()
							return
						}
						if i%3 == 0 {
							// 10ms on: the other Specs' keys idle,
							// the hour of the judged ones unchanged.
							clk.Advance(10 * time.Millisecond)
							s.Sweep()
						}
					}
				})
			}
			wg.Wait()
			if len(errs) > 0 {
				t.Fatal(errors.Join(errs...))
			}
			for i := range keys {
				key := fmt.Sprint("j", i)
				// The first check of each key counted one unit.
				if got := admitted[key] + 1; got != lim {
					t.Errorf("key %s admitted %d units judged at %d within its hour, want %d", key, got, lim, lim)
				}
			}
		})
	}
}
