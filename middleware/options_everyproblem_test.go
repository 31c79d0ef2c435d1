package middleware_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestOptionsReportEveryProblem: New reports every problem of a
// configuration at once, one per line, and so must each option given
// several values: WithObserver reported the first problem of its
// observers only (one nil hid another, and a nil every observer given
// twice), and named a nil one by no index. Each problem is named by the
// index of its observer now; one observer given alone keeps its error
// word for word.
func TestOptionsReportEveryProblem(t *testing.T) {
	a, b := countTo{new(atomic.Int64)}, countTo{new(atomic.Int64)}
	nilBound := &sharedObserver{loggedObserver: loggedObserver{name: "s", log: new(sharedLog)},
		bind: func() middleware.Observer { return nil }}
	var buf bytes.Buffer
	l := slog.New(slog.NewJSONHandler(&buf, nil))
	lo1, err := middleware.NewLogObserver(l)
	if err != nil {
		t.Fatal(err)
	}
	lo2, err := middleware.NewLogObserver(l)
	if err != nil {
		t.Fatal(err)
	}
	const (
		twice  = "the middleware_test.countTo is given twice: it would record each request twice; give it once"
		beside = "the logger given to WithLogger is the one a *middleware.LogObserver given to WithObserver writes to: it would write each record twice; give WithLogger alone, or the LogObserver alone (with its LogOptions)"
	)
	for _, tc := range []struct {
		name string
		opts []middleware.Option
		want []string // the lines of New's error, in order
	}{
		// Several problems of one option.
		{"two nils", []middleware.Option{middleware.WithObserver(a, nil, b, nil)}, []string{
			"middleware: WithObserver: observers hold a nil Observer at index 1",
			"middleware: WithObserver: observers hold a nil Observer at index 3",
		}},
		{"two given twice", []middleware.Option{middleware.WithObserver(a, a, b, b)}, []string{
			"middleware: WithObserver: observer at index 1: " + twice,
			"middleware: WithObserver: observer at index 3: " + twice,
		}},
		{"a nil and one given twice", []middleware.Option{middleware.WithObserver(nil, a, a)}, []string{
			"middleware: WithObserver: observers hold a nil Observer at index 0",
			"middleware: WithObserver: observer at index 2: " + twice,
		}},
		{"ForMiddleware nil and one given twice", []middleware.Option{middleware.WithObserver(nilBound, a, a)}, []string{
			"middleware: WithObserver: observer at index 0: ForMiddleware of the *middleware_test.sharedObserver returned nil",
			"middleware: WithObserver: observer at index 2: " + twice,
		}},
		{"given twice across options", []middleware.Option{middleware.WithObserver(a), middleware.WithObserver(b, a, nil)}, []string{
			"middleware: WithObserver: observer at index 1: " + twice,
			"middleware: WithObserver: observers hold a nil Observer at index 2",
		}},
		{"two LogObservers on WithLogger's logger", []middleware.Option{middleware.WithLogger(l), middleware.WithObserver(lo1, a, lo2)}, []string{
			"middleware: WithLogger and WithObserver: observer at index 0: " + beside,
			"middleware: WithLogger and WithObserver: observer at index 2: " + beside,
		}},

		// One observer given alone: its error as it was.
		{"nil alone", []middleware.Option{middleware.WithObserver(nil)}, []string{
			"middleware: WithObserver: observer is nil",
		}},
		{"given twice alone", []middleware.Option{middleware.WithObserver(a), middleware.WithObserver(a)}, []string{
			"middleware: WithObserver: " + twice,
		}},
		{"LogObserver alone on WithLogger's logger", []middleware.Option{middleware.WithLogger(l), middleware.WithObserver(lo1)}, []string{
			"middleware: WithLogger and WithObserver: " + beside,
		}},
		{"ForMiddleware nil alone", []middleware.Option{middleware.WithObserver(nilBound)}, []string{
			"middleware: WithObserver: ForMiddleware of the *middleware_test.sharedObserver returned nil",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, _ := newStore(t)
			_, err := middleware.New(store, []*policy.Policy{fixed("p", 10, time.Minute, remote)}, tc.opts...)
			if want := strings.Join(tc.want, "\n"); err == nil || err.Error() != want {
				t.Errorf("New = %v, want:\n%s", err, want)
			}
		})
	}
}
