package redisstore_test

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestNewReportsEveryOption: New stopped at the first refused option, and
// a nil one said "nil Option" without saying which. Every refused option
// is reported, one per line, a nil one by its index; one alone is the
// option's own error. New sends nothing to Redis: no server is needed.
func TestNewReportsEveryOption(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer client.Close()
	_, err := redisstore.New(client, redisstore.WithPrefix("a b"), nil, redisstore.WithTimeout(-1))
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	want := []string{`redisstore: WithPrefix: Prefix "a b" must not contain braces or whitespace`, "redisstore: New: Options hold a nil Option at index 1", "redisstore: WithTimeout: Timeout must not be negative, got -1ns"}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("New: %q, want %q", lines, want)
	}
	if _, err := redisstore.New(client, nil); err == nil || err.Error() != "redisstore: New: Options hold a nil Option at index 0" {
		t.Errorf("New(client, nil) = %v, want the nil option at index 0 alone", err)
	}
}
