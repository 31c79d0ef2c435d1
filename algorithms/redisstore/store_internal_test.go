package redisstore

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestParseDecisionsSurprises: replies of the wrong shape are errors, never
// panics.
func TestParseDecisionsSurprises(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 3, Window: time.Second}
	r := &request{checks: []algorithms.Check{{Spec: spec}}, infos: []*specInfo{newSpecInfo(spec)}}
	dst := make([]algorithms.Decision, 1)
	for _, c := range []struct {
		reply []any
		want  algorithms.Decision
	}{
		{[]any{int64(2*2 + 1), int64(0), int64(5), int64(5)}, algorithms.Decision{Allowed: true, Limit: 3, Remaining: 2, ResetAfter: 5, NextAfter: 5}},
		{[]any{int64(2*1 + 1), int64(8), int64(9), int64(4)}, algorithms.Decision{Allowed: true, Limit: 3, Remaining: 1, Delay: 8, ResetAfter: 9, NextAfter: 4}},
		{[]any{int64(0), int64(7), int64(9), int64(7)}, algorithms.Decision{Limit: 3, RetryAfter: 7, ResetAfter: 9, NextAfter: 7}},
	} {
		if err := parseDecisions(c.reply, r, nil, dst); err != nil {
			t.Fatalf("parseDecisions(%v) = %v", c.reply, err)
		}
		if dst[0] != c.want {
			t.Fatalf("parseDecisions(%v) parsed %+v, want %+v", c.reply, dst[0], c.want)
		}
	}
	for name, reply := range map[string]any{
		"nil":        nil,
		"string":     "OK",
		"short":      []any{int64(1), int64(2)},
		"string-int": []any{"1", int64(0), int64(5), int64(5)},
		"negative":   []any{int64(5), int64(-1), int64(5), int64(5)},
		"nil-elem":   []any{int64(1), nil, int64(5), int64(5)},
	} {
		if err := parseDecisions(reply, r, nil, dst); err == nil || !strings.HasPrefix(err.Error(), "redisstore: ") {
			t.Errorf("parseDecisions(%s) = %v, want a redisstore error", name, err)
		}
	}
}

// TestKeysInjective: distinct client keys never share a Redis key, never
// put a brace inside the hash tag, the tag is the part after the namespace
// (so every namespace of one client key shares a slot), and the spec is
// part of the key.
func TestKeysInjective(t *testing.T) {
	si := newSpecInfo(algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Second})
	keys := []string{"", "%", "a", "a:b", "a}b", "{a}", "a b", "a\x00", "a%00", "%25", "ü", "a\nb", "}", "{",
		":", "a:", ":b", "a:b:c", "a%3Ab", "%:b", "{a}:b", "a:{b}", "%7Ba:b", "2001:db8::/64",
		"b", "b:c", "tb:x", "10:x", "tb:10", "x:tb:10:1000000000:0:0:0"}
	// Prefixes that extend one another: "rk" with the key "a:b" must not
	// meet "rk:a" with the key "b".
	seen := map[string]string{}
	for _, prefix := range []string{"rk", "rk:a", "rk:", "rk::", "rk:a:b", "rk:%", "rk:tb"} {
		s := &Store{prefix: prefix}
		for _, k := range keys {
			full, tag := s.redisKey(k, si)
			if strings.ContainsAny(tag, "{}") || tag == "" {
				t.Errorf("key %q: tag %q has a brace or is empty", k, tag)
			}
			if p, got, spec, ok := decodeKey(full); !ok || p != prefix || got != k || ":"+spec != si.suffix {
				t.Errorf("prefix %q, key %q: %q decodes to prefix %q, key %q, spec %q, %v", prefix, k, full, p, got, spec, ok)
			}
			if prev, dup := seen[full]; dup {
				t.Errorf("prefix %q key %q and %s share the Redis key %q", prefix, k, prev, full)
			}
			seen[full] = fmt.Sprintf("prefix %q key %q", prefix, k)
		}
	}
	s := &Store{prefix: "rk"}
	_, t1 := s.redisKey("per-second:1.2.3.4", si)
	_, t2 := s.redisKey("per-minute:1.2.3.4", si)
	if t1 != t2 || t1 != "1.2.3.4" {
		t.Errorf("two namespaces of one client key have the tags %q and %q, want both 1.2.3.4", t1, t2)
	}
	other := newSpecInfo(algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Second, Burst: 10})
	a, _ := s.redisKey("x", si)
	b, _ := s.redisKey("x", other)
	if a == b {
		t.Errorf("two specs share the key %q", a)
	}
}

// decodeKey inverts redisKey without knowing the prefix or the spec: the
// prefix is what precedes the first ":{", the tag ends at the first '}',
// and after it a namespace is there when the second ':'-separated field
// is not Limit's digits. It returns the prefix, the check's key, the spec
// part, and whether full has the documented layout.
func decodeKey(full string) (prefix, key, spec string, ok bool) {
	i := strings.IndexByte(full, '{')
	if i < 1 || full[i-1] != ':' {
		return "", "", "", false
	}
	prefix, rest := full[:i-1], full[i+1:]
	tag, rest, ok := strings.Cut(rest, "}")
	if !ok || strings.ContainsAny(tag, "{") {
		return "", "", "", false
	}
	if key, ok = unescape(tag); !ok {
		return "", "", "", false
	}
	rest, ok = strings.CutPrefix(rest, ":")
	if !ok {
		return "", "", "", false
	}
	fields := strings.Split(rest, ":")
	if len(fields) < 2 || fields[1] == "" {
		return "", "", "", false
	}
	if strings.Trim(fields[1], "0123456789") != "" {
		ns, ok := unescape(fields[0])
		if !ok || strings.Contains(ns, ":") {
			return "", "", "", false
		}
		key = ns + ":" + key
		rest = rest[len(fields[0])+1:]
	}
	return prefix, key, rest, true
}

// TestSlot checks the CRC16 slot function against values Redis computes
// (CLUSTER KEYSLOT).
func TestSlot(t *testing.T) {
	for tag, want := range map[string]uint16{"123456789": 0x31C3 & 16383, "user-1": 12542, "user-2": 157, "route-/login": 280, "": 0} {
		if got := slot(tag); got != want {
			t.Errorf("slot(%q) = %d, want %d", tag, got, want)
		}
	}
}

// unescape inverts escapeKey, for the fuzz test.
func unescape(tag string) (string, bool) {
	if tag == "%" {
		return "", true
	}
	var b strings.Builder
	for i := 0; i < len(tag); i++ {
		c := tag[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(tag) {
			return "", false
		}
		var v byte
		for _, h := range tag[i+1 : i+3] {
			v <<= 4
			switch {
			case h >= '0' && h <= '9':
				v |= byte(h - '0')
			case h >= 'A' && h <= 'F':
				v |= byte(h-'A') + 10
			default:
				return "", false
			}
		}
		b.WriteByte(v)
		i += 2
	}
	return b.String(), true
}

// FuzzRedisKey: for any client key, the hash tag has no brace, is not
// empty, holds only printable ASCII and decodes back to the key's part
// after its namespace, and the full key decodes back to the key (so the
// layout is injective).
//
//	go test -fuzz FuzzRedisKey -fuzztime 30s ./algorithms/redisstore/
func FuzzRedisKey(f *testing.F) {
	for _, k := range []string{"", "%", "a:b", "{a}", "}{", "a\x00b", "ü", "%41", ":", "a:b:c", "{a}:b", "a:{b}"} {
		f.Add(k)
	}
	s := &Store{prefix: "rk"}
	si := newSpecInfo(algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Second})
	f.Fuzz(func(t *testing.T, key string) {
		full, tag := s.redisKey(key, si)
		if tag == "" || strings.ContainsAny(tag, "{}") {
			t.Fatalf("key %q: tag %q", key, tag)
		}
		for i := 0; i < len(tag); i++ {
			if tag[i] < 0x21 || tag[i] > 0x7e {
				t.Fatalf("key %q: tag %q has byte %#x", key, tag, tag[i])
			}
		}
		if _, after, ok := strings.Cut(key, ":"); ok {
			key := after
			if got, ok := unescape(tag); !ok || got != key {
				t.Fatalf("key %q: tag %q decodes to %q, %v; want the part after the namespace", key, tag, got, ok)
			}
		} else if got, ok := unescape(tag); !ok || got != key {
			t.Fatalf("key %q: tag %q decodes to %q, %v", key, tag, got, ok)
		}
		if p, got, spec, ok := decodeKey(full); !ok || p != "rk" || got != key || ":"+spec != si.suffix {
			t.Fatalf("key %q: full key %q decodes to prefix %q, key %q, spec %q, %v", key, full, p, got, spec, ok)
		}
		if !strings.HasPrefix(full, "rk:{"+tag+"}:") {
			t.Fatalf("key %q: full key %q does not hold the tag %q in braces", key, full, tag)
		}
	})
}

// TestFunctionErrors: which server errors load the library, which make the
// store fall back to the script for good, and which are the Take's own.
func TestFunctionErrors(t *testing.T) {
	for _, tc := range []struct {
		msg              string
		missing, useless bool
	}{
		{"ERR Function not found", true, false},
		{"ERR unknown command 'FCALL', with args beginning with: 'ratekeeper_take_x' '1' ", false, true},
		{"ERR unknown command 'FUNCTION', with args beginning with: 'LOAD' ", false, true},
		{"NOPERM this user has no permissions to run the 'fcall' command", false, true},
		{"NOPERM this user has no permissions to run the 'function|load' command", false, true},
		{"NOPERM this user has no permissions to access one of the keys used as arguments", false, false},
		{"OOM command not allowed when used memory > 'maxmemory'.", false, false},
		{"ERR user_function:12: Script attempted to access nonexistent global variable 'x'", false, false},
	} {
		err := errors.New(tc.msg)
		if got := functionMissing(err); got != tc.missing {
			t.Errorf("functionMissing(%q) = %v, want %v", tc.msg, got, tc.missing)
		}
		if got := functionsUnusable(err); got != tc.useless {
			t.Errorf("functionsUnusable(%q) = %v, want %v", tc.msg, got, tc.useless)
		}
	}
}
