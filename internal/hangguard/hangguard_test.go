package hangguard

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// fakeGuard is a Guard whose ticks the test sends.
func fakeGuard() (*Guard, chan time.Time) {
	c := make(chan time.Time)
	return &Guard{C: c, left: ticks}, c
}

// A guard expires at its 100th tick, not before: a value sent after 99
// ticks is returned, and with none sent the 100th tick ends the wait.
func TestWithinCountsTicks(t *testing.T) {
	for _, sent := range []bool{true, false} {
		g, tick := fakeGuard()
		c := make(chan int)
		type result struct {
			v  int
			ok bool
		}
		res := make(chan result, 1)
		go func() {
			v, ok := within(c, g)
			res <- result{v, ok}
		}()
		for range ticks - 1 {
			tick <- time.Time{}
		}
		if sent {
			c <- 7
		} else {
			tick <- time.Time{}
		}
		got := <-res
		if want := (result{7, true}); sent && got != want {
			t.Errorf("a value after %d ticks: %+v, want %+v", ticks-1, got, want)
		}
		if want := (result{0, false}); !sent && got != want {
			t.Errorf("nothing in %d ticks: %+v, want %+v", ticks, got, want)
		}
	}
}

// A closed channel ends the wait with the zero value.
func TestWithinClosed(t *testing.T) {
	c := make(chan string)
	close(c)
	if v, ok := Within(c, time.Hour); v != "" || !ok {
		t.Errorf("Within(closed) = %q, %v; want \"\", true", v, ok)
	}
}

// Await fails the test, naming what and the bound, when the guard expires.
func TestAwaitFails(t *testing.T) {
	var rec recorder
	done := make(chan struct{})
	go func() {
		defer close(done)
		Await(&rec, make(chan int), time.Millisecond, "nothing came")
	}()
	<-done
	if want := "nothing came within 1ms"; rec.fatal != want {
		t.Errorf("Await failed with %q, want %q", rec.fatal, want)
	}
	var ok recorder
	Run(&ok, time.Hour, "fn", func() {})
	if ok.fatal != "" {
		t.Errorf("Run of a returning fn failed: %q", ok.fatal)
	}
}

// recorder is a testing.TB that records a Fatalf and ends its goroutine.
type recorder struct {
	testing.TB
	fatal string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// Poll calls cond d/every times at most, and stops at its first true.
func TestPollCountsTries(t *testing.T) {
	for _, tc := range []struct {
		trueAt int // the call that first reports true; 0 for never
		ok     bool
		calls  int
	}{
		{1, true, 1},
		{5, true, 5},
		{10, true, 10},
		{11, false, 10},
		{0, false, 10},
	} {
		calls := 0
		ok := Poll(10*time.Microsecond, time.Microsecond, func() bool {
			calls++
			return calls == tc.trueAt
		})
		if ok != tc.ok || calls != tc.calls {
			t.Errorf("true at call %d: Poll = %v after %d calls, want %v after %d", tc.trueAt, ok, calls, tc.ok, tc.calls)
		}
	}
	calls := 0
	if Poll(time.Microsecond, time.Hour, func() bool { calls++; return false }) || calls != 1 {
		t.Errorf("a bound below one interval: %d calls, want 1 and false", calls)
	}
}
