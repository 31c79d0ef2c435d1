package main

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// refusingLimits is a middleware as an adaptive controller's target whose
// SetLimit fails: a Controller.Apply that fails.
type refusingLimits struct{ *middleware.Middleware }

func (refusingLimits) SetLimit(string, int64) error {
	return errors.New("SetLimit refused by the test")
}

// TestReloadFuncControllerFailure: a new file that changes the headers
// makes ApplyConfig return ErrRestartNeeded (its policies applied), which
// the watcher takes for a reload applied, with a warning. Beside it, a
// Controller.Apply that fails must stay a failure (an error the watcher
// logs as one and Reload retries), not pass for applied.
func TestReloadFuncControllerFailure(t *testing.T) {
	sample, err := os.ReadFile("ratekeeper.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := policy.ParseConfig(sample, "ratekeeper.yaml")
	if err != nil {
		t.Fatal(err)
	}
	draft7 := bytes.Replace(sample, []byte("\nheaders: ietf\n"), []byte("\nheaders: draft-7\n"), 1)
	if bytes.Equal(draft7, sample) {
		t.Fatal("the sample changed: no headers: ietf line")
	}
	next, err := policy.ParseConfig(draft7, "ratekeeper.yaml")
	if err != nil {
		t.Fatal(err)
	}
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	m, err := middleware.FromConfig(store, cfg, middleware.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	for _, fails := range []bool{false, true} {
		var target adaptive.Target = m
		if fails {
			target = refusingLimits{m}
		}
		ctrl, err := adaptive.New(target, adaptive.Config{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		err = reloadFunc(m, ctrl)(next)
		if restart := errors.Is(err, policy.ErrRestartNeeded); err == nil || restart == fails {
			t.Errorf("controller fails: %v: reload function = %v (matches ErrRestartNeeded: %v); want an error matching it only when the controller succeeds",
				fails, err, restart)
		}
	}
}
