package replay

import (
	"fmt"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
	"github.com/ratekeeper/ratekeeper/policy"
)

// BenchmarkEngineAdd replays one request through three stacked policies
// (one route-restricted), over 1,000 clients: the per-line cost of replay
// after parsing.
func BenchmarkEngineAdd(b *testing.B) {
	cfg, err := policy.ParseConfig([]byte(`policies:
  - {name: per-minute, limit: 60, window: 1m}
  - {name: login, algorithm: sliding_log, limit: 5, window: 1m, key: [ip, user], fallback: ip, routes: ["POST /login"]}
  - {name: per-user, algorithm: sliding_buckets, buckets: 6, limit: 100, window: 1h, key: user, on_missing_key: skip}
`), "bench.yaml")
	if err != nil {
		b.Fatal(err)
	}
	eng, err := New(cfg, Options{})
	if err != nil {
		b.Fatal(err)
	}
	entries := make([]logparse.Entry, 1000)
	t0 := time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)
	for i := range entries {
		entries[i] = logparse.Entry{Addr: fmt.Sprintf("192.0.2.%d", i%250), Method: "GET", Path: "/items/7"}
		if i%10 == 0 {
			entries[i].Method, entries[i].Path, entries[i].User = "POST", "/login", fmt.Sprint("u", i)
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		e := &entries[i%len(entries)]
		e.Time = t0.Add(time.Duration(i) * time.Millisecond)
		if err := eng.Add(e); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
