package middleware_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// headerCost is a cost function reading the X-Cost header.
func headerCost(r *http.Request) int64 {
	n, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
	return n
}

// costPolicies are four policies keyed by the client's address: medium
// (10 a minute), free (3, every request costing 1), small (5) and large
// (100), the three but free charged the X-Cost header.
func costPolicies() []*policy.Policy {
	return []*policy.Policy{
		fixed("medium", 10, time.Minute, remote, policy.WithCost(headerCost)),
		fixed("free", 3, time.Minute, remote),
		fixed("small", 5, time.Minute, remote, policy.WithCost(headerCost)),
		fixed("large", 100, time.Minute, remote, policy.WithCost(headerCost)),
	}
}

// costRouters returns h mounted behind m in a stdlib ServeMux and in a chi
// router, at POST /upload.
func costRouters(m *middleware.Middleware) map[string]http.Handler {
	up := func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("stored")) }
	mux := http.NewServeMux()
	mux.Handle("POST /upload", m.Handler(http.HandlerFunc(up)))
	r := chi.NewRouter()
	r.Use(m.Handler)
	r.Post("/upload", up)
	return map[string]http.Handler{"ServeMux": mux, "chi": r}
}

// problem is a problem+json body (RFC 9457) with our extension member.
type problem struct {
	Type     string   `json:"type"`
	Title    string   `json:"title"`
	Status   int      `json:"status"`
	Detail   string   `json:"detail"`
	Violated []string `json:"violated-policies"`
}

// TestCostBeyondSeveralPolicies: a request costing 20 units, above the
// capacity of two of its policies (medium, 10, and small, 5), is refused
// 429 naming both, in the policies' order, in "violated-policies" and in
// the detail, through a ServeMux and a chi router. The response has no
// Retry-After (waiting does not help) and no RateLimit fields (no policy
// decided the request: there is no remaining to report), and its body is
// problem+json. A request costing 7 names small alone, as before.
func TestCostBeyondSeveralPolicies(t *testing.T) {
	const (
		both = `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Too Many Requests","status":429,` +
			`"detail":"The request costs 20 units; policy medium admits 1 to 10, policy small admits 1 to 5.","violated-policies":["medium","small"]}` + "\n"
		one = `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Too Many Requests","status":429,` +
			`"detail":"The request costs 7 units; policy small admits 1 to 5.","violated-policies":["small"]}` + "\n"
	)
	store, _ := newStore(t)
	m := middleware.MustNew(store, costPolicies())
	for name, h := range costRouters(m) {
		t.Run(name, func(t *testing.T) {
			for _, tc := range []struct {
				cost     string
				body     string
				violated []string
			}{
				{"20", both, []string{"medium", "small"}},
				{"7", one, []string{"small"}},
			} {
				w := serve(h, "POST", "/upload", "X-Cost", tc.cost)
				checkProblem(t, w.Result(), w.Body.String(), http.StatusTooManyRequests, "", tc.body)
				for _, f := range []string{"RateLimit", "RateLimit-Policy"} {
					if v, ok := w.Header()[f]; ok {
						t.Errorf("cost %s: %s %q, want none (nothing was decided)", tc.cost, f, v)
					}
				}
				var p problem
				dec := json.NewDecoder(strings.NewReader(w.Body.String()))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&p); err != nil {
					t.Fatalf("cost %s: body %q is not the problem object: %v", tc.cost, w.Body, err)
				}
				if p.Status != w.Code || p.Title != http.StatusText(w.Code) || p.Type != middleware.ProblemTypeQuotaExceeded || !slices.Equal(p.Violated, tc.violated) {
					t.Errorf("cost %s: problem %+v, want status and title of %d, violated %q", tc.cost, p, w.Code, tc.violated)
				}
			}
		})
	}
}

// TestCostBeyondSeveralPoliciesOwnCosts: two policies charging a request
// differently (medium its X-Cost, bytes twice that), both above their
// capacity: the detail gives each policy's cost with its capacity.
func TestCostBeyondSeveralPoliciesOwnCosts(t *testing.T) {
	store, _ := newStore(t)
	double := func(r *http.Request) int64 { return 2 * headerCost(r) }
	m := middleware.MustNew(store, []*policy.Policy{
		fixed("medium", 10, time.Minute, remote, policy.WithCost(headerCost)),
		fixed("bytes", 30, time.Minute, remote, policy.WithCost(double)),
	})
	want := `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Too Many Requests","status":429,` +
		`"detail":"The request costs 20 units under policy medium, which admits 1 to 10; 40 units under policy bytes, which admits 1 to 30.",` +
		`"violated-policies":["medium","bytes"]}` + "\n"
	for name, h := range costRouters(m) {
		w := serve(h, "POST", "/upload", "X-Cost", "20")
		if w.Body.String() != want {
			t.Errorf("%s: body\n%s\nwant\n%s", name, w.Body, want)
		}
	}
}

// TestCostBeyondSeveralPoliciesReported: what else reports such a request
// names every policy too: the *policy.CostError the deny hook finds in
// res.Err() (still found by errors.As, its Policy the first of them, its
// text naming them all), the observer's Denied event, and the log's
// denial record, whose error attribute is that text.
func TestCostBeyondSeveralPoliciesReported(t *testing.T) {
	const text = `policy: "medium": cost 20 exceeds the capacity 10; "small": cost 20 exceeds the capacity 5`
	store, _ := newStore(t)
	var hooked error
	m := middleware.MustNew(store, costPolicies(),
		middleware.WithDenyHandler(func(w http.ResponseWriter, r *http.Request, res *middleware.Result) {
			hooked = res.Err()
			w.WriteHeader(http.StatusTeapot)
		}))
	mux := http.NewServeMux()
	mux.Handle("POST /upload", m.Handler(ok))
	if w := serve(mux, "POST", "/upload", "X-Cost", "20"); w.Code != http.StatusTeapot {
		t.Fatalf("status %d, want the hook's 418", w.Code)
	}
	var ce *policy.CostError
	if !errors.As(hooked, &ce) || !errors.Is(hooked, policy.ErrCost) {
		t.Fatalf("hook's res.Err() %v, want a *policy.CostError", hooked)
	}
	if ce.Policy.Name() != "medium" || ce.Cost != 20 || ce.Error() != text {
		t.Errorf("CostError Policy %q Cost %d text %q, want medium, 20, %q", ce.Policy.Name(), ce.Cost, ce.Error(), text)
	}
	if len(ce.Others) != 1 || ce.Others[0].Policy.Name() != "small" || ce.Others[0].Cost != 20 {
		t.Errorf("CostError Others %v, want small at 20", ce.Others)
	}

	var buf bytes.Buffer
	lo, err := middleware.NewLogObserver(slog.New(slog.NewJSONHandler(&buf, nil)))
	if err != nil {
		t.Fatal(err)
	}
	var outcomes []middleware.Outcome
	var observed error
	rec := errRecorder{request: func(e middleware.Event) { outcomes, observed = append(outcomes, e.Outcome), e.Result.Err() }}
	m = middleware.MustNew(store, costPolicies(), middleware.WithObserver(lo, rec))
	r := chi.NewRouter()
	r.Use(m.Handler)
	r.Post("/upload", ok)
	if w := serve(r, "POST", "/upload", "X-Cost", "20"); w.Code != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429", w.Code)
	}
	if len(outcomes) != 1 || outcomes[0] != middleware.Denied || !errors.As(observed, &ce) || ce.Error() != text {
		t.Errorf("observed %v with %v, want one Denied event whose CostError says %q", outcomes, observed, text)
	}
	var record struct {
		Msg    string `json:"msg"`
		Policy string `json:"policy"`
		Error  string `json:"error"`
	}
	if err := json.Unmarshal(buf.Bytes(), &record); err != nil {
		t.Fatalf("log %q: %v", buf.String(), err)
	}
	if record.Msg != "ratekeeper: request denied" || record.Policy != "medium" || record.Error != text {
		t.Errorf("log record %s, want the denial of medium with error %q", buf.String(), text)
	}
}

// errRecorder is an Observer calling request for every event.
type errRecorder struct{ request func(middleware.Event) }

func (o errRecorder) ObserveRequest(e middleware.Event)    { o.request(e) }
func (errRecorder) ObserveState(from, to middleware.State) {}
func (errRecorder) ObserveLimit(string, int64, int64)      {}
