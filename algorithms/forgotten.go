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
// key it evicts, only, in each shard, the latest instant at which it
// evicted a key in use of each of a number of classes of key hashes
// (shard.forgot), and gives nothing back to a key whose class had a key
// evicted after the Take's instant (now − waited, as the caller reckons
// it; see MemoryStore.GiveBack). An eviction's instant is its call's, or,
// when later, that of the latest Take decided on the shard (shard.seen):
// the evicting call read the clock before it waited for the lock, and a
// Take on the key it evicts may have read a later instant and got the
// lock first. A key dropped while idle needs no note:
// its Takes no longer count (every kind's give-back finds so, for the key
// made again, which is decided no earlier than the instant it was dropped
// at: shard.dropped). A key reset is not noted (see MemoryStore.GiveBack).

// minForgotClasses is the fewest classes of hash a shard's forgot has.
const minForgotClasses = 64

// forgotClasses returns how many classes of hash a shard's forgot has:
// about one for each 8 keys of a shard's share of the bound (a power of
// two, 8 bytes each: at most a byte per key of the bound), and at least
// minForgotClasses (512 bytes a shard).
func (s *MemoryStore) forgotClasses() int {
	if n := s.perShrd / 8; n > minForgotClasses {
		return 1 << (bits.Len(uint(n)) - 1)
	}
	return minForgotClasses
}

// forgotClass returns the class of hash h among n (a power of two): bits
// other than those that pick the shard (the lowest) and, but in the
// largest tables, a key's home slot in its table (the highest).
func forgotClass(h uint64, n int) int {
	return int(h>>24) & (n - 1)
}

// noteForgotten notes that the shard forgot the key of hash h, in use, at
// instant t; classes is how many classes forgot has when it is made. sh.mu
// must be held.
func (sh *shard) noteForgotten(h uint64, t int64, classes int) {
	if sh.forgot == nil {
		sh.forgot = make([]int64, classes)
		for i := range sh.forgot {
			sh.forgot[i] = math.MinInt64
		}
	}
	i := forgotClass(h, len(sh.forgot))
	sh.forgot[i] = max(sh.forgot[i], t)
}

// forgotSince reports whether the shard forgot a key in use of h's class
// after since, the instant a give-back reckons its Take was decided at (or
// an earlier one): then the key held now may be one made again since the
// Take, and gets nothing back. sh.mu must be held.
func (sh *shard) forgotSince(h uint64, since int64) bool {
	return sh.forgot != nil && sh.forgot[forgotClass(h, len(sh.forgot))] > since
}

// before returns t − d for d >= 0, or MinInt64 when that is earlier.
func before(t int64, d time.Duration) int64 {
	// t − MinInt64, below 2^64, is exact as a uint64.
	if uint64(t-math.MinInt64) < uint64(d) {
		return math.MinInt64
	}
	return t - int64(d)
}
