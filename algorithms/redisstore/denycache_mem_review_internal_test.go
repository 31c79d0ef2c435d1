package redisstore

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// denyCacheMemChild is set in the environment of the process that
// TestDenyCacheMemory starts to measure in.
const denyCacheMemChild = "REDISSTORE_TEST_DENYCACHE_MEM_CHILD"

// TestDenyCacheMemory: WithDenyCache's memory figures. An entry takes
// 250 to 350 bytes besides its key, by how full the map is after its last
// growth, and a cache of the longest keys it keeps (512 bytes) holds at
// most about size × 900 bytes. Measured on full caches of several sizes
// (a map's room per entry is highest just after it grows).
//
// The heap is the whole process's, and goroutines other tests of this
// package leave behind (a pool's dialer retrying a stopped server, a
// client being closed) allocate and free while it is read: once a
// reading came out 266 KB low in two of three caches. So the measurement
// runs in a process of its own, where no other test has run.
func TestDenyCacheMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap of caches of up to 20,000 entries; skipped in -short")
	}
	if os.Getenv(denyCacheMemChild) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDenyCacheMemory$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), denyCacheMemChild+"=1")
		out, err := cmd.CombinedOutput()
		t.Logf("the measuring process:\n%s", out)
		if err != nil {
			t.Fatalf("the measuring process: %v", err)
		}
		return
	}
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute}
	now := time.Unix(1_800_000_000, 0)
	// The heap is the whole process's: a goroutine another test left
	// running (a pool's dialer, a server's watcher) may allocate or free
	// between the two readings. Each figure is the median of three
	// caches filled alike, which one such reading does not move.
	measure := func(keyLen, size int) float64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		c := newDenyCache(size)
		pad := strings.Repeat("k", keyLen-8)
		for i := range size {
			key := fmt.Sprintf("%08d", i) + pad // a key of its own, as learn keeps it
			c.m[denyKey{spec, key}] = denyEntry{d: algorithms.Decision{Limit: 10, RetryAfter: time.Second}, at: now, replied: now, until: now.Add(time.Second), cost: 1}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(c)
		return (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(size)
	}
	for _, keyLen := range []int{16, maxDenyKeyLen} {
		for _, size := range []int{1000, 1100, 1700, 4100, 20000} {
			m := []float64{measure(keyLen, size), measure(keyLen, size), measure(keyLen, size)}
			slices.Sort(m)
			per := m[1]
			t.Logf("key %d B, %d entries: %.0f B per entry (of %.0f, %.0f, %.0f)", keyLen, size, per, m[0], m[1], m[2])
			if entry := per - float64(keyLen); entry < 240 || entry > 360 {
				t.Errorf("key %d B, %d entries: %.0f B per entry besides its key, want about 250 to 350 as documented", keyLen, size, entry)
			}
			if keyLen == maxDenyKeyLen && per > 900 {
				t.Errorf("%d entries of %d-byte keys: %.0f B each, over the documented size × 900", size, keyLen, per)
			}
		}
	}
}
