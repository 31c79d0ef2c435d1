package demo

import (
	"fmt"
	"io"
	"os"
	"time"
)

// Run plays the whole demo, writing to w, and writes the chart to svgPath.
func Run(w io.Writer, svgPath string) error {
	fmt.Fprintln(w, "ratekeeper demo: a chi server with the middleware, in simulated time (in-memory store)")
	fmt.Fprintln(w)
	if err := runHTTP(w); err != nil {
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
	f, err := os.Create(svgPath)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := c.WriteSVG(f); err != nil {
		f.Close()
		return fmt.Errorf("demo: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "4. Chart of admitted and rejected requests per algorithm (%s): %s\n", ChartScenario.Name, svgPath)
	return nil
}
