package algorithms

import (
	"testing"
	"unsafe"
)

// TestShardLayout keeps the lock and the lock-free table pointers of a shard
// 64 bytes apart, so on separate cache lines however the store is aligned,
// and the locks of two shards 128 bytes apart.
func TestShardLayout(t *testing.T) {
	var sh shard
	if got := unsafe.Sizeof(sh); got != 128 {
		t.Errorf("shard is %d bytes, want 128", got)
	}
	if off := unsafe.Offsetof(sh.last); off != 64 {
		t.Errorf("shard.last at offset %d, want 64", off)
	}
}
