package redisstore_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// replyDropper is a TCP proxy in front of a redis-server that, when armed,
// passes the next command naming the store's code (FCALL or EVALSHA) on to
// Redis, which runs it, and then closes the client's connection instead of
// passing the reply back: a reply lost after the server acted, which the
// client sees as io.EOF.
type replyDropper struct {
	ln      net.Listener
	target  string
	armed   atomic.Bool
	dropped atomic.Int64
	wg      sync.WaitGroup
}

func newReplyDropper(t *testing.T, target string) *replyDropper {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &replyDropper{ln: ln, target: target}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() {
		_ = ln.Close()
		p.wg.Wait()
	})
	return p
}

func (p *replyDropper) Addr() string { return p.ln.Addr().String() }

func (p *replyDropper) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		var drop atomic.Bool
		p.wg.Add(2)
		go func() { // client to server
			defer p.wg.Done()
			defer s.Close()
			buf := make([]byte, 64<<10)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					chunk := bytes.ToLower(buf[:n])
					if (bytes.Contains(chunk, []byte("fcall")) || bytes.Contains(chunk, []byte("evalsha"))) && p.armed.CompareAndSwap(true, false) {
						drop.Store(true)
					}
					if _, werr := s.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
		go func() { // server to client
			defer p.wg.Done()
			defer c.Close()
			buf := make([]byte, 64<<10)
			for {
				n, err := s.Read(buf)
				if n > 0 {
					if drop.Load() {
						p.dropped.Add(1)
						_ = s.Close()
						return
					}
					if _, werr := c.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					if err != io.EOF {
						return
					}
					return
				}
			}
		}()
	}
}

// TestGiveBackReplyLostIsNotRepeated: a GiveBack whose reply is lost after
// Redis ran it must not be run again. go-redis retries a command whose
// connection failed (io.EOF) up to MaxRetries times, and a give-back is not
// idempotent: each run subtracts the units again, from the units other
// requests consumed, and the limit then admits more than it allows. Before
// the fix the store's calls were retried: a fixed_window of 10 with 3 and
// then 2 units consumed, the 2 given back once with its reply lost, then
// reported Remaining 8 to a Take of 1 (the 2 units given back twice),
// where 6 is right.
func TestGiveBackReplyLostIsNotRepeated(t *testing.T) {
	ctx := context.Background()
	for _, fallback := range []bool{false, true} {
		name := "function"
		if fallback {
			name = "script"
		}
		t.Run(name, func(t *testing.T) {
			srv := sharedServer(t)
			proxy := newReplyDropper(t, srv.Addr)
			opts := &redis.Options{Addr: proxy.Addr(), MaxRetries: 3}
			if fallback {
				admin := newClient(t)
				if err := admin.Do(ctx, "ACL", "SETUSER", "nofunctions", "on", "nopass", "~*", "&*", "+@all", "-function", "-fcall", "-fcall_ro").Err(); err != nil {
					t.Fatal(err)
				}
				opts.Username, opts.Password = "nofunctions", "any"
			}
			client := redis.NewClient(opts)
			t.Cleanup(func() { _ = client.Close() })
			clk := &manualClock{t: time.Unix(1_700_000_000, 0)}
			store, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)), redisstore.WithClock(clk))
			if err != nil {
				t.Fatal(err)
			}
			spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute}
			if _, err := store.Take(ctx, algorithms.Check{Spec: spec, Key: "k", Cost: 3}); err != nil {
				t.Fatal(err)
			}
			c2 := algorithms.Check{Spec: spec, Key: "k", Cost: 2}
			ds, err := store.Take(ctx, c2)
			if err != nil {
				t.Fatal(err)
			}
			proxy.armed.Store(true)
			gerr := store.GiveBack(ctx, make([]algorithms.Refunded, 1), []algorithms.Check{c2}, ds, 0)
			if proxy.dropped.Load() != 1 {
				t.Fatalf("the proxy dropped %d replies, want 1 (GiveBack: %v)", proxy.dropped.Load(), gerr)
			}
			if gerr == nil {
				t.Errorf("GiveBack whose reply was lost returned no error")
			}
			d, err := store.Take(ctx, algorithms.Check{Spec: spec, Key: "k"})
			if err != nil {
				t.Fatal(err)
			}
			if d[0].Remaining != 6 {
				t.Errorf("after 3 + 2 units, 2 given back (reply lost), and 1: Remaining %d, want 6", d[0].Remaining)
			}
		})
	}
}
