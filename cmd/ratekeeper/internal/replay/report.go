package replay

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// A Report is the outcome of a replay.
type Report struct {
	First, Last time.Time
	// Requests counts the requests at least one policy applied to;
	// Rejected those the policies together would have rejected (429);
	// NoKey those rejected for want of a key (400 or 403); Unmatched those
	// no policy applied to.
	Requests, Rejected, NoKey, Unmatched int64
	// Late counts the requests logged further out of time order than
	// Reorder (Options.Reorder): replayed after requests later than them
	// (a run of them further behind decided apart, as a log of its own).
	Late int64
	// LateMax is the most a late request was logged behind the newest one
	// before it: a Reorder above it would have replayed every one in order.
	LateMax time.Duration
	Reorder time.Duration
	// Hurried counts the requests replayed before the reorder window had
	// passed over them, to hold at most Options.MaxHeld lines; while it
	// did, the window was as narrow as HurriedWindow at the least.
	Hurried       int64
	HurriedWindow time.Duration
	MaxHeld       int // Options.MaxHeld
	Policies      []PolicyReport
	// BinStart and Bin place the Series of the policies in time.
	BinStart time.Time
	Bin      time.Duration
}

// A PolicyReport is what one policy saw and what its traffic suggests.
type PolicyReport struct {
	Name string
	Spec algorithms.Spec
	Key  string
	// Requests counts the requests the policy decided (applicable, with a
	// key); Rejected those it denied; NoKey the applicable requests
	// rejected for want of a key (400 or 403); Skipped those without a key
	// it let through (on_missing_key: skip), counted apart from NoKey;
	// Delayed those a leaky_queue admitted with a delay.
	Requests, Rejected, NoKey, Skipped, Delayed int64
	// NoKeyReason is why the first request rejected for want of a key
	// had none (the key function's error).
	NoKeyReason string
	// noRoute tells that a request had no key for want of its route: the
	// replay knows no route (none in the configuration, no --route).
	noRoute bool
	Top     []KeyCount
	Rates   Rates
	// Limits holds the policy alone at its configured limit and at the
	// suggested ones; Compare the policy alone under every algorithm.
	Limits   []Trial
	Compare  []Trial
	Timeline Series
	Compared []Series
}

// A KeyCount is a key and how many of its requests were rejected.
type KeyCount struct {
	Key   string
	Count int64
}

// A Trial is the policy's traffic replayed alone under Spec.
type Trial struct {
	Label    string
	Spec     algorithms.Spec
	Rejected int64
	Share    float64 // of the policy's requests
}

// Share returns part/whole, 0 for an empty whole.
func Share(part, whole int64) float64 {
	if whole == 0 {
		return 0
	}
	return float64(part) / float64(whole)
}

// Finish computes the report. The Engine must not be used afterwards.
func (e *Engine) Finish() (*Report, error) {
	if err := e.flush(); err != nil {
		return nil, err
	}
	rep := &Report{First: e.first, Last: e.last, Requests: e.requests, Rejected: e.rejected, NoKey: e.noKey, Unmatched: e.unmatched, Late: e.late, LateMax: e.lateMax, Reorder: max(e.opts.Reorder, 0), Hurried: e.hurried, HurriedWindow: e.hurriedWindow, MaxHeld: e.opts.MaxHeld}
	e.store.Close()
	for _, r := range e.runs {
		r.store.Close()
	}
	tl := newTimeline(e.first, e.last, e.opts.Bins)
	rep.BinStart, rep.Bin = tl.Start(), time.Duration(tl.bin)
	var trials []*trialRun
	type pending struct {
		limits, compare []*trialRun
	}
	pend := make([]pending, len(e.pols))
	for i, ps := range e.pols {
		spec := ps.policy.Spec()
		pr := PolicyReport{
			Name: ps.policy.Name(), Spec: spec, Key: ps.def.KeyString(),
			Requests: ps.requests, Rejected: ps.rejected, NoKey: ps.noKey, Skipped: ps.skipped, Delayed: ps.delayed, NoKeyReason: ps.noKeyWhy, noRoute: ps.noRoute,
			Top: topKeys(ps, e.opts.Top),
		}
		windows, peaks := windowCounts(ps.byTime(), len(ps.names), int64(spec.Window))
		pr.Rates = rates(windows, peaks, len(ps.names))
		pr.Timeline = tl.newSeries(pr.Name)
		for _, ev := range ps.events {
			pr.Timeline.add(tl, ev.t, ev.denied)
		}
		rep.Policies = append(rep.Policies, pr)
		if ps.requests == 0 {
			continue
		}
		runs := map[algorithms.Spec]*trialRun{} // equal candidates run once
		for _, c := range candidates(spec.Limit, pr.Rates) {
			s := withLimit(spec, c.limit)
			if s.Validate() != nil {
				continue // say a queue too long for the store: not a limit to suggest
			}
			tr := runs[s]
			if tr == nil {
				tr = &trialRun{ps: ps, spec: s}
				runs[s] = tr
				trials = append(trials, tr)
			}
			pend[i].limits = append(pend[i].limits, tr)
			rep.Policies[i].Limits = append(rep.Policies[i].Limits, Trial{Label: c.label, Spec: tr.spec})
		}
		if e.opts.Compare {
			for _, s := range compareSpecs(spec) {
				tr := &trialRun{ps: ps, spec: s, tl: tl}
				pend[i].compare = append(pend[i].compare, tr)
				trials = append(trials, tr)
			}
		}
	}
	if err := runAll(trials); err != nil {
		return nil, err
	}
	for i := range rep.Policies {
		pr := &rep.Policies[i]
		for j, tr := range pend[i].limits {
			pr.Limits[j].Rejected, pr.Limits[j].Share = tr.rejected, Share(tr.rejected, pr.Requests)
		}
		for _, tr := range pend[i].compare {
			pr.Compare = append(pr.Compare, Trial{Label: string(tr.spec.Algorithm), Spec: tr.spec, Rejected: tr.rejected, Share: Share(tr.rejected, pr.Requests)})
			tr.series.Name = string(tr.spec.Algorithm)
			pr.Compared = append(pr.Compared, tr.series)
		}
	}
	return rep, nil
}

type candidate struct {
	label string
	limit int64
}

// candidates returns the configured limit and the limits the seeds
// suggest: P95 × 1.2 and × 1.5 (seed 001) and P99 × 2 (seed 002), rounded
// up.
func candidates(current int64, r Rates) []candidate {
	scale := func(v int64, f float64) int64 {
		return max(1, min(algorithms.MaxLimit, int64(math.Ceil(float64(v)*f-1e-9))))
	}
	return []candidate{
		{"configured", current},
		{"P95 x 1.2", scale(r.P95, 1.2)},
		{"P95 x 1.5", scale(r.P95, 1.5)},
		{"P99 x 2", scale(r.P99, 2)},
	}
}

// topKeys returns the n keys with the most rejections, without the
// policy's namespace.
func topKeys(ps *polStats, n int) []KeyCount {
	var out []KeyCount
	joined := make([]bool, len(ps.def.Key))
	for i, parts := range ps.def.Key {
		joined[i] = len(parts) > 1
	}
	for id, c := range ps.rejectBy {
		if c > 0 {
			out = append(out, KeyCount{Key: displayKey(ps.names[id], ps.policy.Name(), len(ps.def.Key), joined, ps.routes), Count: c})
		}
	}
	slices.SortFunc(out, func(a, b KeyCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}
