//go:build !unix

package middleware_test

import "time"

// processCPU is not available here.
func processCPU() (time.Duration, bool) { return 0, false }
