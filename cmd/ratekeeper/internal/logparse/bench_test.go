package logparse

import (
	"bytes"
	"io"
	"testing"
)

// BenchmarkReadCombined reads Combined Log Format lines, the input of the
// replay target (1,000,000 lines in under 10 s).
func BenchmarkReadCombined(b *testing.B) {
	line := []byte(`192.0.2.77 - u14 [10/Mar/2024:12:00:04 +0000] "GET /items/42?x=1 HTTP/1.1" 200 4686 "https://example.com/" "Mozilla/5.0 (X11; Linux x86_64)"` + "\n")
	data := bytes.Repeat(line, 10000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(data), "bench", Options{})
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := r.Next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*10000), "ns/line")
}
