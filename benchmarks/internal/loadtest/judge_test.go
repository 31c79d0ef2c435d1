package loadtest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

func TestMaxInWindowAndOverAdmitted(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ts        []int64
		w         int64
		limit     int
		max, over int
	}{
		{"empty", nil, 10, 1, 0, 0},
		{"spaced", []int64{0, 11, 22, 33}, 10, 1, 1, 0},
		{"exactly W apart counts", []int64{0, 10}, 10, 1, 2, 1},
		{"just over W apart", []int64{0, 11}, 10, 1, 1, 0},
		{"burst of three", []int64{5, 5, 5}, 10, 2, 3, 1},
		{"sliding", []int64{0, 4, 8, 12, 16}, 10, 2, 3, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := MaxInWindow(tc.ts, tc.w); got != tc.max {
				t.Errorf("MaxInWindow(%v, %d) = %d, want %d", tc.ts, tc.w, got, tc.max)
			}
			if got := OverAdmitted(tc.ts, tc.w, tc.limit); got != tc.over {
				t.Errorf("OverAdmitted(%v, %d, %d) = %d, want %d", tc.ts, tc.w, tc.limit, got, tc.over)
			}
		})
	}
}

// record builds a Record of one check on spec decided at at.
func record(spec algorithms.Spec, at int64, d algorithms.Decision) Record {
	return Record{At: at, Checks: []algorithms.Check{{Spec: spec, Key: "k"}}, Decisions: []algorithms.Decision{d}}
}

// TestJudgeCatchesOverAdmission feeds Judge a sliding_log of 2 per second
// that admitted three requests within one second: Judge must count the
// over-admission and the decision the model makes differently.
func TestJudgeCatchesOverAdmission(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 2, Window: time.Second}
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	in := func(at int64) algorithms.Decision {
		return algorithms.Decision{Allowed: true, Limit: 2, ResetAfter: spec.Window + 1}
	}
	recs := []Record{
		record(spec, t0, in(t0)),
		record(spec, t0+100, in(t0+100)),
		record(spec, t0+int64(time.Second), in(t0+int64(time.Second))), // exactly W after the first: still counts
	}
	r := Judge(spec, recs)
	if r.Admitted != 3 || r.Expected != 2 || r.Mismatches != 1 || r.OverAdmitted != 1 || r.MaxInWindow != 3 {
		t.Errorf("Judge = admitted %d, model %d, differ %d, over %d, max %d; want 3, 2, 1, 1, 3",
			r.Admitted, r.Expected, r.Mismatches, r.OverAdmitted, r.MaxInWindow)
	}
}

// TestJudgeLateRequest: a request overtaken in flight is decided at the
// key's newer instant, its ResetAfter lengthened by the difference; Judge
// must place it there.
func TestJudgeLateRequest(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 2, Window: time.Second}
	const t0 = int64(1_900_000_000_000_000_000)
	late := algorithms.Decision{Allowed: true, Limit: 2, ResetAfter: spec.Window + 1 + 500}
	r := Judge(spec, []Record{
		record(spec, t0+500, algorithms.Decision{Allowed: true, Limit: 2, ResetAfter: spec.Window + 1}),
		record(spec, t0, late),
	})
	if r.Late != 1 {
		t.Errorf("Judge counted %d late decisions, want 1", r.Late)
	}
	if got := effectiveInstant(t0, spec, late); got != t0+500 {
		t.Errorf("effectiveInstant = t0%+d, want t0+500", got-t0)
	}
}

func TestRunRefusesNonLoopback(t *testing.T) {
	for _, target := range []string{
		"http://10.0.0.1/", "http://192.168.1.1:8080/", "http://example.com/", "https://127.0.0.1/", "http://[2001:db8::1]/", "://bad",
	} {
		_, err := Run(context.Background(), Attack{Targets: []string{target}, Rate: 1, Duration: time.Second, Conns: 1})
		if err == nil || !strings.HasPrefix(err.Error(), "loadtest: ") {
			t.Errorf("Run(%q) error = %v, want a loadtest: refusal", target, err)
		}
	}
}

func TestRunConfigErrors(t *testing.T) {
	good := Attack{Targets: []string{"http://127.0.0.1:1/"}, Rate: 1, Duration: time.Second, Conns: 1}
	for _, a := range []Attack{
		{Rate: 1, Duration: time.Second, Conns: 1},
		{Targets: good.Targets, Rate: 1, Duration: 0, Conns: 1},
		{Targets: good.Targets, Rate: 1, Duration: time.Hour, Conns: 1},
		{Targets: good.Targets, Rate: 1, Duration: time.Second, Conns: 0},
		{Targets: good.Targets, Rate: -1, Duration: time.Second, Conns: 1},
	} {
		if _, err := Run(context.Background(), a); err == nil {
			t.Errorf("Run(%+v): nil error", a)
		}
	}
}

// TestRunCounts checks the attack's bookkeeping on a server that answers
// every third request 429: every request is counted once, by status.
func TestRunCounts(t *testing.T) {
	var n atomicCounter
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.next()%3 == 0 {
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		ok(w, r)
	}))
	defer srv.Close()
	o, err := Run(context.Background(), Attack{Targets: []string{srv.URL, srv.URL + "/b"}, Rate: 200, Duration: 250 * time.Millisecond, Conns: 4})
	if err != nil {
		t.Fatal(err)
	}
	served := int(n.load())
	if o.Requests != served || o.Codes[200]+o.Codes[429] != served || len(o.Latencies) != served {
		t.Errorf("Run saw %d requests (%v, %d latencies); the server served %d", o.Requests, o.Codes, len(o.Latencies), served)
	}
	if want := served / 3; o.Codes[429] < want || o.Codes[429] > want+1 {
		t.Errorf("Run counted %d 429s of %d, want %d or %d", o.Codes[429], served, want, want+1)
	}
}

type atomicCounter struct{ v atomic.Int64 }

func (c *atomicCounter) next() int64 { return c.v.Add(1) - 1 }
func (c *atomicCounter) load() int64 { return c.v.Load() }

func TestGoid(t *testing.T) {
	a, b := goid(), goid()
	if a == 0 || a != b {
		t.Fatalf("goid() = %d then %d on one goroutine, want the same non-zero id", a, b)
	}
	other := make(chan uint64)
	go func() { other <- goid() }()
	if o := <-other; o == 0 || o == a {
		t.Errorf("goid() on another goroutine = %d, this one %d", o, a)
	}
}
