package redisstore

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// Keys. A check's state lives under
//
//	<prefix>:{<escaped key>}:<spec>                 a key without ':'
//	<prefix>:{<escaped rest>}:<escaped ns>:<spec>   a key "ns:rest"
//
// (sliding_log adds a second key, the same with ":l" appended; on a
// Cluster a cross-slot reservation of a sliding_log or sliding_buckets key
// writes its side key, the same with ":u" appended: see lua/cluster.lua.
// <spec> ends in a digit, so neither suffix makes another check's key). A check's
// key up to its first ':' is a namespace: the policy layer writes every key
// as "<policy name>:<client key>". The hash tag holds only the client key,
// so the keys of every policy and spec of one client land in one Redis
// Cluster slot, and a Take of stacked policies on one client is one script
// call there too. The escaping keeps the bytes 0x21-0x7E except '%', '{'
// and '}', and writes every other byte as %XX; the empty string is written
// "%". It is injective and leaves no brace inside the tag, so the braces
// delimit the hash tag exactly. The layout is injective too, across
// prefixes as well: the prefix, which may not contain braces, is what
// precedes ":{" (a namespace before the tag would not be: the prefix "P"
// with the key "a:b" and the prefix "P:a" with the key "b" would share
// "P:a:{b}"); the tag ends at the first '}'; after it, <spec> starts with
// the kind's letters and then Limit's digits, while a namespace, which
// holds no ':', is followed by the kind's letters, so the second
// ':'-separated field tells whether a namespace is there. Two distinct
// (prefix, key) pairs never share a Redis key. <spec> is derived from every
// field of the Spec (kind, Limit, Window in ns, Burst, Buckets, MaxDelay in
// ns), so two specs never share state, as in the memory store.

// escapeKey appends the escaped form of key to b.
func escapeKey(b *strings.Builder, key string) {
	if key == "" {
		b.WriteByte('%')
		return
	}
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c < 0x21 || c > 0x7e || c == '%' || c == '{' || c == '}' {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		b.WriteByte(c)
	}
}

// specInfo is what the store derives from a valid Spec once.
type specInfo struct {
	code     int    // kind code for the script
	suffix   string // ":" + the spec namespace
	capacity int64
	args     [6]any // kind, L, W, C, Buckets, MaxDelay
	arg      string // the compact call's check argument without its cost: "kind L W C Buckets MaxDelay"
	arg1     any    // arg with cost 1, boxed once (a string put in an interface allocates)
}

var kindCodes = map[algorithms.Kind]struct {
	code int
	abbr string
}{
	algorithms.FixedWindow:    {codeFixed, "fw"},
	algorithms.SlidingLog:     {codeLog, "sl"},
	algorithms.SlidingWindow:  {codeSliding, "sw"},
	algorithms.SlidingBuckets: {codeBuckets, "sb"},
	algorithms.TokenBucket:    {codeToken, "tb"},
	algorithms.LeakyBucket:    {codeLeaky, "lb"},
	algorithms.LeakyQueue:     {codeQueue, "lq"},
}

func newSpecInfo(s algorithms.Spec) *specInfo {
	k := kindCodes[s.Algorithm]
	ns := k.abbr + ":" + strconv.FormatInt(s.Limit, 10) + ":" + strconv.FormatInt(int64(s.Window), 10) +
		":" + strconv.FormatInt(s.Burst, 10) + ":" + strconv.Itoa(s.Buckets) + ":" + strconv.FormatInt(int64(s.MaxDelay), 10)
	c := s.Capacity()
	buckets := int64(s.Buckets)
	if buckets == 0 {
		buckets = 1
	}
	arg := strconv.Itoa(k.code) + " " + strconv.FormatInt(s.Limit, 10) + " " + strconv.FormatInt(int64(s.Window), 10) +
		" " + strconv.FormatInt(c, 10) + " " + strconv.FormatInt(buckets, 10) + " " + strconv.FormatInt(int64(s.MaxDelay), 10)
	return &specInfo{
		arg:      arg,
		arg1:     any(arg + " 1"),
		code:     k.code,
		suffix:   ":" + ns,
		capacity: c,
		args:     [6]any{k.code, s.Limit, int64(s.Window), c, buckets, int64(s.MaxDelay)},
	}
}

// specCache remembers the specInfo of up to maxSpecs specs (configured
// policies are few; past the bound, infos are derived on each call). Reads
// take no lock (sync.Map), which matters under parallel load.
type specCache struct {
	m sync.Map // algorithms.Spec -> *specInfo
	n atomic.Int64
}

const maxSpecs = 4096

func (c *specCache) get(s algorithms.Spec) *specInfo {
	if v, ok := c.m.Load(s); ok {
		return v.(*specInfo)
	}
	si := newSpecInfo(s)
	if c.n.Load() < maxSpecs {
		if v, loaded := c.m.LoadOrStore(s, si); loaded {
			return v.(*specInfo)
		}
		c.n.Add(1)
	}
	return si
}

// redisKey returns the key of check key under spec si, and the hash tag's
// content (the escaped key, or the escaped part after its namespace).
func (s *Store) redisKey(key string, si *specInfo) (full, tag string) {
	var b strings.Builder
	b.Grow(len(s.prefix) + 5 + len(key) + len(si.suffix))
	b.WriteString(s.prefix)
	b.WriteString(":{")
	ns, rest, hasNS := strings.Cut(key, ":")
	if hasNS {
		key = rest
	}
	start := b.Len()
	escapeKey(&b, key)
	end := b.Len()
	b.WriteByte('}')
	if hasNS {
		b.WriteByte(':')
		escapeKey(&b, ns)
	}
	b.WriteString(si.suffix)
	full = b.String()
	return full, full[start:end]
}
