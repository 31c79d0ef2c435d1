package redisstore

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestLuaMaxCountIsMaxLimit: num.lua's MAXCOUNT, past which a window
// kind's stored count is not the store's (cell.lua's loadWindow,
// fastlib.lua's windowFast), is algorithms.MaxLimit, the highest limit
// a check is judged at (a Check.Limit above its Spec's included).
func TestLuaMaxCountIsMaxLimit(t *testing.T) {
	m := regexp.MustCompile(`(?m)^local MAXCOUNT = (\d+)$`).FindStringSubmatch(luaNum)
	if m == nil {
		t.Fatal("num.lua defines no MAXCOUNT")
	}
	if n, err := strconv.ParseInt(m[1], 10, 64); err != nil || n != algorithms.MaxLimit {
		t.Fatalf("num.lua's MAXCOUNT is %s, want algorithms.MaxLimit %d", m[1], int64(algorithms.MaxLimit))
	}
}
