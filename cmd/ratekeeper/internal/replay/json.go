package replay

import (
	"encoding/json"
	"io"
	"time"
	"unicode/utf8"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// jsonReport is the JSON form of a Report: durations in seconds, specs
// with the configuration's field names.
type jsonReport struct {
	Files     []string     `json:"files"`
	Lines     int64        `json:"lines"`
	Entries   int64        `json:"entries"`
	Malformed int64        `json:"malformed"`
	Samples   []jsonSample `json:"malformed_samples,omitempty"`
	FarAhead  int64        `json:"far_ahead,omitempty"`
	Warnings  []string     `json:"warnings,omitempty"`
	First     time.Time    `json:"first"`
	Last      time.Time    `json:"last"`
	Requests  int64        `json:"requests"`
	Rejected  int64        `json:"rejected"`
	NoKey     int64        `json:"rejected_no_key"`
	Unmatched int64        `json:"unmatched"`
	Late      int64        `json:"late"`
	LateMax   float64      `json:"late_max_seconds"`
	Hurried   int64        `json:"hurried"`
	// HurriedWindow is the narrowest reorder window left while lines
	// were hurried (Report.HurriedWindow).
	HurriedWindow float64      `json:"hurried_window_seconds"`
	BinStart      time.Time    `json:"bin_start"`
	Bin           float64      `json:"bin_seconds"`
	Policies      []jsonPolicy `json:"policies"`
}

// jsonSample is a sampled malformed line: its text as it is (JSON escapes
// control characters; bytes that are not UTF-8 become U+FFFD), not quoted
// and indented as the text report shows it.
type jsonSample struct {
	File   string `json:"file"`
	Line   int64  `json:"line"`
	Reason string `json:"reason"`
	Text   string `json:"text"`
}

type jsonSpec struct {
	Algorithm string  `json:"algorithm"`
	Limit     int64   `json:"limit"`
	Window    float64 `json:"window_seconds"`
	Burst     int64   `json:"burst,omitempty"`
	Buckets   int     `json:"buckets,omitempty"`
	MaxDelay  float64 `json:"max_delay_seconds,omitempty"`
}

type jsonTrial struct {
	Label    string   `json:"label"`
	Spec     jsonSpec `json:"spec"`
	Rejected int64    `json:"rejected"`
	Share    float64  `json:"share"`
}

// A jsonKey is a key rejected most. A key that is not UTF-8 (from the
// log: a Latin-1 user name) has its bytes in KeyBytes too: in Key, as
// JSON writes it, each byte that is no UTF-8 becomes U+FFFD, and two such
// keys could read the same.
type jsonKey struct {
	Key      string `json:"key"`
	KeyBytes []byte `json:"key_bytes,omitempty"`
	Rejected int64  `json:"rejected"`
}

type jsonPolicy struct {
	Name     string      `json:"name"`
	Spec     jsonSpec    `json:"spec"`
	Key      string      `json:"key"`
	Requests int64       `json:"requests"`
	Rejected int64       `json:"rejected"`
	Share    float64     `json:"share"`
	NoKey    int64       `json:"no_key"`
	NoKeyWhy string      `json:"no_key_reason,omitempty"`
	Skipped  int64       `json:"skipped"`
	Delayed  int64       `json:"delayed"`
	Top      []jsonKey   `json:"top_rejected"`
	Rates    jsonRates   `json:"requests_per_key_per_window"`
	Limits   []jsonTrial `json:"limits"`
	Compare  []jsonTrial `json:"compare,omitempty"`
	Timeline Series      `json:"timeline"`
	Compared []Series    `json:"compared_timelines,omitempty"`
}

type jsonRates struct {
	Keys    int   `json:"keys"`
	Windows int64 `json:"windows"`
	P50     int64 `json:"p50"`
	P95     int64 `json:"p95"`
	P99     int64 `json:"p99"`
	Max     int64 `json:"max"`
	// PeakP50..PeakP99 are over keys of each key's busiest window.
	PeakP50 int64 `json:"peak_p50"`
	PeakP95 int64 `json:"peak_p95"`
	PeakP99 int64 `json:"peak_p99"`
}

func specJSON(s algorithms.Spec) jsonSpec {
	return jsonSpec{Algorithm: string(s.Algorithm), Limit: s.Limit, Window: s.Window.Seconds(), Burst: s.Burst, Buckets: s.Buckets, MaxDelay: s.MaxDelay.Seconds()}
}

func trialsJSON(ts []Trial) []jsonTrial {
	out := make([]jsonTrial, len(ts))
	for i, t := range ts {
		out[i] = jsonTrial{Label: t.Label, Spec: specJSON(t.Spec), Rejected: t.Rejected, Share: t.Share}
	}
	return out
}

// WriteJSON writes the report as one JSON object, for programs.
func (r *Report) WriteJSON(w io.Writer, in Input) error {
	out := jsonReport{
		Files: in.Files, Lines: in.Lines, Entries: in.Entries, Malformed: in.Malformed, FarAhead: in.FarAhead, Warnings: in.Warnings,
		First: r.First.UTC(), Last: r.Last.UTC(), Requests: r.Requests, Rejected: r.Rejected, NoKey: r.NoKey, Unmatched: r.Unmatched, Late: r.Late, LateMax: r.LateMax.Seconds(),
		Hurried: r.Hurried, HurriedWindow: r.HurriedWindow.Seconds(),
		BinStart: r.BinStart, Bin: r.Bin.Seconds(), Policies: []jsonPolicy{},
	}
	for _, m := range in.Samples {
		out.Samples = append(out.Samples, jsonSample{File: m.File, Line: m.Line, Reason: m.Reason, Text: m.Text})
	}
	for _, p := range r.Policies {
		jp := jsonPolicy{
			Name: p.Name, Spec: specJSON(p.Spec), Key: p.Key, Requests: p.Requests, Rejected: p.Rejected, Share: Share(p.Rejected, p.Requests),
			NoKey: p.NoKey, NoKeyWhy: p.NoKeyReason, Skipped: p.Skipped, Delayed: p.Delayed, Top: []jsonKey{},
			Rates: jsonRates{Keys: p.Rates.Keys, Windows: p.Rates.Windows, P50: p.Rates.P50, P95: p.Rates.P95, P99: p.Rates.P99, Max: p.Rates.Max,
				PeakP50: p.Rates.Peak.P50, PeakP95: p.Rates.Peak.P95, PeakP99: p.Rates.Peak.P99},
			Limits: trialsJSON(p.Limits), Compare: trialsJSON(p.Compare), Timeline: p.Timeline, Compared: p.Compared,
		}
		for _, k := range p.Top {
			jk := jsonKey{Key: k.Key, Rejected: k.Count}
			if !utf8.ValidString(k.Key) {
				jk.KeyBytes = []byte(k.Key)
			}
			jp.Top = append(jp.Top, jk)
		}
		out.Policies = append(out.Policies, jp)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
