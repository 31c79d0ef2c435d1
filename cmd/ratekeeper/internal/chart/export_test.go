package chart

import "testing"

// CheckFit is checkFit, for TestChartFits, whose demo chart package demo
// makes (package demo imports this one).
func CheckFit(t *testing.T, name string, c *Chart) {
	t.Helper()
	checkFit(t, name, c)
}
