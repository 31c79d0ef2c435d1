package redisstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// TestCompactArgumentLayouts calls the library's take function as
// compactArgs lays its arguments out, and malformed: fast.lua tells a
// compact call without a header (the server's clock, no minimum TTL: the
// checks' arguments alone) from the wide layout by its first argument's
// length (the wide layout's TS, or empty, has at most 11 characters; a
// check's at least 19), and from one with a header "c TS TN minTTL" by
// that header. A check's argument it cannot read fails the call naming the
// check, with or without a header, as does a header it cannot read; none
// is taken for the wide layout, whose error would name the arguments.
func TestCompactArgumentLayouts(t *testing.T) {
	srv := redistest.New(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	ctx := context.Background()
	s, err := New(client, WithPrefix("layout"))
	if err != nil {
		t.Fatal(err)
	}
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Hour}
	if _, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: "warm"}); err != nil { // loads the library
		t.Fatal(err)
	}
	valid := newSpecInfo(spec).arg + " 2" // cost 2
	fcall := func(keys []string, args ...any) (any, error) {
		return client.Do(ctx, append([]any{"FCALL", takeFunction, len(keys)}, append(toAny(keys), args...)...)...).Result()
	}
	// Valid calls: each takes 2 of 5 units, or 2 of each key's.
	for _, tc := range []struct {
		name string
		keys []string
		args []any
		left []int64
	}{
		{"no header", []string{"layout:a"}, []any{valid}, []int64{3}},
		{"no header, the check already parsed", []string{"layout:a"}, []any{valid}, []int64{1}},
		{"header, server's clock, minimum TTL", []string{"layout:b"}, []any{"c  0 60000", valid}, []int64{3}},
		{"header, injected clock", []string{"layout:c"}, []any{"c 1800000000 5 0", valid}, []int64{3}},
		{"no header, two checks", []string{"layout:d", "layout:e"}, []any{valid, valid}, []int64{3, 3}},
	} {
		res, err := fcall(tc.keys, tc.args...)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		vals, _ := res.([]any)
		if len(vals) != 4*len(tc.left) {
			t.Fatalf("%s: reply %v, want %d integers", tc.name, res, 4*len(tc.left))
		}
		for i, want := range tc.left {
			if got := vals[4*i]; got != 2*want+1 {
				t.Errorf("%s: check %d: first integer %v, want %d (admitted, %d left)", tc.name, i, got, 2*want+1, want)
			}
		}
	}
	long := "5 10 1000000000 10 1 0 x" // a check's length, not its form
	for _, tc := range []struct {
		name string
		keys []string
		args []any
		want string
	}{
		{"malformed check, no header", []string{"layout:f"}, []any{long}, "malformed check 1"},
		{"malformed second check, no header", []string{"layout:f", "layout:g"}, []any{valid, long}, "malformed check 2"},
		{"malformed check after a header", []string{"layout:f"}, []any{"c  0 0", long}, "malformed check 1"},
		{"malformed header", []string{"layout:f"}, []any{"c 1 2", valid}, "malformed arguments"},
		{"header alone", []string{"layout:f"}, []any{"c  0 0"}, "malformed arguments"},
	} {
		_, err := fcall(tc.keys, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
	if n, err := client.Exists(ctx, "layout:f", "layout:g").Result(); err != nil || n != 0 {
		t.Errorf("a malformed call wrote: %d of its keys exist (%v)", n, err)
	}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
