package loadtest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// BytesPerKey is the MemoryStore's documented budget for a key of a
// fixed-size kind held at its bound under churn ("Budget 70 bytes per key,
// times the bound").
const BytesPerKey = 70

// FloodConfig configures [RunFlood].
type FloodConfig struct {
	// Keys is the number of distinct client IPs of the flood, one request
	// each.
	Keys int
	// MaxKeys bounds the store (algorithms.WithMaxKeys).
	MaxKeys int
	// Limit and Window make the fixed_window policy per client IP.
	Limit  int64
	Window time.Duration
	// Windows is the number of windows the flood (and the victim) spans on
	// the store's manual clock.
	Windows int
}

// A FloodResult reports [RunFlood].
type FloodResult struct {
	FloodConfig
	// Bound is the key bound the store applies (MaxKeys rounded up to a
	// multiple of the number of shards it is spread over: 64, or fewer for
	// a bound below 64·256, as algorithms.WithMaxKeys says); Len the keys
	// it holds after the flood.
	Bound, Len int
	// HeapBefore and HeapAfter are runtime.MemStats.HeapAlloc after a
	// garbage collection, before and after the flood; HeapGrowth their
	// difference and DocBound Bound·BytesPerKey.
	HeapBefore, HeapAfter uint64
	HeapGrowth            int64
	DocBound              int64
	// FloodOK and FloodLimited count the flood's responses.
	FloodOK, FloodLimited int
	// VictimSent counts the victim's requests, exactly Limit per window,
	// evenly spaced; VictimRejected those answered other than 200 (the
	// store wrongly refused the victim).
	VictimSent, VictimRejected int
	// ProbesSent counts the victim's extra request in each window, after
	// its Limit; ProbesAdmitted those answered 200 (the victim's state was
	// lost, evicted by the flood).
	ProbesSent, ProbesAdmitted int
	// Elapsed is the wall time of the flood.
	Elapsed time.Duration
}

// keyBound returns the number of keys a MemoryStore bounded to maxKeys
// holds at most: as algorithms.WithMaxKeys says, the bound spread evenly
// over the shards, 64 of them but fewer (halved until each holds at least
// 256 keys, or one is left) for a bound below 64·256, so rounded up to a
// multiple of their number. TestFloodBoundIsTheStores measures it.
func keyBound(maxKeys int) int {
	shards := 64
	for shards > 1 && maxKeys/shards < 256 {
		shards /= 2
	}
	return (maxKeys + shards - 1) / shards * shards
}

// sink is a reusable http.ResponseWriter that keeps only the status.
type sink struct {
	h    http.Header
	code int
}

func (s *sink) Header() http.Header { return s.h }
func (s *sink) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
}
func (s *sink) Write(b []byte) (int, error) {
	s.WriteHeader(http.StatusOK)
	return len(b), nil
}

// RunFlood sends cfg.Keys requests from distinct client IPs, in process,
// through the middleware in front of a MemoryStore bounded to cfg.MaxKeys,
// on a manual clock spreading them over cfg.Windows windows, while a victim
// IP sends exactly Limit requests per window and one more (a probe that
// must be rejected). It measures the heap the store keeps.
//
// The flood runs in process (ServeHTTP with a reusable ResponseWriter), not
// over loopback: a million requests through the network stack would take
// minutes on a small machine, and what is measured here — the store's bound,
// its eviction and its memory — does not depend on the transport.
func RunFlood(ctx context.Context, cfg FloodConfig) (FloodResult, error) {
	r := FloodResult{FloodConfig: cfg}
	if cfg.Keys <= 0 || cfg.MaxKeys <= 0 || cfg.Limit <= 0 || cfg.Windows <= 0 {
		return r, fmt.Errorf("loadtest: FloodConfig: Keys, MaxKeys, Limit and Windows must be positive")
	}
	if cfg.Window < time.Millisecond || cfg.Window%time.Duration(cfg.Limit) != 0 {
		return r, fmt.Errorf("loadtest: FloodConfig: Window %s must be at least 1ms and a multiple of Limit %d ns", cfg.Window, cfg.Limit)
	}
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: cfg.Limit, Window: cfg.Window}
	// An instant aligned to the window (windows are aligned to the epoch).
	start := time.Unix(0, (time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()/int64(cfg.Window))*int64(cfg.Window))
	clock := algotest.NewClock(start)
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock), algorithms.WithMaxKeys(cfg.MaxKeys))
	if err != nil {
		return r, err
	}
	defer store.Close()
	h, err := limited(store, spec)
	if err != nil {
		return r, err
	}
	r.Bound = keyBound(cfg.MaxKeys)
	r.DocBound = int64(r.Bound) * BytesPerKey

	req := httptest.NewRequest(http.MethodGet, "/", nil)
	w := &sink{h: make(http.Header)}
	serve := func(at time.Time, remote string) int {
		clock.Set(at)
		clear(w.h)
		w.code = 0
		req.RemoteAddr = remote
		h.ServeHTTP(w, req)
		return w.code
	}
	const victim = "192.0.2.1:40000"
	total := time.Duration(cfg.Windows) * cfg.Window
	step := cfg.Window / time.Duration(cfg.Limit) // the victim's spacing
	nVictim := cfg.Windows * int(cfg.Limit)
	// Victim event j (j < nVictim) is a regular request at start+j·step; each
	// window ends with a probe half a step after its last regular request.
	victimAt := func(j int) (time.Time, bool) {
		return start.Add(time.Duration(j) * step), false
	}
	probeAt := func(w int) time.Time {
		return start.Add(time.Duration(w+1)*cfg.Window - step/2)
	}
	vj, pw := 0, 0
	sendVictimUntil := func(t time.Time) {
		for {
			var at time.Time
			probe := false
			switch {
			case vj < nVictim && pw < cfg.Windows:
				va, _ := victimAt(vj)
				pa := probeAt(pw)
				if pa.Before(va) {
					at, probe = pa, true
				} else {
					at = va
				}
			case vj < nVictim:
				at, _ = victimAt(vj)
			case pw < cfg.Windows:
				at, probe = probeAt(pw), true
			default:
				return
			}
			if at.After(t) {
				return
			}
			code := serve(at, victim)
			if probe {
				pw++
				r.ProbesSent++
				if code == http.StatusOK {
					r.ProbesAdmitted++
				}
			} else {
				vj++
				r.VictimSent++
				if code != http.StatusOK {
					r.VictimRejected++
				}
			}
		}
	}

	sendVictimUntil(start)
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r.HeapBefore = ms.HeapAlloc

	began := time.Now()
	base := netip.MustParseAddr("10.0.0.0").As4()
	b0 := uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3])
	for i := range cfg.Keys {
		if i%4096 == 0 && ctx.Err() != nil {
			return r, ctx.Err()
		}
		at := start.Add(time.Duration(int64(total) * int64(i) / int64(cfg.Keys)))
		sendVictimUntil(at)
		v := b0 + uint32(i)
		addr := netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
		switch serve(at, netip.AddrPortFrom(addr, 50000).String()) {
		case http.StatusOK:
			r.FloodOK++
		case http.StatusTooManyRequests:
			r.FloodLimited++
		}
	}
	sendVictimUntil(start.Add(total))
	r.Elapsed = time.Since(began)
	r.Len = store.Len()

	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	r.HeapAfter = ms.HeapAlloc
	r.HeapGrowth = int64(r.HeapAfter) - int64(r.HeapBefore)
	runtime.KeepAlive(h)
	return r, nil
}
