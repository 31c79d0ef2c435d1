package redisstore

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// TestLuaArithmetic checks the script's exact arithmetic (num.lua) on a real
// redis-server against math/big: floor((a*b + c)/d) and its remainder, the
// comparison of two products, and the window of an instant, for operands
// across the ranges the algorithms use and at their edges.
func TestLuaArithmetic(t *testing.T) {
	srv := redistest.New(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	script := redis.NewScript(luaPrelude + "\n" + luaNum + `
numInit()
local out = {}
for i = 1, #ARGV, 6 do
  local a, b, c, d = tonumber(ARGV[i]), tonumber(ARGV[i+1]), tonumber(ARGV[i+2]), tonumber(ARGV[i+3])
  local q, r = bdivmod(badd(bmul(a, b), c), d)
  out[#out + 1] = fmt(q)
  out[#out + 1] = fmt(r)
  out[#out + 1] = bcmp(bmul(a, b), bmul(c, d))
  TS, TN = tonumber(ARGV[i+4]), tonumber(ARGV[i+5])
  local k, e = window(d)
  out[#out + 1] = fmt(k)
  out[#out + 1] = fmt(e)
end
return out
`)
	r := rand.New(rand.NewPCG(1, 2))
	const p52 = int64(1) << 52
	pick := func(max int64) int64 {
		switch r.IntN(5) {
		case 0:
			return max
		case 1:
			return 1 + r.Int64N(10)
		case 2:
			return max - r.Int64N(10)
		}
		return r.Int64N(max + 1)
	}
	ctx := context.Background()
	for round := range 40 {
		var args []any
		type in struct{ a, b, c, d, ts, tn int64 }
		var ins []in
		for range 50 {
			x := in{d: 1 + pick(86_400_000_000_000-1)}
			switch r.IntN(3) {
			case 0: // a duration times a limit
				x.a, x.b = pick(1<<47), pick(1_000_000_000)
			case 1: // two limits
				x.a, x.b = pick(1_000_000_000), pick(1_000_000_000)
			default: // a count times a window
				x.a, x.b = pick(2_000_000_000), pick(86_400_000_000_000)
			}
			x.c = pick(1_000_000_000)
			if r.IntN(3) == 0 {
				x.d = []int64{1_000_000, 1_000_000_000, 1_500_000_000, 86_400_000_000_000, 7_000_001}[r.IntN(5)]
			}
			// The quotient must be below 2^52.
			q := new(big.Int).Mul(big.NewInt(x.a), big.NewInt(x.b))
			q.Add(q, big.NewInt(x.c)).Quo(q, big.NewInt(x.d))
			if q.Cmp(big.NewInt(p52)) >= 0 {
				continue
			}
			x.ts = r.Int64N(9_200_000_000) - 4_000_000_000
			x.tn = r.Int64N(1_000_000_000)
			if x.d < 1_000_000 {
				x.d += 1_000_000
			}
			ins = append(ins, x)
			args = append(args, x.a, x.b, x.c, x.d, x.ts, x.tn)
		}
		res, err := script.Run(ctx, client, nil, args...).Slice()
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 5*len(ins) {
			t.Fatalf("got %d results for %d inputs", len(res), len(ins))
		}
		for i, x := range ins {
			num := new(big.Int).Mul(big.NewInt(x.a), big.NewInt(x.b))
			num.Add(num, big.NewInt(x.c))
			q, m := new(big.Int).QuoRem(num, big.NewInt(x.d), new(big.Int))
			if got := fmt.Sprint(res[5*i], ",", res[5*i+1]); got != q.String()+","+m.String() {
				t.Fatalf("round %d: (%d*%d+%d) divmod %d = %s, want %s,%s", round, x.a, x.b, x.c, x.d, got, q, m)
			}
			cmp := new(big.Int).Mul(big.NewInt(x.a), big.NewInt(x.b)).Cmp(new(big.Int).Mul(big.NewInt(x.c), big.NewInt(x.d)))
			if got, ok := res[5*i+2].(int64); !ok || got != int64(cmp) {
				t.Fatalf("round %d: cmp(%d*%d, %d*%d) = %v, want %d", round, x.a, x.b, x.c, x.d, res[5*i+2], cmp)
			}
			tt := new(big.Int).Mul(big.NewInt(x.ts), big.NewInt(1_000_000_000))
			tt.Add(tt, big.NewInt(x.tn))
			k, e := new(big.Int).DivMod(tt, big.NewInt(x.d), new(big.Int)) // Euclidean: e >= 0
			if got := fmt.Sprint(res[5*i+3], ",", res[5*i+4]); got != k.String()+","+e.String() {
				t.Fatalf("round %d: window(t=%d s %d ns, W=%d) = %s, want %s,%s", round, x.ts, x.tn, x.d, got, k, e)
			}
		}
	}
}
