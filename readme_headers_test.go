package ratekeeper_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestReadmeTBeyondW holds the README's account of the IETF header's t to
// what a client gets, through chi and ServeMux: after one request on a
// fresh key, each algorithm whose t exceeds its policy's w must be named
// in the README's sentence on t exceeding w. The README named the sliding
// window counter only, while the sliding log, the login preset's
// algorithm, answers its first request with t=61 for w=60 (a request
// exactly w old still counts): the quick start's and the demo's own
// "login";r=4;t=61.
func TestReadmeTBeyondW(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := strings.Join(strings.Fields(string(b)), " ")
	i := strings.Index(readme, "can exceed `w`")
	if i < 0 {
		t.Fatal("README.md has no sentence on t exceeding w (\"can exceed `w`\")")
	}
	start := strings.LastIndex(readme[:i], ". ") + 2
	end := i + strings.Index(readme[i:], ". ")
	sentence := readme[start:end]
	named := map[algorithms.Kind]string{
		algorithms.FixedWindow:    "fixed window",
		algorithms.SlidingLog:     "sliding log",
		algorithms.SlidingWindow:  "sliding window",
		algorithms.SlidingBuckets: "sliding buckets",
		algorithms.TokenBucket:    "token bucket",
		algorithms.LeakyBucket:    "leaky bucket",
	}
	member := regexp.MustCompile(`;r=\d+;t=(\d+)$`)
	window := regexp.MustCompile(`;w=(\d+)$`)
	for kind, phrase := range named {
		spec := algorithms.Spec{Algorithm: kind, Limit: 5, Window: time.Minute}
		if kind == algorithms.SlidingBuckets {
			spec.Buckets = 6
		}
		for _, router := range []string{"chi", "ServeMux"} {
			// A minute boundary, as the demo's clock starts.
			store, err := algorithms.NewMemoryStore(algorithms.WithClock(algotest.NewClock(time.Unix(1_700_000_040, 0))))
			if err != nil {
				t.Fatal(err)
			}
			m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("p", spec, keyfunc.Must(keyfunc.IP())))})
			var h http.Handler
			if router == "chi" {
				r := chi.NewRouter()
				r.With(m.Handler).Get("/", func(http.ResponseWriter, *http.Request) {})
				h = r
			} else {
				mux := http.NewServeMux()
				mux.Handle("GET /", m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
				h = mux
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
			store.Close()
			tm := member.FindStringSubmatch(w.Header().Get("RateLimit"))
			wm := window.FindStringSubmatch(w.Header().Get("RateLimit-Policy"))
			if w.Code != http.StatusOK || tm == nil || wm == nil {
				t.Fatalf("%s, %s: %d %v", kind, router, w.Code, w.Header())
			}
			tv, _ := strconv.Atoi(tm[1])
			wv, _ := strconv.Atoi(wm[1])
			if tv > wv && !strings.Contains(sentence, phrase) {
				t.Errorf("%s, %s: one request gives t=%d with w=%d, and the README's sentence on t exceeding w does not name the %s:\n%s", kind, router, tv, wv, phrase, sentence)
			}
		}
	}
}
