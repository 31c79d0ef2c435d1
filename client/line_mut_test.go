package client_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// With proactive pacing a turn 1ns away is waited for, 1ns, whether the
// request takes it without its line or, holding a place at the gate, in
// it. At 10^6 per millisecond (a turn every 1ns): two requests sent one
// after the other go at 0 and 1ns, the second after sleeping 1ns (kills
// line.go:231's delay <= 1); two that waited at the gate for a hold until
// 100ms (retry-after-ms) go at 100ms and 100ms+1ns (kills line.go:283's
// delay <= 1). Both sent the second 1ns early, with the first.
func TestTurnOneNanosecondAway(t *testing.T) {
	opts := []client.Option{client.WithRate(1_000_000, time.Millisecond), client.WithMaxWait(500 * time.Millisecond)}
	t.Run("without line", func(t *testing.T) {
		clock := newAutoClock()
		srv := newStub(t, clock, nil)
		_, tr := newClient(t, clock, opts...)
		for range 2 {
			if err := roundTrip(context.Background(), tr, srv.URL, ""); err != nil {
				t.Fatal(err)
			}
		}
		if at, want := srv.arrivals(), []time.Duration{0, time.Nanosecond}; !slices.Equal(at, want) {
			t.Errorf("arrivals %v, want %v", at, want)
		}
		if got := clock.Sleeps(); !slices.Equal(got, []time.Duration{time.Nanosecond}) {
			t.Errorf("slept %v, want [1ns]", got)
		}
	})
	t.Run("at the gate", func(t *testing.T) {
		clock := newFakeClock()
		srv := newStub(t, clock, nil)
		_, tr := newClient(t, clock, opts...)
		tr.Observe(client.HostKey(mustRequest(t, srv.URL)), http.Header{"Retry-After-Ms": {"100"}}, clock.Now())
		clock.drive(2, func(i int) {
			if i == 1 {
				clock.Sleep(context.Background(), 50*time.Millisecond)
			}
			if err := roundTrip(context.Background(), tr, srv.URL, ""); err != nil {
				t.Errorf("request %d: %v", i, err)
			}
		})
		if at, want := srv.arrivals(), []time.Duration{100 * time.Millisecond, 100*time.Millisecond + time.Nanosecond}; !slices.Equal(at, want) {
			t.Errorf("arrivals %v, want %v", at, want)
		}
	})
}

func mustRequest(t *testing.T, url string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
