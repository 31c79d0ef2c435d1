package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// failTags is a go-redis hook that, while on, fails without sending it
// every command naming a key of one of the hash tags, with an error that
// names the tag (each node unreachable in its own way).
type failTags struct {
	redistest.PassHooks
	tags []string
	on   atomic.Bool
}

func (h *failTags) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.on.Load() {
			for _, a := range cmd.Args() {
				s, _ := a.(string)
				for _, tag := range h.tags {
					if strings.Contains(s, tag) {
						err := errors.New("test: the node of " + tag + " is unreachable")
						cmd.SetErr(err)
						return err
					}
				}
			}
		}
		return next(ctx, cmd)
	}
}

// TestGiveBackClusterFirstError: on a Cluster whose keys span slots, a
// give-back (as a refund: give) tries every key and returns the first
// key's error when several fail, not the last one's.
func TestGiveBackClusterFirstError(t *testing.T) {
	client := sharedCluster(t)
	fail := &failTags{tags: []string{"{user-1}", "{user-2}"}}
	client.AddHook(fail)
	clk := &manualClock{t: time.Date(2026, 11, 30, 7, 0, 10, 0, time.UTC)}
	s := clockedStore(t, client, clk)
	ctx := context.Background()
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour}
	checks := []algorithms.Check{{Spec: spec, Key: "user-1"}, {Spec: spec, Key: "user-2"}}
	ds, err := s.Take(ctx, checks...)
	if err != nil || !ds[0].Allowed || !ds[1].Allowed {
		t.Fatalf("Take = %+v, %v; want both admitted", ds, err)
	}
	fail.on.Store(true)
	err = s.GiveBack(ctx, make([]algorithms.Refunded, len(checks)), checks, ds, 0)
	fail.on.Store(false)
	if err == nil || !strings.Contains(err.Error(), "{user-1}") {
		t.Errorf("GiveBack with both nodes failing = %v, want the error of user-1, the first key", err)
	}
}
