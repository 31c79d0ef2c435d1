package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// modeGiveBack gives back the units of a Take, then peeks (giveback.lua).
const modeGiveBack = 5

var _ algorithms.GiveBacker = (*Store)(nil)

// GiveBack implements [algorithms.GiveBacker]: it gives back the units of
// the checks of an admitted Take by the rules of
// [algorithms.GiveBacker.GiveBack] and reports what a Take of the same
// checks would without consuming, in one script call (one per key on a
// Cluster whose keys span slots, as Refund does). It reads the Redis
// server's clock, or the injected one ([WithClock]), as Take does, while
// waited is the caller's: the Take's window, bucket or log instant is
// told by the nearest boundary to the caller's reckoning, so it is found
// while the round trip and the clocks' disagreement stay under half a
// window (half a sub-window for sliding_buckets); see the GiveBacker for
// what a reckoning off by δ does to the buckets and the log. A key Redis
// no longer holds has nothing to give back. A key holding a value the
// store did not write fails the call before anything is written (but a
// lost sliding_log total rebuilt, as in a Take: see Failures in the
// package documentation).
func (s *Store) GiveBack(ctx context.Context, dst []algorithms.Refunded, checks []algorithms.Check, ds []algorithms.Decision, waited time.Duration) error {
	if err := s.giveReady(ctx, "GiveBack", dst, checks, ds, waited); err != nil {
		return err
	}
	if len(checks) == 0 {
		return nil
	}
	if err := algorithms.ValidateChecks(checks); err != nil {
		return err
	}
	admitted := true // a denied Take consumed nothing: nothing to give back
	for i := range ds {
		admitted = admitted && ds[i].Allowed
	}
	vals := make([]any, len(checks))
	for i, c := range checks {
		switch {
		case !admitted:
			vals[i] = "n" // look only
		case c.Spec.Algorithm == algorithms.LeakyQueue:
			vals[i] = remArg(ds[i].Delay, waited)
		case c.Spec.Algorithm == algorithms.TokenBucket || c.Spec.Algorithm == algorithms.LeakyBucket:
			vals[i] = bucketArg(&ds[i], waited, c.Spec.Capacity())
		default:
			vals[i] = windowArg(ds[i].ResetAfter, waited)
		}
	}
	return s.give(ctx, "give-back", modeGiveBack, checks, vals, dst, parseGiveBack)
}

// parseGiveBack reads the give-back script's reply v for the checks idx of
// r (all when nil) into dst (indexed as r's checks).
func parseGiveBack(v any, r *request, idx []int, dst []algorithms.Refunded) error {
	n := len(r.checks)
	if idx != nil {
		n = len(idx)
	}
	got, ok := v.([]any)
	if !ok || len(got) != (replyWidth+1)*n {
		return fmt.Errorf("redisstore: unexpected give-back reply %v (%T)", v, v)
	}
	for k := range n {
		i := k
		if idx != nil {
			i = idx[k]
		}
		d, err := decodeDecision(got[k*replyWidth:], r.infos[i].capacity)
		if err != nil {
			return err
		}
		given, ok := got[replyWidth*n+k].(int64)
		if !ok {
			return fmt.Errorf("redisstore: unexpected give-back reply %v", got[replyWidth*n+k])
		}
		dst[i] = algorithms.Refunded{
			Decision: d,
			Given:    given == 1,
		}
	}
	return nil
}

// bucketArg returns what a bucket's give-back knows of its Take, as
// algorithms' bucketSeen does, as "r w q": r = reckonArg(ResetAfter,
// waited), w the part of waited r took off (r + w is the bounded
// ResetAfter when r > 0), and q the units the Take left in use, C −
// Remaining within [0, C]. All three are below 2^51.
func bucketArg(d *algorithms.Decision, waited time.Duration, capacity int64) string {
	const bound = 4 * int64(algorithms.MaxWindow)
	r := reckonArg(d.ResetAfter, waited)
	w := min(int64(waited), 2*bound)
	q := capacity - min(max(d.Remaining, 0), capacity)
	return strconv.FormatInt(r, 10) + " " + strconv.FormatInt(w, 10) + " " + strconv.FormatInt(q, 10)
}

// reckonArg returns ResetAfter - waited within ±4·MaxWindow, as
// algorithms' reckoned does, for the bucket kinds: a bucket admits only
// while it is full less than MaxWindow after the instant it decides at,
// so the bound changes no outcome, and the script's sums stay below 2^52.
// (The window kinds reckon within a wider bound: see windowArg.)
func reckonArg(resetAfter, waited time.Duration) int64 {
	const bound = 4 * int64(algorithms.MaxWindow)
	r := min(max(int64(resetAfter), -bound), bound)
	return max(r-min(int64(waited), 2*bound), -bound)
}

// windowArg returns ResetAfter - waited within ±(2^51 + 4·MaxWindow) for
// a window kind (fixed_window, sliding_window, sliding_buckets,
// sliding_log). Such a key decides, and gives back, at its latest instant
// te when t is earlier (a clock that went back), so a Take's E lies
// within 4·MaxWindow of te, not of t (algorithms' reckonedFrom bounds it
// so from te; its state spans less than 2·MaxWindow up to te), and the
// script keeps a state only while te is at most 2^51 ns ahead of t (see
// "Clocks that go back" in doc.go): the bound, reckoned from t, changes no
// outcome, and the script's sums stay below 2^52.
func windowArg(resetAfter, waited time.Duration) int64 {
	const bound = 1<<51 + 4*int64(algorithms.MaxWindow)
	r := min(max(int64(resetAfter), -bound), bound)
	return max(r-min(int64(waited), 2*bound), -bound)
}
