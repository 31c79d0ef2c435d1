package redisstore_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/redis/go-redis/v9"
)

// keyPartHook fails, unsent, with err the call of script mode whose first
// key contains part.
type keyPartHook struct {
	redistest.PassHooks
	part, mode string
	err        error
	hit        atomic.Bool
}

func (h *keyPartHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if key, mode, ok := fcallMode(cmd); ok && mode == h.mode && strings.Contains(key, h.part) {
			h.hit.Store(true)
			cmd.SetErr(h.err)
			return h.err
		}
		return next(ctx, cmd)
	}
}

// TestMiddlewareClassifiesUndoFailedToo: behind the middleware (FailClosed,
// a net/http ServeMux), a request whose cross-slot Take (a per-IP and a
// per-user policy) failed its user reservation and then the undo of its
// IP reservation is a store failure: answered 503, the middleware's State
// failing closed, the error handler given an error matching both
// failures; also when the reservation got no reply and only the undo's
// error is a reply about a key (which alone would read as the store
// answering, StateHealthy).
func TestMiddlewareClassifiesUndoFailedToo(t *testing.T) {
	shared := sharedCluster(t)
	for _, tc := range []struct {
		name            string
		reserveY, undoX error
	}{
		{"refused_write/no_reply", oom, io.EOF},
		{"no_reply/undo_about_the_key", io.EOF, foreignReply},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSrv.Addrs()})
			t.Cleanup(func() { _ = client.Close() })
			warmUp(t, shared, algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}, Key: "user-1"})
			s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)))
			if err != nil {
				t.Fatal(err)
			}
			errs := make(chan error, 1)
			m, err := middleware.New(s, []*policy.Policy{
				policy.Must(policy.PerMinute("per-ip", 10, keyfunc.Must(keyfunc.IP()))),
				policy.Must(policy.PerMinute("per-user", 10, keyfunc.Must(keyfunc.Header("X-User")))),
			}, middleware.OnStoreError(middleware.FailClosed(time.Second)),
				middleware.WithErrorHandler(func(r *http.Request, err error) { errs <- err }))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			mux := http.NewServeMux()
			mux.Handle("GET /hello", m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, "hello")
			})))
			reserve := &keyPartHook{part: "alice", mode: "1", err: tc.reserveY}
			undo := &keyPartHook{part: "192.0.2.1", mode: "2", err: tc.undoX}
			client.AddHook(reserve)
			client.AddHook(undo)
			req := httptest.NewRequest(http.MethodGet, "/hello", nil) // from 192.0.2.1
			req.Header.Set("X-User", "alice")
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, req)
			if !reserve.hit.Load() || !undo.hit.Load() {
				t.Fatalf("the user's reservation ran: %v, the IP's undo ran: %v (status %d)", reserve.hit.Load(), undo.hit.Load(), rec.Code)
			}
			if rec.Code != http.StatusServiceUnavailable {
				t.Errorf("status %d, want 503 (FailClosed)", rec.Code)
			}
			if got := m.State(); got != middleware.StateFailingClosed {
				t.Errorf("State() = %v, want %v", got, middleware.StateFailingClosed)
			}
			select {
			case err := <-errs:
				if !errors.Is(err, tc.reserveY) || !errors.Is(err, tc.undoX) || errors.Is(err, algorithms.ErrKeyState) {
					t.Errorf("error handler got %q; want both failures, not ErrKeyState", err)
				}
			default:
				t.Error("the error handler was not called")
			}
		})
	}
}
