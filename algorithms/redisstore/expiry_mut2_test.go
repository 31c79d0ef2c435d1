package redisstore_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// monitor is a raw MONITOR connection to a server: it sees every command,
// those scripts and functions run included.
type monitor struct {
	conn net.Conn
	r    *bufio.Reader
}

func newMonitor(t *testing.T, addr string) *monitor {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	m := &monitor{conn: conn, r: bufio.NewReader(conn)}
	if _, err := conn.Write([]byte("MONITOR\r\n")); err != nil {
		t.Fatal(err)
	}
	if line := m.line(t); line != "+OK" {
		t.Fatalf("MONITOR answered %q", line)
	}
	return m
}

// line returns the next line the server sent; a server that sends none
// within 10 s fails t rather than hang it.
func (m *monitor) line(t *testing.T) string {
	t.Helper()
	_ = m.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := m.r.ReadString('\n')
	if err != nil {
		t.Fatalf("MONITOR: %v", err)
	}
	return strings.TrimRight(line, "\r\n")
}

// expiries returns the expiry in ms of each SET ... PX and PEXPIRE of key
// the server runs until it runs the marker command ECHO stop.
func (m *monitor) expiries(t *testing.T, key string) []int64 {
	t.Helper()
	var out []int64
	for {
		line := m.line(t)
		if strings.Contains(line, `"ECHO" "stop"`) || strings.Contains(line, `"echo" "stop"`) {
			return out
		}
		q := strconv.Quote(key)
		var ms string
		if _, rest, ok := strings.Cut(line, `"SET" `+q+` `); ok {
			if i := strings.Index(rest, `"PX" "`); i >= 0 {
				ms = rest[i+6:]
			}
		} else if _, rest, ok := strings.Cut(line, `"PEXPIRE" `+q+` "`); ok {
			ms = rest
		} else {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(ms[:strings.IndexByte(ms, '"')+1], `"`), 10, 64)
		if err != nil {
			t.Fatalf("MONITOR line %q: %v", line, err)
		}
		out = append(out, n)
	}
}

// TestExpiryIsResetAfterRoundedUpPlusOne checks the expiry each write
// sends, to the millisecond, as MONITOR shows its PX (and sliding_log's
// PEXPIRE): the Decision's ResetAfter rounded up to the millisecond, plus
// 1 ms, for ResetAfters with a fraction of a millisecond, through the fast
// path and the general path (a key twice), for a window kind, a bucket and
// the log. Before the fix it was ResetAfter in whole milliseconds plus
// 1 ms, which Redis counts from its clock's current millisecond, up to
// 1 ms before the instant decided at: see TestKeyOutlivesItsState.
func TestExpiryIsResetAfterRoundedUpPlusOne(t *testing.T) {
	srv := sharedServer(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	ctx := context.Background()
	prefix := uniquePrefix(t)
	// A window start plus 300,001 ns: a 1 s window's ResetAfter is 999,699,999 ns.
	clk := &manualClock{t: time.Unix(1_800_000_000, 300_001)}
	s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithClock(clk), redisstore.WithMinTTL(0))
	if err != nil {
		t.Fatal(err)
	}
	warmUp(t, client, algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Second}, Key: "warm"})
	mon := newMonitor(t, srv.Addr)
	for _, tc := range []struct {
		spec  algorithms.Spec
		twice bool
	}{
		{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Second}, false},
		{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Second}, true},
		{algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 3, Window: time.Second}, false},
		{algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 3, Window: time.Second}, true},
		{algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Second}, false},
	} {
		c := algorithms.Check{Spec: tc.spec, Key: fmt.Sprint("k", tc.twice)}
		checks := []algorithms.Check{c}
		if tc.twice {
			checks = append(checks, c)
		}
		d, err := s.Take(ctx, checks...)
		if err != nil {
			t.Fatal(err)
		}
		if err := client.Echo(ctx, "stop").Err(); err != nil {
			t.Fatal(err)
		}
		ra := d[len(d)-1].ResetAfter
		if ra%time.Millisecond == 0 {
			t.Fatalf("%s: ResetAfter %v is whole milliseconds: the test needs a fraction", tc.spec, ra)
		}
		want := int64((ra+time.Millisecond-1)/time.Millisecond) + 1
		got := mon.expiries(t, redisKeys(prefix, c)[0])
		if len(got) == 0 {
			t.Fatalf("%s, twice %v: saw no SET ... PX of its key", tc.spec, tc.twice)
		}
		for _, ms := range got {
			if ms != want {
				t.Errorf("%s, twice %v: ResetAfter %v, expiry %d ms, want %d (rounded up to the millisecond, plus 1)", tc.spec, tc.twice, ra, ms, want)
			}
		}
	}
}

// TestKeyOutlivesItsState: on the server's clock, every key a Take or a
// Refund writes expires no earlier than the instant its state stops
// mattering, read from the state itself: a token bucket's instant of being
// full again ("s n rem"), the end of a fixed window whose length is not
// whole milliseconds (50.0008 ms), a sliding_log's newest event plus its
// window (99.999998 ms) and 1 ns, a leaky_queue's next free departure after
// a refund; through the fast path (bucket, window), the general path (log)
// and the refund script. Redis counts a PX from its clock's current
// millisecond, up to 1 ms before the instant the script decided at; with
// ResetAfter in whole milliseconds plus 1 ms most keys expired up to 1 ms
// early (28 of 40 token buckets of 10^6 per second, 777,777 units taken:
// up to 639 µs before full, where the memory store still denies some 600
// units that an expired key admits). Each key's state and expiry are read
// together (MULTI); a key gone by then (a slow machine) is not checked,
// but each kind must be checked at least once.
func TestKeyOutlivesItsState(t *testing.T) {
	ctx := context.Background()
	client := newClient(t)
	prefix := uniquePrefix(t)
	s, err := redisstore.New(client, redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	bucket := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 1_000_000, Window: time.Second}
	window := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: 50_000_800}
	logSpec := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 5, Window: 99_999_998}
	queue := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1_000_000, Window: time.Second, MaxDelay: time.Second}
	// read returns key's value (of a string, or a list's last element)
	// and its expiry instant in ns, read in one transaction; ok is false
	// when the key has expired already.
	read := func(key string, list bool) (v string, at int64, ok bool) {
		t.Helper()
		var val *redis.StringCmd
		var exp *redis.Cmd
		_, err := client.TxPipelined(ctx, func(p redis.Pipeliner) error {
			if list {
				val = p.LIndex(ctx, key, -1)
			} else {
				val = p.Get(ctx, key)
			}
			exp = p.Do(ctx, "PEXPIRETIME", key)
			return nil
		})
		if err == redis.Nil {
			return "", 0, false
		}
		ms, err2 := exp.Int64()
		if err != nil || err2 != nil || ms < 0 {
			t.Fatalf("%s: value %v, PEXPIRETIME %d, %v, %v", key, val, ms, err, err2)
		}
		return val.Val(), ms * 1e6, true
	}
	checked := map[string]int{}
	instant := func(v string) int64 { // "s n ..." in ns
		t.Helper()
		f := strings.Fields(v)
		sec, err1 := strconv.ParseInt(f[0], 10, 64)
		ns, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("state %q", v)
		}
		return sec*1e9 + ns
	}
	early := 0
	for i := range 40 {
		key := fmt.Sprint("k", i)
		// The bucket and the window take the fast path, the log the general one.
		d, err := s.Take(ctx, algorithms.Check{Spec: bucket, Key: key, Cost: 777_777}, algorithms.Check{Spec: window, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		dl, err := s.Take(ctx, algorithms.Check{Spec: logSpec, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range append(d, dl...) {
			if !x.Allowed {
				t.Fatalf("take %d = %+v, %+v, want admitted", i, d, dl)
			}
		}
		// The window first: it lasts the shortest.
		wk := redisKeys(prefix, algorithms.Check{Spec: window, Key: key})[0]
		if v, at, ok := read(wk, false); ok {
			checked["window"]++
			k, err := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			if end := (k + 1) * int64(window.Window); at < end {
				early++
				t.Errorf("take %d: the window ends at %d, its key expires %d ns before", i, end, end-at)
			}
		}
		bk := redisKeys(prefix, algorithms.Check{Spec: bucket, Key: key})[0]
		if v, at, ok := read(bk, false); ok {
			checked["bucket"]++
			if full := instant(v); at < full {
				early++
				t.Errorf("take %d: the bucket is full at %d, its key expires %d ns before", i, full, full-at)
			}
		}
		lk := redisKeys(prefix, algorithms.Check{Spec: logSpec, Key: key})
		if v, _, ok := read(lk[1], true); ok {
			end := instant(v) + int64(logSpec.Window) + 1 // the newest event leaves
			for _, k := range lk {
				if _, at, ok := read(k, k == lk[1]); ok {
					checked["log"]++
					if at < end {
						early++
						t.Errorf("take %d: the log's newest event leaves at %d, key %s expires %d ns before", i, end, k, end-at)
					}
				}
			}
		}
		// A queue whose second place is refunded: the key is written
		// by the refund, with the queue's new departure.
		qc := algorithms.Check{Spec: queue, Key: key, Cost: 333_333}
		if _, err := s.Take(ctx, qc); err != nil {
			t.Fatal(err)
		}
		second, err := s.Take(ctx, qc)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Refund(ctx, make([]algorithms.Refunded, 1), []algorithms.Check{qc}, second, 0); err != nil {
			t.Fatal(err)
		}
		qk := redisKeys(prefix, qc)[0]
		if v, at, ok := read(qk, false); ok {
			checked["queue"]++
			if free := instant(v); at < free {
				early++
				t.Errorf("take %d: the refunded queue is free at %d, its key expires %d ns before", i, free, free-at)
			}
		}
		if early > 10 {
			t.Fatalf("%d keys expire before their state stops mattering", early)
		}
	}
	for _, kind := range []string{"window", "bucket", "log", "queue"} {
		if checked[kind] == 0 {
			t.Errorf("no %s key was read before it expired: nothing checked", kind)
		}
	}
	t.Logf("keys checked: %v", checked)
}
