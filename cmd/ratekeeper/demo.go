package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/demo"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/outfile"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/replay"
)

// demoHead is the help of demo; it lists the seed scenarios as the demo
// prints them, from the list it runs.
var demoHead = `Usage: ratekeeper demo [--svg FILE] [--headers PROFILE]

Demo runs offline, in under a second, in simulated time: a chi server with
the ratekeeper middleware (in-memory store), driven by a real HTTP client.
It prints a few responses with their rate-limit headers, a login throttled
per IP and user, and the requests each algorithm admits in the worked
examples of the articles ratekeeper grew from, the seed scenarios:
` + scenarioList("  ") + `
It writes an SVG chart of admitted and rejected requests per algorithm.

Exit status: 0 done, 2 usage error or failure.
`

// scenarioList returns the demo's seed scenarios, one a line, each after
// indent, as the demo prints them under its table.
func scenarioList(indent string) string {
	var b strings.Builder
	for _, sc := range demo.Scenarios {
		fmt.Fprintf(&b, "%s%s: %s\n", indent, sc.Short, sc.Name)
	}
	return b.String()
}

func runDemo(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("demo", demoHead, stderr)
	svg := fs.String("svg", "", "write the chart to `FILE` (default: a new ratekeeper-demo-*.svg in the temporary directory)")
	headers := fs.String("headers", "ietf", "rate-limit header `PROFILE`: "+profileNames())
	pos, code := parseFlags(fs, args, stdout)
	if code >= 0 {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "ratekeeper demo: no arguments expected, got %q\n", pos)
		return exitUsage
	}
	profile, ok := demo.Profiles[strings.ToLower(*headers)]
	if !ok {
		fmt.Fprintf(stderr, "ratekeeper demo: --headers: unknown profile %q; want %s\n", *headers, profileNames())
		return exitUsage
	}
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "svg" })
	if given && *svg == "" {
		// An unset shell variable (--svg "$OUT"): the chart would go
		// to the temporary directory, not where the user looks.
		usageError(fs, stderr, `--svg: want a FILE name, not ""`)
		return exitUsage
	}
	if err := outfile.CheckPath("--svg", *svg); err != nil {
		fmt.Fprintf(stderr, "ratekeeper demo: %v\n", err)
		return exitUsage
	}
	// Without --svg, a file of our own in the temporary directory, never
	// a fixed name in a shared directory: another user's chart there is
	// not ours to overwrite, and a symlink planted there must not be
	// followed. It is made when the chart is written (demo.Run).
	if err := demo.Run(stdout, *svg, profile); err != nil {
		// Names quoted by outfile; any other control character escaped.
		fmt.Fprintf(stderr, "ratekeeper %s\n", replay.EscapeControls(err.Error()))
		return exitUsage
	}
	return exitOK
}

// profileNames lists the header profiles in their order: "ietf,
// ietf-most-constraining, draft-7, ... or none".
func profileNames() string {
	var names []string
	for _, p := range demo.ProfileOrder {
		names = append(names, p.String())
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
