package replay

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/plural"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/quote"
)

// Input describes what was read, for the report's header.
type Input struct {
	Files     []string
	Lines     int64
	Entries   int64
	Malformed int64
	Samples   []logparse.Malformed
	// FarAhead counts the lines left out for being stamped far ahead of
	// the lines after them in their log (a wrong clock), each log's
	// warned about in Warnings.
	FarAhead int64
	// Warnings say what could not be read: a compressed log that ends
	// early, say.
	Warnings []string
}

// WriteText writes the report for people.
func (r *Report) WriteText(w io.Writer, in Input) error {
	var b strings.Builder
	names := make([]string, len(in.Files))
	for i, f := range in.Files {
		names[i] = quote.IfNeeded(f) // a newline in a name would forge lines
	}
	files := strings.Join(names, ", ")
	if n := len(names); n > 4 {
		files = fmt.Sprintf("%d files (%s, %s, ..., %s)", n, names[0], names[1], names[n-1])
	}
	fmt.Fprintf(&b, "replayed %s from %s of %s", plural.Count(in.Entries, "request"), plural.Count(in.Lines, "line"), files)
	if in.Entries > 0 {
		fmt.Fprintf(&b, "\n  from %s to %s (%s)", r.First.UTC().Format(time.RFC3339Nano), r.Last.UTC().Format(time.RFC3339Nano), r.Last.Sub(r.First))
	}
	b.WriteString("\n")
	for _, w := range in.Warnings {
		fmt.Fprintf(&b, "  warning: %s\n", w)
	}
	if in.Malformed > 0 {
		fmt.Fprintf(&b, "  %s (%s), skipped; for example:\n", plural.Count(in.Malformed, "malformed line"), pct(in.Malformed, in.Lines))
		for _, m := range in.Samples {
			fmt.Fprintf(&b, "    %s\n", m)
		}
	}
	if r.Late > 0 {
		// Lines hurried (below) narrow the window: a line within the
		// reorder window can be late then, which no wider --reorder
		// changes.
		window := fmt.Sprintf("the reorder window (%s)", r.Reorder)
		end := fmt.Sprintf("; a --reorder above %s\n"+
			"  replays them in order; hours or days behind may also be a line logged far ahead, by a wrong clock)\n", r.LateMax)
		switch {
		case r.Hurried > 0 && r.LateMax <= r.Reorder:
			window = "the narrower window left while lines were hurried"
			end = "; hours or days behind\n  may also be a line logged far ahead, by a wrong clock)\n"
		case r.Hurried > 0:
			window += " or the narrower one left while lines were hurried"
		}
		fmt.Fprintf(&b, "  %s logged out of time order by more than %s, by up to %s:\n"+
			"  replayed late, after later ones, and each run of them further behind apart from the rest, as a\n"+
			"  log of its own (logs joined end to end, by cat or by zcat access.log.*.gz, whose glob puts .10\n"+
			"  before .2, are merged in time order when named each on the command line%s", plural.Count(r.Late, "request"), window, r.LateMax, end)
	}
	if r.Hurried > 0 {
		fmt.Fprintf(&b, "  warning: more than %d lines within the reorder window (%s) at once: the oldest, %s, were\n"+
			"  replayed before the window had passed over them, to bound the memory held; while that lasted the\n"+
			"  window was as narrow as %s (a line further out of order than that was replayed late)\n",
			r.MaxHeld, r.Reorder, plural.Count(r.Hurried, "request"), r.HurriedWindow)
	}
	fmt.Fprintf(&b, "all policies together: %s, %d rejected by a limit (%s), %d more refused for want of a key (400/403), %d matched no policy\n",
		plural.Count(r.Requests, "request"), r.Rejected, pct(r.Rejected, r.Requests), r.NoKey, r.Unmatched)
	if len(r.Policies) > 1 {
		b.WriteString("  (the policies decide each request together, all or nothing: a request one policy rejects\n" +
			"  uses nothing of the others; \"this policy alone\" replays one policy by itself)\n")
	}
	for i := range r.Policies {
		b.WriteString("\n")
		r.Policies[i].writeText(&b)
	}
	_, err := io.WriteString(w, EscapeControls(b.String()))
	return err
}

func (p *PolicyReport) writeText(b *strings.Builder) {
	fmt.Fprintf(b, "policy %s: %v, key %s\n", p.Name, p.Spec, p.Key)
	tw := tabwriter.NewWriter(b, 2, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "  requests\t%d\n", p.Requests)
	fmt.Fprintf(tw, "  rejected\t%d\t%s\n", p.Rejected, pct(p.Rejected, p.Requests))
	if p.NoKey > 0 || p.Skipped > 0 {
		fmt.Fprintf(tw, "  without a key\t%d\t(%d skipped, the rest rejected 400/403)\n", p.NoKey+p.Skipped, p.Skipped)
		if p.NoKeyReason != "" {
			fmt.Fprintf(tw, "  \t\t(first: %s)\n", quote.IfNeeded(p.NoKeyReason))
		}
		if p.noRoute {
			// With routes known, a request no route matches is keyed
			// policy.NoRoute, as by the middleware's pattern function.
			fmt.Fprintf(tw, "  \t\t(the replay knows no route, so no request has a route key: give the application's routes with --route)\n")
		}
	}
	if p.Delayed > 0 {
		fmt.Fprintf(tw, "  delayed\t%d\n", p.Delayed)
	}
	fmt.Fprintf(tw, "  keys\t%d\t(%s of %s with requests)\n", p.Rates.Keys, plural.Count(p.Rates.Windows, "key-window"), p.Spec.Window)
	fmt.Fprintf(tw, "  requests per key per %s\tP50 %d\tP95 %d\tP99 %d\tmax %d\n", p.Spec.Window, p.Rates.P50, p.Rates.P95, p.Rates.P99, p.Rates.Max)
	fmt.Fprintf(tw, "  busiest %s of each key\tP50 %d\tP95 %d\tP99 %d\n", p.Spec.Window, p.Rates.Peak.P50, p.Rates.Peak.P95, p.Rates.Peak.P99)
	tw.Flush()
	if len(p.Top) > 0 {
		var keys []string
		for _, k := range p.Top {
			keys = append(keys, fmt.Sprintf("%s (%d)", quote.IfNeeded(k.Key), k.Count))
		}
		fmt.Fprintf(b, "  most rejected keys: %s\n", strings.Join(keys, ", "))
	}
	if len(p.Limits) > 0 {
		b.WriteString("  limits, this policy alone (seed advice: P95 x 1.2 to 1.5, or P99 x 2):\n")
		tw = tabwriter.NewWriter(b, 2, 8, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "    \tlimit\trejected\tshare\t\n")
		for _, t := range p.Limits {
			fmt.Fprintf(tw, "    %s\t%d\t%d\t%s\t\n", t.Label, t.Spec.Limit, t.Rejected, pct(t.Rejected, p.Requests))
		}
		tw.Flush()
	}
	b.WriteString(oneKeyNote(p))
	if len(p.Compare) > 0 {
		fmt.Fprintf(b, "  algorithms at %d per %s, this policy alone:\n", p.Spec.Limit, p.Spec.Window)
		tw = tabwriter.NewWriter(b, 2, 8, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "    \trejected\tshare\t\n")
		for _, t := range p.Compare {
			label := t.Label
			if t.Spec.Buckets > 0 { // the policy's, or 10 (see compareSpecs)
				label += " (" + plural.Count(t.Spec.Buckets, "bucket") + ")"
			}
			fmt.Fprintf(tw, "    %s\t%d\t%s\t\n", label, t.Rejected, pct(t.Rejected, p.Requests))
		}
		tw.Flush()
	}
}

// oneKeyNote returns a note when one key of several holds more than half
// of the policy's rejections and a suggested limit above the configured
// one (Limits[0]) rejects fewer: the percentiles count key-windows, so a
// client busy in many windows, such as one guessing passwords for an hour,
// pulls the suggestions up to make room for it. "" otherwise.
func oneKeyNote(p *PolicyReport) string {
	if len(p.Top) == 0 || p.Rates.Keys < 2 || len(p.Limits) < 2 || 2*p.Top[0].Count <= p.Rejected {
		return ""
	}
	for _, t := range p.Limits[1:] {
		if t.Spec.Limit > p.Limits[0].Spec.Limit && t.Rejected < p.Rejected {
			return fmt.Sprintf("  note: %s has %d of this policy's %s: the suggested limits make room for it (the percentiles count each window of it); if it is abuse, keep the limit\n",
				quote.IfNeeded(p.Top[0].Key), p.Top[0].Count, plural.Count(p.Rejected, "rejection"))
		}
	}
	return ""
}

// EscapeControls returns s with each character that is neither graphic
// nor a newline or tab, and each byte that is not UTF-8, written as a Go
// escape (\x1b, \u2028), and the rest as it is: names of files (a glob
// over a directory others write to) and messages that carry them are
// untrusted as keys are (see quote.IfNeeded), and are written so.
func EscapeControls(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsGraphic(r) && r != '\n' && r != '\t' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t' || unicode.IsGraphic(r):
			b.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRuneToGraphic(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}

// pct formats part/whole as a percentage with two decimals; a share of
// some but not all that would round to 0.00% or 100.00% reads "<0.01%" or
// ">99.99%": one request rejected of 20,001 is not none of them.
func pct(part, whole int64) string {
	s := fmt.Sprintf("%.2f%%", 100*Share(part, whole))
	switch {
	case part > 0 && part < whole && s == "0.00%":
		return "<0.01%"
	case part > 0 && part < whole && s == "100.00%":
		return ">99.99%"
	}
	return s
}
