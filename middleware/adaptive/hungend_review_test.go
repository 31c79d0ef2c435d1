package adaptive_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// TestHungRequestEndingBeforeTheJudgement: a request in flight past the
// threshold at the end of each period of a hang is a slow sample of each
// of them, whenever they are judged. Judged lazily (no ticker, no request
// begun since), they were judged only once a request began or ended after
// them, and a hung request that stopped being in flight first, without a
// judgement (its client gone, so not observed; or its response being
// written, a wait on the client), was no longer counted: with MinSamples
// (20) hung requests, one leaving made the periods of the hang quiet, and
// the level climbed back to the configured limit during it.
func TestHungRequestEndingBeforeTheJudgement(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(cancel context.CancelFunc, release chan<- struct{})
	}{
		{"its client leaves", func(cancel context.CancelFunc, _ chan<- struct{}) { cancel() }},
		{"it answers", func(_ context.CancelFunc, release chan<- struct{}) { close(release) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, clock := lowered(t) // MinSamples 20, threshold 20ms
			const n = 20
			in := make(chan struct{})
			var wg sync.WaitGroup
			cancels := make([]context.CancelFunc, n)
			releases := make([]chan struct{}, n)
			dones := make([]chan struct{}, n)
			for i := range n {
				ctx, cancel := context.WithCancel(context.Background())
				cancels[i], releases[i], dones[i] = cancel, make(chan struct{}), make(chan struct{})
				release := releases[i]
				app := c.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					in <- struct{}{}
					select {
					case <-r.Context().Done():
						http.Error(w, "canceled", http.StatusInternalServerError)
					case <-release:
						w.Write([]byte("ok"))
					}
				}))
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer close(dones[i])
					app.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil).WithContext(ctx))
				}()
			}
			defer func() {
				for i := range n {
					cancels[i]()
				}
				wg.Wait()
			}()
			for range n {
				hangguard.Await(t, in, 30*time.Second, "the requests' start")
			}
			clock.Advance(10 * time.Minute) // ten periods, all 20 in flight at each end
			tc.end(cancels[0], releases[0])
			hangguard.Await(t, dones[0], 30*time.Second, "the request's end")
			c.Observe(10*time.Millisecond, http.StatusOK) // the next request
			if got := c.Level(); got != 0.8 {
				t.Errorf("after ten periods with 20 requests hung at each end, one of them over before the judgement: level %v, want 0.8 held", got)
			}
		})
	}
}

// panickyTarget is a middleware whose SetLimit panics while armed.
type panickyTarget struct {
	*middleware.Middleware
	armed bool
}

func (t *panickyTarget) SetLimit(name string, limit int64) error {
	if t.armed {
		panic("SetLimit panics")
	}
	return t.Middleware.SetLimit(name, limit)
}

// TestEndCountsOutWhenTheJudgementPanics: End judges a period that ended
// before it counts its request out; a judgement that panics there (a
// Target's SetLimit, a Logger's handler) must still count it out, or it
// would be in flight for ever, holding the level.
func TestEndCountsOutWhenTheJudgementPanics(t *testing.T) {
	target := &panickyTarget{Middleware: newMiddleware(t, 100)}
	c, clock := newController(t, target, adaptive.Config{Baseline: time.Millisecond, MinSamples: 1})
	period(t, c, clock, 20, 20, 10*time.Millisecond)
	if got := c.Level(); got != 0.8 {
		t.Fatalf("level %v after a slow and failing period, want 0.8", got)
	}
	span := c.Begin()
	clock.Advance(time.Minute)
	target.armed = true
	func() {
		defer func() {
			if p := recover(); p != "SetLimit panics" {
				t.Fatalf("End recovered %v, want the SetLimit's panic", p)
			}
		}()
		span.End()
	}()
	target.armed = false
	if got := fmt.Sprint(levels(t, c, clock, 2)); got != "[0.9 1]" {
		t.Errorf("levels %s after the request ended, want [0.9 1] (none in flight)", got)
	}
}
