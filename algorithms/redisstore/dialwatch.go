package redisstore

import (
	"context"
	"errors"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/redis/go-redis/v9"
)

// dialWatch is the one hook New adds to a client (see New): it
// keeps the outcome of the client's latest dial, so that a call the
// store's own deadline ends can say why Redis did not answer when the
// client could not reach it. go-redis dials in the background, retrying
// with backoff, and a call waiting for that connection ends at its
// context's deadline with the context's error alone: "connection refused"
// (Redis down) would read as "no reply" (Redis slow).
//
// It wraps dials only: its process and pipeline hooks return next as is,
// so a command costs what it did.
type dialWatch struct {
	failed atomic.Pointer[dialFailure] // nil: the latest dial succeeded, or none failed yet
}

// dialFailure is a failed dial and when it failed.
type dialFailure struct {
	err error
	at  time.Time
}

// dialCauseFresh is how recent the latest dial's failure must be to be
// named in a store's timeout error: go-redis redials an address it cannot
// reach about every second (plus its DialTimeout), so a failure older than
// this, with no dial since, says little of a call that timed out now.
const dialCauseFresh = 10 * time.Second

// DialHook records the outcome of every dial of the client: a failure,
// unless the dial was cancelled (the pool gave it up: that is no news of
// Redis), or a success, which clears it.
func (w *dialWatch) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		switch {
		case err == nil:
			if w.failed.Load() != nil {
				w.failed.Store(nil)
			}
		case !errors.Is(ctx.Err(), context.Canceled):
			w.failed.Store(&dialFailure{err: err, at: time.Now()})
		}
		return conn, err
	}
}

// ProcessHook returns next: commands are not watched.
func (*dialWatch) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

// ProcessPipelineHook returns next: pipelines are not watched.
func (*dialWatch) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// cause returns the latest dial's error when that dial failed less than
// dialCauseFresh ago, and nil otherwise (also for a nil w).
func (w *dialWatch) cause() error {
	if w == nil {
		return nil
	}
	f := w.failed.Load()
	if f == nil || time.Since(f.at) > dialCauseFresh {
		return nil
	}
	return f.err
}

// dialWatches holds the dialWatch of every client a store was made on
// (*redis.Client, *redis.ClusterClient), by a weak pointer to the client,
// so that stores sharing a client share its one hook, and a client no
// longer used is collected with its entry.
var dialWatches sync.Map // weak.Pointer[redis.Client or redis.ClusterClient] -> *dialWatch

// watchDials returns c's dialWatch, adding it to c as a hook the first
// time (see New): a *redis.Client's own, or, for a *redis.ClusterClient,
// whose dials are its node clients', each node client the cluster client
// makes from then on (OnNewNode).
func watchDials[C redis.Client | redis.ClusterClient](c *C) *dialWatch {
	key := weak.Make(c)
	if w, ok := dialWatches.Load(key); ok {
		return w.(*dialWatch)
	}
	w := new(dialWatch)
	if got, loaded := dialWatches.LoadOrStore(key, w); loaded {
		return got.(*dialWatch)
	}
	switch c := any(c).(type) {
	case *redis.Client:
		c.AddHook(w)
	case *redis.ClusterClient:
		c.OnNewNode(func(node *redis.Client) { node.AddHook(w) })
	}
	runtime.AddCleanup(c, func(k weak.Pointer[C]) { dialWatches.Delete(k) }, key)
	return w
}
