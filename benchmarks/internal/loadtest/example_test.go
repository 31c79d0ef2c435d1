package loadtest_test

import (
	"fmt"
	"time"

	"github.com/ratekeeper/ratekeeper/benchmarks/internal/loadtest"
)

// A sliding log of 2 per second: the third request, exactly one second
// after the first, still finds two within the window (an instant exactly W
// old counts), so admitting it was an over-admission; the fourth, just
// later, was fine.
func ExampleOverAdmitted() {
	sec := int64(time.Second)
	admitted := []int64{0, sec / 2, sec, 2*sec + 1}
	fmt.Println("most in one window:", loadtest.MaxInWindow(admitted, sec))
	fmt.Println("over-admitted:", loadtest.OverAdmitted(admitted, sec, 2))
	// Output:
	// most in one window: 3
	// over-admitted: 1
}

// ExactSpec gives each kind the extra fields it needs.
func ExampleExactSpec() {
	fmt.Println(loadtest.ExactSpec("sliding_buckets", 50, 500*time.Millisecond))
	fmt.Println(loadtest.ExactSpec("leaky_queue", 50, 500*time.Millisecond))
	// Output:
	// sliding_buckets 50/500ms buckets=10
	// leaky_queue 50/500ms max_delay=50ms
}
