package policy

import (
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestExactDurationAgreesWithArithmetic: exactDuration gives, for every
// string time.ParseDuration accepts, what exact rational arithmetic gives:
// whether each of its numbers times its unit is a whole number of
// nanoseconds, whether their sum fits in a time.Duration, and then the
// sum itself.
func TestExactDurationAgreesWithArithmetic(t *testing.T) {
	units := []string{"ns", "us", "µs", "μs", "ms", "s", "m", "h"}
	unitNs := map[string]int64{"ns": 1, "us": 1e3, "µs": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9, "m": 6e10, "h": 3.6e12}
	digits := func(r *rand.Rand, n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
		return b.String()
	}
	cases := []string{
		"0", "+0", "-0", "9223372036854775807ns", "9223372036854775808ns", "-9223372036854775808ns",
		"-9223372036854775809ns", "2562047h47m16.854775807s", "2562047h47m16.854775808s",
		"-2562047h47m16.854775808s", "2562047h47m16.8547758075s", "0.0000000000000000000000000001h",
		"00000000000000000000000001s", "1.s", ".5s", "0.50000000000000h", "1.999999999999999999999999s",
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 60000 {
		var b strings.Builder
		switch r.IntN(3) {
		case 0:
			b.WriteByte('-')
		case 1:
			b.WriteByte('+')
		}
		for range 1 + r.IntN(3) {
			b.WriteString(digits(r, r.IntN(8)))
			if r.IntN(2) == 0 {
				b.WriteString(".")
				b.WriteString(digits(r, r.IntN(16)))
				b.WriteString(strings.Repeat("0", r.IntN(20)))
			}
			b.WriteString(units[r.IntN(len(units))])
		}
		cases = append(cases, b.String())
	}
	checked := 0
	for _, s := range cases {
		if _, err := time.ParseDuration(s); err != nil {
			continue
		}
		checked++
		// The reference: the sum of each number times its unit, as a
		// rational.
		sum, wantWhole := new(big.Rat), true
		rest := strings.TrimLeft(s, "+-")
		for rest != "" && rest != "0" {
			i := strings.IndexFunc(rest, func(c rune) bool { return c != '.' && (c < '0' || c > '9') })
			num := rest[:i]
			rest = rest[i:]
			j := strings.IndexAny(rest, ".0123456789")
			if j < 0 {
				j = len(rest)
			}
			unit := rest[:j]
			rest = rest[j:]
			if strings.HasPrefix(num, ".") {
				num = "0" + num
			}
			num = strings.TrimSuffix(num, ".")
			v, ok := new(big.Rat).SetString(num)
			if !ok {
				t.Fatalf("%q: reference cannot read %q", s, num)
			}
			v.Mul(v, new(big.Rat).SetInt64(unitNs[unit]))
			wantWhole = wantWhole && v.IsInt()
			sum.Add(sum, v)
		}
		if strings.HasPrefix(s, "-") {
			sum.Neg(sum)
		}
		wantIn := wantWhole && sum.Num().IsInt64()
		d, whole, in := exactDuration(s)
		if whole != wantWhole || wantWhole && in != wantIn || wantIn && int64(d) != sum.Num().Int64() {
			t.Errorf("exactDuration(%q) = %d, whole %v, in range %v; want %s, whole %v, in range %v", s, d, whole, in, sum.RatString(), wantWhole, wantIn)
		}
	}
	if checked < 10000 {
		t.Errorf("only %d of the strings were durations", checked)
	}
}
