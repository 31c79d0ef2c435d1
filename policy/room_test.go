package policy_test

import (
	"context"
	"fmt"
	"math/bits"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestResultReusedAcrossSizes: one Result prepared and taken again and
// again for masks of different sizes, growing and shrinking, holds at each
// step the policies of the mask in Set order, their keys and their own
// decisions (each policy's limit tells it apart), whichever room it holds
// them in.
func TestResultReusedAcrossSizes(t *testing.T) {
	ps, s, store := roomSet(t, 6, func(i int) int64 { return int64(10 + i) })
	r := httptest.NewRequest("GET", "/", nil)
	var res policy.Result
	for step, mask := range []uint64{0b1, 0b101101, 0b10, 0b111111, 0b1100, 0b100000, 0, 0b1011, 0b111111} {
		takeHeld(t, fmt.Sprintf("step %d, mask %b", step, mask), s, r, mask, &res, store, ps)
	}
}

// takeHeld prepares res for the policies of mask (a mask over ps, those
// of roomSet with limits 10+j) and takes it on store, then checks that res
// holds, in Set order, each policy of mask, its key and its own decision
// (its limit tells it apart). what names the case in failures.
func takeHeld(t *testing.T, what string, s *policy.Set, r *http.Request, mask uint64, res *policy.Result, store algorithms.Store, ps []*policy.Policy) {
	t.Helper()
	if err := s.Prepare(r, mask, res); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := res.Take(context.Background(), store); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if res.Len() != bits.OnesCount64(mask) || res.Mask() != mask || !res.Allowed() {
		t.Fatalf("%s: Len %d, Mask %b, Allowed %v", what, res.Len(), res.Mask(), res.Allowed())
	}
	i := 0
	for j := range ps {
		if mask&(1<<j) == 0 {
			continue
		}
		name := "p" + strconv.Itoa(j)
		if got := res.Policy(i); got != ps[j] {
			t.Errorf("%s: Policy(%d) = %s, want %s", what, i, got.Name(), name)
		}
		if got, want := res.Key(i), name+":192.0.2.1:1234"; got != want {
			t.Errorf("%s: Key(%d) = %q, want %q", what, i, got, want)
		}
		if d := res.Decision(i); d.Limit != int64(10+j) || !d.Allowed {
			t.Errorf("%s: Decision(%d) = %+v, want %s's (limit %d)", what, i, d, name, 10+j)
		}
		i++
	}
}

// TestResultReuseDoesNotAllocate: once a Result has had room for four
// policies, preparing and taking it again for four or fewer allocates
// nothing, on the memory store (the first Prepare allocates the room).
func TestResultReuseDoesNotAllocate(t *testing.T) {
	_, s, store := roomSet(t, 4, func(int) int64 { return 1e9 })
	r := httptest.NewRequest("GET", "/", nil)
	var res policy.Result
	ctx := context.Background()
	if err := s.Prepare(r, 0b1111, &res); err != nil {
		t.Fatal(err)
	}
	for _, mask := range []uint64{0b1111, 0b1, 0b110} {
		allocs := testing.AllocsPerRun(20, func() {
			if err := s.Prepare(r, mask, &res); err != nil {
				t.Fatal(err)
			}
			if err := res.Take(ctx, store); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("mask %b: %v allocations per Prepare and Take of a Result with room, want 0", mask, allocs)
		}
	}
}

// TestResultPolicyOutOfRange: Policy panics for an index that is not one
// of the evaluated policies, as indexing them would.
func TestResultPolicyOutOfRange(t *testing.T) {
	s, _ := policy.NewSet([]*policy.Policy{
		policy.Must(policy.PerMinute("a", 10, remoteKey)),
		policy.Must(policy.PerMinute("b", 10, remoteKey)),
	})
	r := httptest.NewRequest("GET", "/", nil)
	var res policy.Result
	if err := s.Prepare(r, 0b10, &res); err != nil {
		t.Fatal(err)
	}
	if res.Policy(0).Name() != "b" {
		t.Fatalf("Policy(0) = %s, want b", res.Policy(0).Name())
	}
	for _, i := range []int{-1, 1, 2} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Policy(%d) of 1 evaluated policy did not panic", i)
				}
			}()
			res.Policy(i)
		}()
	}
}

// TestResultKeysAroundRoom: keys that fill a Result's key room exactly,
// and keys one byte longer (which Prepare allocates), read back whole
// and in place for every count of policies, on a Result reused across
// them.
func TestResultKeysAroundRoom(t *testing.T) {
	var key string
	keyOf := func(*http.Request) (string, error) { return key, nil }
	var ps []*policy.Policy
	for i := range 6 {
		ps = append(ps, policy.Must(policy.PerMinute("p"+strconv.Itoa(i), 10, keyOf)))
	}
	s, err := policy.NewSet(ps)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	var res policy.Result
	for _, n := range []int{1, 2, 3, 4, 6} {
		for l := 1; l <= 140; l++ {
			key = strings.Repeat(string(rune('a'+l%26)), l)
			mask := uint64(1)<<n - 1
			if err := s.Prepare(r, mask, &res); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if got, want := res.Key(i), "p"+strconv.Itoa(i)+":"+key; got != want {
					t.Fatalf("%d policies, key of %d bytes: Key(%d) = %q, want %q", n, l, i, got, want)
				}
			}
		}
	}
}

// roomSet returns n per-minute policies p0..pn-1 keyed by RemoteAddr, the
// i-th with limit(i), their Set, and a memory store closed at the end of
// the test.
func roomSet(t *testing.T, n int, limit func(i int) int64) ([]*policy.Policy, *policy.Set, *algorithms.MemoryStore) {
	t.Helper()
	var ps []*policy.Policy
	for i := range n {
		ps = append(ps, policy.Must(policy.PerMinute("p"+strconv.Itoa(i), limit(i), remoteKey)))
	}
	s, err := policy.NewSet(ps)
	if err != nil {
		t.Fatal(err)
	}
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return ps, s, store
}
