package redisstore

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

// replyError stands for an error Redis replied.
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}

// TestMigratingNeedsEveryUndo: the breaker takes a failed Take for
// Redis's answer while a slot migrates (migrating) only when each of its
// failed undos is one: a Take of three slots whose two undos failed, one
// for want of its note key and one without a reply (io.EOF), is a failure
// of Redis. errors.As found the first reply in the errors.Join and read
// the whole as answered.
func TestMigratingNeedsEveryUndo(t *testing.T) {
	noteless := fmt.Errorf("redisstore: undoing it failed: %w", replyError("redisstore: the undo must note a give-back, and "+notelessMark))
	lost := fmt.Errorf("redisstore: undoing it failed: %w", io.EOF)
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{noteless, true},
		{errors.Join(noteless, noteless), true},
		{errors.Join(noteless, lost), false},
		{errors.Join(lost, noteless), false},
	} {
		if got := migrating(tc.err); got != tc.want {
			t.Errorf("migrating(%q) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
