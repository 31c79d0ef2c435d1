package demo

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
)

// Run plays the whole demo, writing to w, and writes the chart to svgPath;
// the middleware sends the headers of profile. A path that cannot be
// written fails at once, before the demo.
func Run(w io.Writer, svgPath string, profile middleware.Profile) error {
	f, err := os.Create(svgPath)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer f.Close() // on an error; closed and checked below otherwise
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
	if err := c.WriteSVG(f); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "4. Chart of admitted and rejected requests per algorithm (%s): %s\n", ChartScenario.Name, svgPath)
	return nil
}
