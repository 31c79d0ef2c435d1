package adaptive_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// countReader is a slog.Handler that reads the Fleet's count as each
// record reaches it, as a handler exporting the count beside the log would.
type countReader struct {
	f    **adaptive.Fleet
	seen []int64 // the record's "instances" attribute, then Instances()
}

func (h *countReader) Enabled(context.Context, slog.Level) bool { return true }
func (h *countReader) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *countReader) WithGroup(string) slog.Handler            { return h }
func (h *countReader) Handle(_ context.Context, r slog.Record) error {
	if *h.f == nil {
		return nil // NewFleet's first reading, before it returns
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "instances" {
			h.seen = append(h.seen, a.Value.Int64(), int64((*h.f).Instances()))
		}
		return true
	})
	return nil
}

// TestFleetLogsTheCountInForce: a "fleet size" record reaches the logger
// once the count it reports is the Fleet's (Instances), as the
// Controller's level record follows its level.
func TestFleetLogsTheCountInForce(t *testing.T) {
	m := newMiddleware(t, 100)
	var f *adaptive.Fleet
	h := &countReader{f: &f}
	n := 2
	f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Instances: func() int { return n },
		Clock: algotest.NewClock(t0), Logger: slog.New(h)})
	if err != nil {
		t.Fatal(err)
	}
	for _, count := range []int{4, 5} {
		n = count
		if err := f.Update(); err != nil {
			t.Fatal(err)
		}
	}
	want := []int64{4, 4, 5, 5}
	if len(h.seen) != len(want) {
		t.Fatalf("records (instances, Instances() then): %v, want %v", h.seen, want)
	}
	for i := range want {
		if h.seen[i] != want[i] {
			t.Fatalf("records (instances, Instances() then): %v, want %v", h.seen, want)
		}
	}
}
