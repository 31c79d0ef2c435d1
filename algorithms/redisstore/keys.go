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
// writes its side key, the same with ":u" appended: see lua/cluster.lua; a
// give-back or cross-slot undo of a token_bucket or leaky_bucket key
// writes its note, the same with ":g" appended: see lua/notes.lua.
// <spec> ends in a digit, so no suffix makes another check's key). A check's
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
	kept := 0 // key[kept:i] is written as is, in one piece
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c < 0x21 || c > 0x7e || c == '%' || c == '{' || c == '}' {
			b.WriteString(key[kept:i])
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			kept = i + 1
		}
	}
	b.WriteString(key[kept:])
}

// specInfo is what the store derives once from a valid Spec and the limit
// its checks are judged at (algorithms.Check.Limit): the state's keys are
// the Spec's, the script's limit and the capacity reported the judged
// ones. The script's arguments are the kind, L, the limit the check is
// judged at (Check.Judged().Limit), W, C, the Spec's capacity, and the
// Spec's Buckets and MaxDelay. A bucket kind is judged at its Spec's own
// limit (Check.Validate), so C is its capacity judged at; a window kind's
// C is its Spec's Limit, which the script never judges with nor bounds a
// count by: a check of fixed_window, sliding_window or sliding_buckets
// judged above it counts past it, up to the limit judged at, and so the
// most a window's stored count can hold is algorithms.MaxLimit, whatever
// its Spec (a count above that is not the store's: lua/cell.lua's
// loadWindow, lua/num.lua's MAXCOUNT).
type specInfo struct {
	code     int    // kind code for the script
	suffix   string // ":" + the spec namespace
	capacity int64  // the capacity judged at: the Decision's Limit
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

// newSpecInfo returns the specInfo of the checks of s judged at its own
// limit.
func newSpecInfo(s algorithms.Spec) *specInfo { return newJudgedInfo(s, 0) }

// newJudgedInfo returns the specInfo of the checks of s judged at limit
// (algorithms.Check.Limit: 0 for s's own; a valid check's, so a window
// kind's, below or, but for sliding_log, above s.Limit, up to
// algorithms.MaxLimit).
func newJudgedInfo(s algorithms.Spec, limit int64) *specInfo {
	k := kindCodes[s.Algorithm]
	ns := k.abbr + ":" + strconv.FormatInt(s.Limit, 10) + ":" + strconv.FormatInt(int64(s.Window), 10) +
		":" + strconv.FormatInt(s.Burst, 10) + ":" + strconv.Itoa(s.Buckets) + ":" + strconv.FormatInt(int64(s.MaxDelay), 10)
	c := s.Capacity()
	judged := algorithms.Check{Spec: s, Limit: limit}.Judged()
	buckets := int64(s.Buckets)
	if buckets == 0 {
		buckets = 1
	}
	arg := strconv.Itoa(k.code) + " " + strconv.FormatInt(judged.Limit, 10) + " " + strconv.FormatInt(int64(s.Window), 10) +
		" " + strconv.FormatInt(c, 10) + " " + strconv.FormatInt(buckets, 10) + " " + strconv.FormatInt(int64(s.MaxDelay), 10)
	return &specInfo{
		arg:      arg,
		arg1:     any(arg + " 1"),
		code:     k.code,
		suffix:   ":" + ns,
		capacity: judged.Capacity(),
		args:     [6]any{k.code, judged.Limit, int64(s.Window), c, buckets, int64(s.MaxDelay)},
	}
}

// specCache remembers the specInfo of up to maxSpecs specs (configured
// policies are few; past the bound, infos are derived on each call), and
// apart, of up to maxSpecs specs judged at a limit of their own, below or
// above the Spec's (algorithms.Check.Limit), which it forgets all at once when it has
// more: a limit that keeps moving (an adaptive one) must neither fill the
// cache for good nor push the specs out. Reads take no lock (sync.Map,
// and the front table before it), which matters under parallel load.
type specCache struct {
	// front answers the Specs m holds without m's lookup, whose hash of
	// an interface key walks the Spec's fields by reflection (a few
	// hundred instructions per check): a direct-mapped table, each slot
	// taken by the first Spec m caches that maps to it and kept (a Spec
	// whose slot another holds is looked up in m, as before). Reads take
	// no lock; a slot is written once.
	front [frontSlots]atomic.Pointer[frontEntry]
	m     sync.Map // algorithms.Spec -> *specInfo: checks judged at the Spec's limit
	n     atomic.Int64
	// judged holds the infos of checks judged at a limit other than
	// their Spec's, nj counts them.
	judged sync.Map // judgedSpec -> *specInfo
	nj     atomic.Int64
}

// judgedSpec keys specCache.judged: a Spec and the limit, other than its
// own, its checks are judged at.
type judgedSpec struct {
	spec  algorithms.Spec
	limit int64
}

const maxSpecs = 4096

// get returns the specInfo of the checks of s judged at limit (their
// Check.Limit: 0, or s.Limit, for s's own).
func (c *specCache) get(s algorithms.Spec, limit int64) *specInfo {
	if limit != 0 && limit != s.Limit {
		return c.getJudged(judgedSpec{s, limit})
	}
	slot := &c.front[frontSlot(s)]
	if e := slot.Load(); e != nil && e.spec == s {
		return e.info
	}
	if v, ok := c.m.Load(s); ok {
		si := v.(*specInfo)
		c.hold(slot, s, si)
		return si
	}
	si := newSpecInfo(s)
	if c.n.Load() < maxSpecs {
		if v, loaded := c.m.LoadOrStore(s, si); loaded {
			si = v.(*specInfo)
		} else {
			c.n.Add(1)
		}
		c.hold(slot, s, si)
	}
	return si
}

// frontSlots is the size of specCache.front (a power of two): a few
// policies' Specs rarely share a slot in it.
const frontSlots = 256

// frontEntry is a Spec and its info, in a slot of specCache.front.
type frontEntry struct {
	spec algorithms.Spec
	info *specInfo
}

// frontSlot returns the index of s's slot in specCache.front: a hash of
// every field (the kind by its length and first letter, which tell the
// seven apart), with no reflection.
func frontSlot(s algorithms.Spec) uint {
	h := uint64(len(s.Algorithm))
	if len(s.Algorithm) > 0 {
		h |= uint64(s.Algorithm[0]) << 8
	}
	for _, v := range [...]uint64{uint64(s.Limit), uint64(s.Window), uint64(s.Burst), uint64(s.Buckets), uint64(s.MaxDelay)} {
		h = (h ^ v) * 0x9e3779b97f4a7c15
		h ^= h >> 32
	}
	return uint(h & (frontSlots - 1))
}

// hold puts s and its info, which m holds, in slot, unless the slot
// holds a Spec already.
func (c *specCache) hold(slot *atomic.Pointer[frontEntry], s algorithms.Spec, si *specInfo) {
	if slot.Load() == nil {
		slot.CompareAndSwap(nil, &frontEntry{spec: s, info: si})
	}
}

// getJudged is get for a check judged at a limit other than its Spec's.
func (c *specCache) getJudged(k judgedSpec) *specInfo {
	if v, ok := c.judged.Load(k); ok {
		return v.(*specInfo)
	}
	si := newJudgedInfo(k.spec, k.limit)
	if c.nj.Add(1) > maxSpecs {
		// Start again (the count is approximate under concurrent
		// misses, and so the bound: a few entries more at most).
		c.judged.Clear()
		c.nj.Store(1)
	}
	if v, loaded := c.judged.LoadOrStore(k, si); loaded {
		return v.(*specInfo)
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
