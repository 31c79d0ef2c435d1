package logbuf_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/ratekeeper/ratekeeper/internal/logbuf"
)

// TestConcurrentWrites: writes from many goroutines all land, whole, and
// Reset empties the buffer (run under -race, which reports an unlocked
// write).
func TestConcurrentWrites(t *testing.T) {
	var b logbuf.Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 100 {
				fmt.Fprintf(&b, "%d\n", i)
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := len(b.String()); got != 8*100*2 {
		t.Errorf("%d bytes written, want %d", got, 8*100*2)
	}
	b.Reset()
	if b.String() != "" {
		t.Errorf("after Reset: %q, want empty", b.String())
	}
}
