package hangguard

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestNewExpiresAtHundredthTick: a Guard from New counts 100 ticks, the
// 100th expiring it, not fewer.
func TestNewExpiresAtHundredthTick(t *testing.T) {
	g := New(time.Hour)
	defer g.Stop()
	for i := 1; i < 100; i++ {
		if g.Expired() {
			t.Fatalf("a guard from New expired at tick %d, want 100", i)
		}
	}
	if !g.Expired() {
		t.Error("a guard from New not expired at tick 100")
	}
}

// TestWithinTimesOut: on a fake clock, a Guard of d ends a wait for
// nothing after exactly d (100 ticks of d/100), and one of d below 100ns
// after 100 ticks of a nanosecond, not at once or with a panic.
func TestWithinTimesOut(t *testing.T) {
	for _, tc := range []struct{ d, want time.Duration }{
		{time.Second, time.Second},
		{time.Nanosecond, 100 * time.Nanosecond},
	} {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			if _, ok := Within(make(chan int), tc.d); ok {
				t.Errorf("Within(nothing, %v) = ok", tc.d)
			}
			if got := time.Since(start); got != tc.want {
				t.Errorf("Within(nothing, %v) gave up after %v, want %v", tc.d, got, tc.want)
			}
		})
	}
}

// TestStopStopsTicks: a stopped Guard delivers no more ticks.
func TestStopStopsTicks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(time.Second)
		g.Stop()
		time.Sleep(time.Minute) // the fake clock of the bubble
		select {
		case <-g.C:
			t.Error("a tick a minute after Stop")
		default:
		}
	})
}

// TestRunWaitsForFn: Run returns when fn has returned, not before.
func TestRunWaitsForFn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		ran := false
		var rec recorder
		Run(&rec, time.Hour, "fn", func() {
			time.Sleep(time.Minute) // the fake clock of the bubble
			ran = true
		})
		if !ran || time.Since(start) != time.Minute || rec.fatal != "" {
			t.Errorf("Run returned after %v, fn ran %v, failed %q; want after 1m0s, true, no failure", time.Since(start), ran, rec.fatal)
		}
	})
}

// TestRunBoundsHungFn: Run fails, naming what and the bound, when fn does
// not return within d.
func TestRunBoundsHungFn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		block := make(chan struct{})
		defer close(block) // lets fn return, so the bubble ends
		start := time.Now()
		var rec recorder
		done := make(chan struct{})
		go func() {
			defer close(done)
			Run(&rec, time.Second, "fn returned", func() { <-block })
		}()
		<-done
		if want := "fn returned within 1s"; rec.fatal != want || time.Since(start) != time.Second {
			t.Errorf("Run of a hung fn failed with %q after %v, want %q after 1s", rec.fatal, time.Since(start), want)
		}
	})
}

// TestPollSleepsBetweenCalls: on a fake clock, Poll sleeps every between
// its calls: d/every calls that report false take d/every-1 sleeps.
func TestPollSleepsBetweenCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		calls := 0
		if Poll(10*time.Millisecond, time.Millisecond, func() bool { calls++; return false }) {
			t.Error("Poll of a cond never true = true")
		}
		if got := time.Since(start); calls != 10 || got != 9*time.Millisecond {
			t.Errorf("Poll(10ms, 1ms) made %d calls in %v, want 10 in 9ms", calls, got)
		}
	})
}
