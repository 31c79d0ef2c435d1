package demo

import (
	"fmt"
	"io"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/outfile"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/quote"
	"github.com/ratekeeper/ratekeeper/middleware"
)

// Run plays the whole demo, writing to w, and writes the chart to svgPath
// (named by the flag --svg), or for "" to a new ratekeeper-demo-*.svg in
// the temporary directory; the middleware sends the headers of profile.
// A path that cannot be written fails at once, before the demo. The chart
// is written once the demo has played, and written to w, whole: a demo
// that fails, or is interrupted, leaves a file at svgPath as it was, and
// no new file in the temporary directory.
func Run(w io.Writer, svgPath string, profile middleware.Profile) error {
	var svg *outfile.File
	var err error
	if svgPath == "" {
		svg, err = outfile.NewTemp("ratekeeper-demo-*.svg")
		if err != nil {
			return fmt.Errorf("demo: %w (for the chart; give --svg FILE, or set TMPDIR)", err)
		}
	} else {
		svg, err = outfile.New("--svg", svgPath)
	}
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer svg.Discard() // on an error
	ew := &errWriter{w: w}
	w = ew
	headers := profile.String() + " headers"
	if profile == middleware.NoHeaders {
		headers = "no rate-limit headers"
	}
	fmt.Fprintf(w, "ratekeeper demo: a chi server with the middleware, in simulated time (in-memory store, %s)\n", headers)
	fmt.Fprintln(w)
	if err := runHTTP(w, profile); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "3. The algorithms on the seed scenarios (requests admitted)")
	if err := writeTable(w); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	c, err := Chart(ChartScenario, 5*time.Second)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if ew.err != nil {
		return fmt.Errorf("demo: writing the output: %w", ew.err)
	}
	if err := svg.Write(c.WriteSVG); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "4. Chart of admitted and rejected requests per algorithm (%s): %s\n", ChartScenario.Name, quote.IfNeeded(svg.Path()))
	return nil
}

// An errWriter remembers the first error of writing w, and writes
// nothing more after it.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, err
}
