package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// TestTwoInstancesOneLimit runs both instances against a redis-server the
// test starts, and alternates between them: 5 requests pass in all, then
// both answer 429.
func TestTwoInstancesOneLimit(t *testing.T) {
	srv := redistest.New(t)
	var urls []string
	for _, name := range []string{"a", "b"} {
		client := redis.NewClient(&redis.Options{Addr: srv.Addr})
		t.Cleanup(func() { _ = client.Close() })
		h, err := newInstance(name, client)
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(h)
		t.Cleanup(hs.Close)
		urls = append(urls, hs.URL)
	}
	served := map[string]int{}
	var codes []int
	for i := range 8 {
		resp, err := http.Get(urls[i%2] + "/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
		if resp.StatusCode == 200 {
			served[strings.TrimSpace(string(body))]++
		}
	}
	want := []int{200, 200, 200, 200, 200, 429, 429, 429}
	for i := range want {
		if codes[i] != want[i] {
			t.Fatalf("status codes alternating between the instances = %v, want %v", codes, want)
		}
	}
	if served["hello from instance a"] != 3 || served["hello from instance b"] != 2 {
		t.Fatalf("served %v, want 3 by a and 2 by b", served)
	}
}
