package demo

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/chart"
)

// Compared are the algorithms of the comparison table, in column order.
var Compared = []algorithms.Kind{algorithms.FixedWindow, algorithms.SlidingLog, algorithms.SlidingWindow, algorithms.SlidingBuckets, algorithms.TokenBucket}

// A Burst is n requests from one client at one instant.
type Burst struct {
	At time.Duration
	N  int
}

// A Scenario is traffic from one client against one limit.
type Scenario struct {
	Short  string
	Name   string
	Limit  int64
	Window time.Duration
	Bursts []Burst
	// Measured is the index of the burst whose admissions the table shows;
	// -1 shows the total.
	Measured int
}

// Scenarios are the worked examples of the seeds.
var Scenarios = []Scenario{
	{Short: "boundary burst", Name: "100/min, 100 at 59s + 100 at 61s (admitted of 200)", Limit: 100, Window: time.Minute,
		Bursts: []Burst{{59 * time.Second, 100}, {61 * time.Second, 100}}, Measured: -1},
	{Short: "bunched at start", Name: "5/30s, 5 at 0.5s, then 5 at 33s (admitted at 33s)", Limit: 5, Window: 30 * time.Second,
		Bursts: []Burst{{500 * time.Millisecond, 5}, {33 * time.Second, 5}}, Measured: 1},
	{Short: "bunched at end", Name: "5/30s, 5 at 29.5s, then 5 at 50s (admitted at 50s)", Limit: 5, Window: 30 * time.Second,
		Bursts: []Burst{{29500 * time.Millisecond, 5}, {50 * time.Second, 5}}, Measured: 1},
	{Short: "seed 004 buckets", Name: "5/5s, 5 at 4s + 5 at 6s (admitted of 10)", Limit: 5, Window: 5 * time.Second,
		Bursts: []Burst{{4 * time.Second, 5}, {6 * time.Second, 5}}, Measured: -1},
}

// SpecFor returns the Spec of kind for limit per window: sliding buckets
// of one second each, a token bucket holding one window's worth.
func SpecFor(kind algorithms.Kind, limit int64, window time.Duration) algorithms.Spec {
	s := algorithms.Spec{Algorithm: kind, Limit: limit, Window: window}
	if kind == algorithms.SlidingBuckets {
		s.Buckets = int(window / time.Second)
	}
	return s
}

// Admitted replays sc under kind and returns the admissions per burst.
// Time starts at the Unix epoch, so fixed windows start at 0 s.
func Admitted(sc Scenario, kind algorithms.Kind) ([]int, error) {
	clock := &Clock{}
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		return nil, err
	}
	defer store.Close()
	spec := SpecFor(kind, sc.Limit, sc.Window)
	out := make([]int, len(sc.Bursts))
	for i, b := range sc.Bursts {
		clock.Set(time.Unix(0, 0).Add(b.At))
		for range b.N {
			d, err := store.TakeOne(context.Background(), algorithms.Check{Spec: spec, Key: "client"})
			if err != nil {
				return nil, err
			}
			if d.Allowed {
				out[i]++
			}
		}
	}
	return out, nil
}

// writeTable prints the comparison table.
func writeTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	var head []string
	for _, k := range Compared {
		head = append(head, string(k))
	}
	fmt.Fprintf(tw, "  scenario\t%s\t\n", strings.Join(head, "\t"))
	for _, sc := range Scenarios {
		var cells []string
		for _, k := range Compared {
			adm, err := Admitted(sc, k)
			if err != nil {
				return err
			}
			n := 0
			if sc.Measured >= 0 {
				n = adm[sc.Measured]
			} else {
				for _, a := range adm {
					n += a
				}
			}
			cells = append(cells, fmt.Sprint(n))
		}
		fmt.Fprintf(tw, "  %s\t%s\t\n", sc.Short, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, sc := range Scenarios {
		fmt.Fprintf(w, "  %s: %s\n", sc.Short, sc.Name)
	}
	fmt.Fprintln(w, "  sliding_buckets uses 1-second buckets; token_bucket holds one window's worth and starts full.")
	return nil
}

// ChartScenario is the traffic of the chart: the boundary burst, then a
// client sending three requests a second (1.8 times the limit) for two
// minutes.
var ChartScenario = func() Scenario {
	sc := Scenario{Name: "100/min: boundary burst, then 3 requests/s", Limit: 100, Window: time.Minute,
		Bursts: []Burst{{59 * time.Second, 100}, {61 * time.Second, 100}}}
	for t := 62 * time.Second; t < 180*time.Second; t += time.Second / 3 {
		sc.Bursts = append(sc.Bursts, Burst{t, 1})
	}
	return sc
}()

// Chart replays sc under every compared algorithm, in bins of bin. The
// chart starts a little before the first burst, at a multiple of three
// bins (on the demo's chart, in bins of 5 s, the axis labels every third
// bin, so its left end is labelled), and its labels count from the start
// of the first window.
func Chart(sc Scenario, bin time.Duration) (*chart.Chart, error) {
	from := max(0, (sc.Bursts[0].At-10*time.Second)/(3*bin)*(3*bin))
	end := sc.Bursts[len(sc.Bursts)-1].At
	n := int((end-from)/bin) + 1
	origin := time.Unix(0, 0)
	c := &chart.Chart{Title: "ratekeeper demo: " + sc.Name, Start: origin.Add(from), Origin: origin, Bin: bin,
		Caption: fmt.Sprintf("simulated time from the start of a window, bins of %s", bin)}
	for _, k := range Compared {
		adm, err := Admitted(sc, k)
		if err != nil {
			return nil, err
		}
		s := chart.Series{Name: string(k), Admitted: make([]int64, n), Rejected: make([]int64, n)}
		for i, b := range sc.Bursts {
			j := int((b.At - from) / bin)
			s.Admitted[j] += int64(adm[i])
			s.Rejected[j] += int64(b.N - adm[i])
		}
		c.Series = append(c.Series, s)
	}
	return c, nil
}
