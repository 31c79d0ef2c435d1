package middleware_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// fanLog records, in order, what each of several observers is told.
type fanLog struct {
	mu  sync.Mutex
	got []string
}

func (l *fanLog) add(s string) {
	l.mu.Lock()
	l.got = append(l.got, s)
	l.mu.Unlock()
}

func (l *fanLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.got
	l.got = nil
	return out
}

// fanObserver is a GiveBackObserver writing to a shared fanLog under its name.
type fanObserver struct {
	nopObserver
	name string
	log  *fanLog
}

func (o *fanObserver) ObserveState(from, to middleware.State) {
	o.log.add(o.name + " state " + from.String() + "->" + to.String())
}

func (o *fanObserver) ObserveGiveBack(policy string) { o.log.add(o.name + " giveback " + policy) }

// TestObserversAllToldStateAndGiveBack: with several observers, each is
// told, in the order given, of a response's units given back (CountIf)
// and of a change of failure state, not only of requests.
func TestObserversAllToldStateAndGiveBack(t *testing.T) {
	mem, _ := newStore(t)
	var log fanLog
	observe := middleware.WithObserver(&fanObserver{name: "a", log: &log}, &fanObserver{name: "b", log: &log})

	counted := policy.CountIf(func(_ *http.Request, status int) bool { return status < 500 })
	m := middleware.MustNew(mem, []*policy.Policy{fixed("p", 10, time.Minute, remote, counted)}, observe)
	mux := http.NewServeMux()
	mux.Handle("GET /fail", m.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	})))
	if w := serve(mux, "GET", "/fail"); w.Code != http.StatusInternalServerError {
		t.Fatalf("GET /fail: %d", w.Code)
	}
	if got, want := log.take(), []string{"a giveback p", "b giveback p"}; !slices.Equal(got, want) {
		t.Errorf("after a 500 that does not count: observers told %q, want %q", got, want)
	}

	down := &switchStore{Store: mem}
	down.fail.Store(true)
	mux = http.NewServeMux()
	mux.Handle("GET /", middleware.MustNew(down, []*policy.Policy{fixed("q", 10, time.Minute, remote)}, observe).Handler(ok))
	if w := serve(mux, "GET", "/"); w.Code != http.StatusOK {
		t.Fatalf("GET / with the store down: %d, want 200 (fail open)", w.Code)
	}
	want := "state " + middleware.StateHealthy.String() + "->" + middleware.StateFailingOpen.String()
	if got := log.take(); !slices.Equal(got, []string{"a " + want, "b " + want}) {
		t.Errorf("after the store failed: observers told %q, want a then b told %q", got, want)
	}
}

// TestLogObserverForgetsRemovedPolicy: a LogObserver logs an effective
// limit when it changes; once told a policy left the rule set, it has
// forgotten that policy's last limit, so the same limit under a policy of
// that name, added again, is logged again.
func TestLogObserverForgetsRemovedPolicy(t *testing.T) {
	var buf bytes.Buffer
	l, err := middleware.NewLogObserver(slog.New(slog.NewTextHandler(&buf, nil)))
	if err != nil {
		t.Fatal(err)
	}
	logged := func() int {
		n := strings.Count(buf.String(), "effective limit")
		buf.Reset()
		return n
	}
	l.ObserveLimit("p", 5, 10)
	if n := logged(); n != 1 {
		t.Fatalf("a limit below the configured one logged %d times, want once", n)
	}
	l.ObserveLimit("p", 5, 10)
	if n := logged(); n != 0 {
		t.Fatalf("the same limit again logged %d times, want none", n)
	}
	l.ObservePolicyRemoved("p")
	l.ObserveLimit("p", 5, 10)
	if n := logged(); n != 1 {
		t.Errorf("the limit of a policy removed and added again logged %d times, want once", n)
	}
}

// TestForwardingReportQuotesOddPeer: a RemoteAddr that is no address (a
// custom listener's text) is named in the forwarding report quoted and cut
// to 64 bytes, never raw. The key reads that text as it is (an ip key
// finds no address there: no client is keyed by it, and nothing is
// reported).
func TestForwardingReportQuotesOddPeer(t *testing.T) {
	peer := "pipe:" + strings.Repeat("x", 59) + "\n" // 65 bytes, the last one over
	store, _ := newStore(t)
	var got reports
	m := middleware.MustNew(store, []*policy.Policy{fixed("per-peer", 100, time.Minute, remote)}, got.handler())
	req := httptest.NewRequest("GET", "/", nil)
	req.RemoteAddr = peer
	req.Header.Set("X-Forwarded-For", "198.51.100.7")
	routedBy("chi", m).ServeHTTP(httptest.NewRecorder(), req)
	errs := got.forwarding()
	if len(errs) != 1 {
		t.Fatalf("forwarding reports %v, want one", errs)
	}
	msg := errs[0].Error()
	if want := "from " + strconv.Quote(peer[:64]) + " carries"; !strings.Contains(msg, want) {
		t.Errorf("report %q does not name the peer as %s", msg, want)
	}
	if strings.Contains(msg, "\n") || strings.Contains(msg, `\n`) {
		t.Errorf("report %q holds the peer's 65th byte", msg)
	}
}
