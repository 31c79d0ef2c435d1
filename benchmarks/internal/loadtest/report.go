package loadtest

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// A Report is everything one run of the load program measured.
type Report struct {
	// Command is the command line that produced the report.
	Command string
	// Started is when the run began; Took how long it lasted.
	Started time.Time
	Took    time.Duration
	// Machine describes the host (Go version, CPUs).
	Machine string
	// Exact, Overhead and Flood are the three parts; a nil part was not
	// run. RedisSkipped, when not empty, says why the Redis parts are
	// missing.
	Exact        []ExactResult
	ExactConfig  ExactConfig
	Overhead     []OverheadResult
	OverheadConf OverheadConfig
	Flood        *FloodResult
	RedisSkipped string
}

// A Target is one goal of the load program and whether a run met it.
type Target struct {
	Name string
	Met  bool
	// Detail gives the measured values.
	Detail string
}

// Targets judges r against the goals of issue 8. A goal whose data is
// missing is reported as not met.
func (r *Report) Targets() []Target {
	var out []Target
	over := map[string]int{}
	seen := map[string]bool{}
	for _, e := range r.Exact {
		if e.Spec.Algorithm == algorithms.SlidingLog {
			over[e.Backend] += e.OverAdmitted
			seen[e.Backend] = true
		}
	}
	for _, b := range []string{BackendMemory, BackendMemoryConcurrent, BackendRedis, BackendRedisConcurrent} {
		out = append(out, Target{
			Name:   "zero sliding_log over-admissions, " + b,
			Met:    seen[b] && over[b] == 0,
			Detail: fmt.Sprintf("%d over-admissions", over[b]) + map[bool]string{true: "", false: " (not run)"}[seen[b]],
		})
	}
	get := func(name string) *OverheadResult {
		for i := range r.Overhead {
			if r.Overhead[i].Name == name {
				return &r.Overhead[i]
			}
		}
		return nil
	}
	none, mem, hr := get(ScenarioNone), get(ScenarioMemory1), get(ScenarioHTTPRate)
	noCtx := get(ScenarioMemory1NoCtx)
	notRun := Target{Detail: "not run"}
	add := func(name string, ran bool, t Target) {
		if !ran {
			t = notRun
		}
		t.Name = name
		out = append(out, t)
	}
	ratioTarget := func(ratio float64, met bool, detail string, args ...any) Target {
		return Target{Met: met, Detail: fmt.Sprintf("%.2fx ", ratio) + fmt.Sprintf(detail, args...)}
	}
	var t Target
	ran := none != nil && mem != nil && none.P99 > 0
	if ran {
		ratio := float64(mem.P99) / float64(none.P99)
		t = ratioTarget(ratio, ratio <= 1.2, "(%s vs %s at %.0f req/s)", fmtDur(mem.P99), fmtDur(none.P99), none.Rate)
	}
	add(fmt.Sprintf("p99, memory 1 policy, within 1.2x of no limiter at %s of its max throughput", percent(r.OverheadConf.fraction())), ran, t)
	ran = mem != nil && hr != nil && hr.MaxRPS > 0
	if ran {
		ratio := mem.MaxRPS / hr.MaxRPS
		t = ratioTarget(ratio, ratio >= 1.5, "(%.0f vs %.0f req/s)", mem.MaxRPS, hr.MaxRPS)
	}
	add("max throughput over loopback, memory 1 policy, at least 1.5x httprate.LimitByIP", ran, t)
	ran = mem != nil && hr != nil && hr.InProcRPS > 0
	if ran {
		ratio := mem.InProcRPS / hr.InProcRPS
		t = ratioTarget(ratio, ratio >= 1.5, "(%.0f vs %.0f req/s)", mem.InProcRPS, hr.InProcRPS)
	}
	add("(context) handler throughput in process, memory 1 policy vs httprate.LimitByIP", ran, t)
	ran = noCtx != nil && hr != nil && hr.InProcRPS > 0
	if ran {
		ratio := noCtx.InProcRPS / hr.InProcRPS
		t = ratioTarget(ratio, ratio >= 1.5, "(%.0f vs %.0f req/s)", noCtx.InProcRPS, hr.InProcRPS)
	}
	add("(context) handler throughput in process, memory 1 policy WithoutContext vs httprate.LimitByIP", ran, t)
	f := r.Flood
	if f != nil {
		t = Target{
			Met: f.HeapGrowth <= f.DocBound,
			Detail: fmt.Sprintf("%.1f MB for %d keys (%.1f B/key) vs %.1f MB (%d B/key)",
				float64(f.HeapGrowth)/1e6, f.Len, float64(f.HeapGrowth)/float64(max(f.Len, 1)), float64(f.DocBound)/1e6, BytesPerKey),
		}
	}
	add("key flood: heap under the documented size of the bound", f != nil, t)
	if f != nil {
		t = Target{
			Met:    f.VictimRejected == 0 && f.VictimSent > 0,
			Detail: fmt.Sprintf("%d of %d rejected; %d of %d over-limit probes admitted", f.VictimRejected, f.VictimSent, f.ProbesAdmitted, f.ProbesSent),
		}
	}
	add("key flood: victim never wrongly rejected", f != nil, t)
	return out
}

// percent writes the fraction f as a percentage: "50%", "12.5%".
func percent(f float64) string {
	return strconv.FormatFloat(f*100, 'f', -1, 64) + "%"
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.0fµs", float64(d)/1e3)
}

func ratio(a, b float64) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

func orDash(n int) string {
	if n < 0 {
		return "—"
	}
	return fmt.Sprint(n)
}

// WriteMarkdown writes r as markdown tables.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## Under load (vegeta over loopback)\n\n")
	fmt.Fprintf(&b, "Produced by `%s`, started %s, took %s. %s\n\n", r.Command, r.Started.UTC().Format("2006-01-02 15:04 MST"), r.Took.Round(time.Second), r.Machine)
	if r.RedisSkipped != "" {
		fmt.Fprintf(&b, "Redis parts skipped: %s\n\n", r.RedisSkipped)
	}
	if ts := r.Targets(); len(ts) > 0 {
		b.WriteString("### Targets\n\n| target | met | measured |\n|---|---|---|\n")
		for _, t := range ts {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", t.Name, map[bool]string{true: "yes", false: "**no**"}[t.Met], t.Detail)
		}
		b.WriteString("\n")
	}
	if len(r.Exact) > 0 {
		c := r.ExactConfig
		fmt.Fprintf(&b, "### Exactness under load\n\n")
		fmt.Fprintf(&b, "One policy of %d per %s on one key (the client IP), offered %dx that (%.0f req/s) for %d windows from %d connections. "+
			"Every decision is recorded with the instant the store decided at; *model* is what algotest's reference model admits replaying those instants in order; "+
			"*max in W* is the most admitted requests within any closed window-long interval (sliding_log must stay at or under the limit; the other kinds may exceed it by design). "+
			"memory and redis-2srv serialise the store calls to know their order (redis-2srv: two HTTP servers, each with its own Redis client, one limit); "+
			"the -concurrent runs do not, and judge sliding_log by the instant the store really decided at (*late*: requests overtaken between reading the clock and deciding, decided at the key's newer instant).\n\n",
			c.Limit, c.Window, c.Factor, float64(c.Factor)*float64(c.Limit)/c.Window.Seconds(), c.Windows, c.Conns)
		b.WriteString("| backend | kind | sent | 200 | 429 | other | admitted | model | differing decisions | max in W | over-admissions | late |\n")
		b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, e := range r.Exact {
			over := "—"
			if e.Spec.Algorithm == algorithms.SlidingLog {
				over = fmt.Sprint(e.OverAdmitted)
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d | %s | %s | %d | %s | %d |\n",
				e.Backend, e.Spec.Algorithm, e.Sent, e.OK, e.Limited, e.Other, e.Admitted, orDash(e.Expected), orDash(e.Mismatches), e.MaxInWindow, over, e.Late)
		}
		b.WriteString("\n")
	}
	if len(r.Overhead) > 0 {
		c := r.OverheadConf
		var base *OverheadResult
		for i := range r.Overhead {
			if r.Overhead[i].Name == ScenarioNone {
				base = &r.Overhead[i]
			}
		}
		fmt.Fprintf(&b, "### Overhead\n\n")
		fmt.Fprintf(&b, "A trivial handler behind each limiter, limits at %d per window so everything is admitted; one client IP (127.0.0.1), %d connections, load generator in the same process. "+
			"Max throughput: median of %d rounds of %s with every connection sending back to back. "+
			"Latency: %d rounds of %s at a constant %.0f req/s (%s of the no-limiter maximum), all rounds pooled; "+
			"vegeta measures each request from when one of the %d connections sends it to its last byte: a request the constant rate schedules while every connection is busy waits for one, and that wait is not counted. "+
			"In process: median of %d rounds of %s calling ServeHTTP from GOMAXPROCS goroutines, no network (the limiter's own cost).\n\n",
			algorithms.MaxLimit, c.Conns, c.Rounds, c.MaxDuration, c.Rounds, c.LatDuration, r.Overhead[0].Rate, percent(c.fraction()), c.Conns, c.Rounds, inProcDuration)
		b.WriteString("| limiter | max req/s | rounds min–max | vs none | p50 | p90 | p99 | p99.9 | max | p99 vs none | not 200 | in process req/s | vs none |\n")
		b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, o := range r.Overhead {
			rt, pr, ir := "—", "—", "—"
			if base != nil {
				rt = ratio(o.MaxRPS, base.MaxRPS)
				pr = ratio(float64(o.P99), float64(base.P99))
				ir = ratio(o.InProcRPS, base.InProcRPS)
			}
			lo, hi := 0.0, 0.0
			if len(o.MaxRPSRounds) > 0 {
				lo, hi = slices.Min(o.MaxRPSRounds), slices.Max(o.MaxRPSRounds)
			}
			fmt.Fprintf(&b, "| %s | %.0f | %.0f–%.0f | %s | %s | %s | %s | %s | %s | %s | %d | %.0f | %s |\n",
				o.Name, o.MaxRPS, lo, hi, rt, fmtDur(o.P50), fmtDur(o.P90), fmtDur(o.P99), fmtDur(o.P999), fmtDur(o.Max), pr, o.Non200, o.InProcRPS, ir)
		}
		b.WriteString("\n")
	}
	if f := r.Flood; f != nil {
		fmt.Fprintf(&b, "### Key flood\n\n")
		fmt.Fprintf(&b, "%d distinct client IPs, one request each, through the middleware (in process, on a manual clock, %d windows of %s) into a MemoryStore with WithMaxKeys(%d); "+
			"a victim IP sends exactly %d per window, evenly spaced, plus one over-limit probe per window. Heap is HeapAlloc after GC, before and after the flood.\n\n",
			f.Keys, f.Windows, f.Window, f.MaxKeys, f.Limit)
		fmt.Fprintf(&b, "| flood keys | bound | keys held | heap growth | per key held | documented (%d B/key) | victim sent | victim rejected | probes admitted | wall time |\n", BytesPerKey)
		b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		fmt.Fprintf(&b, "| %d | %d | %d | %.2f MB | %.1f B | %.2f MB | %d | %d | %d of %d | %s |\n\n",
			f.Keys, f.Bound, f.Len, float64(f.HeapGrowth)/1e6, float64(f.HeapGrowth)/float64(max(f.Len, 1)), float64(f.DocBound)/1e6,
			f.VictimSent, f.VictimRejected, f.ProbesAdmitted, f.ProbesSent, f.Elapsed.Round(time.Millisecond))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
