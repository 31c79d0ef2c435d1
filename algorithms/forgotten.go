package algorithms

import (
	"math"
	"math/bits"
	"time"
)

// A key the store evicts at the WithMaxKeys bound while its state still
// counts, and that a later Take makes again, is a new key: its state
// counts only the requests since. A GiveBack or Refund of a Take on the
// key before it was evicted must give nothing to it: the eviction gave the
// Take's units back once already, and taking them again from the requests
// counted since would admit that many more. The store keeps no trace of a
// key it evicts but, in each shard (shard.forgot), the hash and instant of
// the latest keys it evicted in use (forgotRecent of them), and, for each
// of a number of classes of key hashes, the latest instant of an eviction
// of the class older than those. It gives nothing back to a key whose
// hash is among the recent evictions after the Take's instant (now −
// waited, as the caller reckons it; see MemoryStore.GiveBack), or whose
// class had an older one after it: so it errs towards denying only for a
// Take older than the recent evictions, when more than forgotRecent keys
// in use of its shard were evicted since. An eviction's instant is its
// call's, or, when later, that of the latest Take decided on the shard
// (shard.seen): the evicting call read the clock before it waited for the
// lock, and a Take on the key it evicts may have read a later instant and
// got the lock first; so the recent evictions' instants never decrease. A
// key dropped while idle needs no note: its Takes no longer count (every
// kind's give-back finds so, for the key made again, which is decided no
// earlier than the instant it was idle from: shard.dropped). A key reset
// is not noted (see MemoryStore.GiveBack).

// forgotten is a shard's record of the keys it evicted in use.
type forgotten struct {
	// recent holds the latest evictions in the order they came, a ring
	// whose next slot to write is next, n of its slots written.
	recent  []evicted
	next, n int
	// classes holds, for each class of key hashes (forgotClass), the
	// latest instant of an eviction of the class that left recent, or
	// MinInt64.
	classes []int64
}

// evicted is a key the shard evicted in use: its hash, and the instant.
type evicted struct {
	h uint64
	t int64
}

const (
	// minForgotClasses is the fewest classes of hash a shard's record has.
	minForgotClasses = 64
	// minForgotRecent and maxForgotRecent bound the number of recent
	// evictions a shard's record holds.
	minForgotRecent = 64
	maxForgotRecent = 256
)

// forgotClasses returns how many classes of hash a shard's record has,
// for a shard's share perShard of the bound: about one for each 8 keys
// (a power of two, 8 bytes each), and at least minForgotClasses.
func forgotClasses(perShard int) int {
	if n := perShard / 8; n > minForgotClasses {
		return 1 << (bits.Len(uint(n)) - 1)
	}
	return minForgotClasses
}

// forgotRecent returns how many recent evictions a shard's record holds,
// for a shard's share perShard of the bound: one for each 8 keys (16
// bytes each), within [minForgotRecent, maxForgotRecent].
func forgotRecent(perShard int) int {
	return min(max(perShard/8, minForgotRecent), maxForgotRecent)
}

// forgotClass returns the class of hash h among n (a power of two): bits
// other than those that pick the shard (the lowest) and, but in the
// largest tables, a key's home slot in its table (the highest).
func forgotClass(h uint64, n int) int {
	return int(h>>24) & (n - 1)
}

// noteForgotten notes that the shard forgot the key of hash h, in use, at
// instant t, no earlier than the instant of any eviction noted before;
// perShard, the shard's share of the bound, sizes the record when it is
// made. sh.mu must be held.
func (sh *shard) noteForgotten(h uint64, t int64, perShard int) {
	f := sh.forgot
	if f == nil {
		f = &forgotten{recent: make([]evicted, forgotRecent(perShard)), classes: make([]int64, forgotClasses(perShard))}
		for i := range f.classes {
			f.classes[i] = math.MinInt64
		}
		sh.forgot = f
	}
	if f.n < len(f.recent) {
		f.n++
	} else {
		// The oldest leaves recent for its class.
		old := &f.recent[f.next]
		i := forgotClass(old.h, len(f.classes))
		f.classes[i] = max(f.classes[i], old.t)
	}
	f.recent[f.next] = evicted{h, t}
	if f.next++; f.next == len(f.recent) {
		f.next = 0
	}
}

// forgotSince reports whether the shard forgot a key in use of hash h, or
// one of h's class older than the recent evictions, after since, the
// instant a give-back reckons its Take was decided at (or an earlier
// one): then the key held now may be one made again since the Take, and
// gets nothing back. sh.mu must be held.
func (sh *shard) forgotSince(h uint64, since int64) bool {
	f := sh.forgot
	if f == nil {
		return false
	}
	if f.classes[forgotClass(h, len(f.classes))] > since {
		return true
	}
	// The recent evictions, newest first, down to one at since or
	// before: the older ones are no later.
	j := f.next
	for range f.n {
		if j == 0 {
			j = len(f.recent)
		}
		j--
		e := &f.recent[j]
		if e.t <= since {
			return false
		}
		if e.h == h {
			return true
		}
	}
	return false
}

// before returns t − d for d >= 0, or MinInt64 when that is earlier.
func before(t int64, d time.Duration) int64 {
	// t − MinInt64, below 2^64, is exact as a uint64.
	if uint64(t-math.MinInt64) < uint64(d) {
		return math.MinInt64
	}
	return t - int64(d)
}
