package ratekeeper_test

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/ratekeeper/ratekeeper/client"
)

// The README's Go snippets outside the quick start and the configuration
// section, each copied verbatim below between "// README:begin NAME" and
// "// README:end" and compared with the README's block, so that the code a
// new user copies compiles and does what its comments say.

// markedCodeNamed returns the lines of file between its
// "// README:begin name" and "// README:end" markers, indentation removed.
func markedCodeNamed(t *testing.T, file, name string) []string {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, code, ok := strings.Cut(string(src), "// README:begin "+name+"\n")
	if !ok {
		t.Fatalf("%s has no README:begin %s marker", file, name)
	}
	code, _, _ = strings.Cut(code, "// README:end")
	return trimLines(strings.Split(strings.TrimRight(code, "\t\n"), "\n"))
}

// checkReadmeBlock fails the test unless the first Go block after the
// README paragraph starting with intro is the code marked name here, once
// each of replace's old strings in the README is read as its new one.
func checkReadmeBlock(t *testing.T, intro, name string, replace ...string) {
	t.Helper()
	readme := readmeGoBlock(t, intro)
	r := strings.NewReplacer(replace...)
	for i, l := range readme {
		readme[i] = r.Replace(l)
	}
	tested := markedCodeNamed(t, "readme_review_test.go", name)
	if !slices.Equal(readme, tested) {
		t.Fatalf("the README's block after %q is not the code tested here:\nREADME:\n%s\ntested:\n%s",
			intro, strings.Join(readme, "\n"), strings.Join(tested, "\n"))
	}
}

// readmeQuickStartStore is the start of the README's "Quick start (chi)"
// example, verbatim: the part readmeQuickStart (middleware_test.go) leaves
// out. It hands the store to use before closing it.
func readmeQuickStartStore(use func(algorithms.Store)) {
	// README:begin quickstart
	store, err := algorithms.NewMemoryStore(algorithms.WithMaxKeys(1_000_000))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	// README:end
	use(store)
}

// TestReadmeQuickStartWhole: the README's chi example is, as a whole, the
// store above followed by readmeQuickStart (TestReadmeQuickStart checks
// only that it ends so), and the two together serve a request.
func TestReadmeQuickStartWhole(t *testing.T) {
	readme, tested := readmeBlock(t, "## Quick start (chi)")
	want := append(append(markedCodeNamed(t, "readme_review_test.go", "quickstart"), ""), tested...) // a blank line between
	if !slices.Equal(readme, want) {
		t.Fatalf("the README's chi example is not the code tested here:\nREADME:\n%s\ntested:\n%s",
			strings.Join(readme, "\n"), strings.Join(want, "\n"))
	}
	readmeQuickStartStore(func(store algorithms.Store) {
		srv := httptest.NewServer(readmeQuickStart(store, hello, hello))
		defer srv.Close()
		resp, err := srv.Client().Get(srv.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got, want := resp.Header.Get("RateLimit-Policy"), `"per-second";q=10;w=1, "per-minute";q=100;w=60`; resp.StatusCode != 200 || string(body) != "hello" || got != want {
			t.Errorf("GET /: %d %q, RateLimit-Policy %q; want 200 \"hello\", %q", resp.StatusCode, body, got, want)
		}
	})
}

// readmeRedis is the README's Redis store, verbatim but for the address,
// which is the test's server (never the 6379 a user may run), in a function
// that returns an error, as the README's code is; it hands the store to use.
func readmeRedis(addr string, use func(algorithms.Store)) error {
	// README:begin redis
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true}) // or a Cluster / Sentinel client
	store, err := redisstore.New(rdb, redisstore.WithPrefix("myapp"),
		redisstore.WithTimeout(250*time.Millisecond)) // a dead Redis fails each request within 250ms
	if err != nil {
		return err
	}
	// README:end
	use(store)
	return nil
}

// TestReadmeRedisStore runs the README's Redis store on a redis-server the
// test starts: a Take decides under the prefix "myapp", and once the server
// is stopped a Take fails, wrapping context.DeadlineExceeded, within about
// 250ms (go-redis alone redials and retries for longer).
func TestReadmeRedisStore(t *testing.T) {
	checkReadmeBlock(t, "## Many instances, one limit (Redis)", "redis", `"127.0.0.1:6379"`, "addr")
	srv := redistest.New(t)
	var store algorithms.Store
	if err := readmeRedis(srv.Addr, func(s algorithms.Store) { store = s }); err != nil {
		t.Fatal(err)
	}
	spec := algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 5, Window: time.Minute}
	check := algorithms.Check{Spec: spec, Key: "per-ip:203.0.113.7", Cost: 1}
	ds, err := store.Take(t.Context(), check)
	if err != nil || !ds[0].Allowed || ds[0].Remaining != 4 {
		t.Fatalf("Take with Redis up: %+v, %v; want allowed, 4 left", ds, err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	keys, err := rdb.Keys(t.Context(), "*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys in Redis: %q, %v; want the store's", keys, err)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "myapp") {
			t.Errorf("key %q is not under the prefix myapp", k)
		}
	}
	// The README's reason to give each service a prefix of its own:
	// another service's store under the same prefix counts the same policy
	// name and spec together with this one; under its own, apart.
	for _, c := range []struct {
		prefix string
		left   int64
	}{{"myapp", 3}, {"otherapp", 4}} {
		other, err := redisstore.New(rdb, redisstore.WithPrefix(c.prefix))
		if err != nil {
			t.Fatal(err)
		}
		ds, err := other.Take(t.Context(), check)
		if err != nil || !ds[0].Allowed || ds[0].Remaining != c.left {
			t.Errorf("Take by another store under the prefix %q: %+v, %v; want allowed, %d left", c.prefix, ds, err, c.left)
		}
	}

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	// The README's timeout ends each call: without it (left out, the
	// store's default is 2s), go-redis gives up on a refused dial after
	// about 1.7s, with an error that does not wrap
	// context.DeadlineExceeded. (How long the call took is not checked: a
	// loaded machine may stretch it.)
	for i := range 3 {
		if _, err := store.Take(t.Context(), check); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Take %d with Redis stopped: %v; want an error wrapping context.DeadlineExceeded", i, err)
		}
	}
}

// readmeClient is the README's pacing Transport, verbatim, in a function
// that returns an error; it hands the client to use.
func readmeClient(use func(*http.Client)) error {
	// README:begin client
	tr, err := client.New(nil,
		client.WithRate(5, time.Second),    // queue: one request every 200ms per host
		client.WithMaxWait(30*time.Second), // beyond that, or past the ctx deadline: *client.WaitError at once
	)
	if err != nil {
		return err
	}
	hc := &http.Client{Transport: tr}
	// README:end
	use(hc)
	return nil
}

// TestReadmeClient runs the README's pacing Transport against two servers:
// the second request to one host has its turn 200ms after the first, so
// with a 1ms deadline it fails at once with a *client.WaitError, sending
// nothing; a request to the other host goes at once.
//
// The 200ms are real time: a try in which the first request's round trip
// and the second request took 100ms or more (a loaded machine under -race
// can stall one that long) leaves the second too little of its wait to
// tell anything, and is made again, on new servers with a new Transport
// (up to 5 tries; what the last one found is reported).
func TestReadmeClient(t *testing.T) {
	checkReadmeBlock(t, "## Calling a rate-limited API (`client`)", "client")
	const tries = 5
	for try := 1; ; try++ {
		fails, took := readmeClientTry(t)
		if took < 100*time.Millisecond || try == tries {
			for _, f := range fails {
				t.Error(f)
			}
			return
		}
		t.Logf("try %d: the first round trip and the second request took %s; again (it found %q)", try, took, fails)
	}
}

// readmeClientTry is one try of TestReadmeClient: it returns what it
// found wrong and the time from the first request's start to the second
// request's end.
func readmeClientTry(t *testing.T) (fails []string, took time.Duration) {
	t.Helper()
	var hits [2]atomic.Int64
	var urls [2]string
	for i := range hits {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits[i].Add(1) }))
		defer srv.Close()
		urls[i] = srv.URL
	}
	var hc *http.Client
	if err := readmeClient(func(c *http.Client) { hc = c }); err != nil {
		t.Fatal(err)
	}
	get := func(url string, timeout time.Duration) error {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	first := time.Now()
	if err := get(urls[0], time.Minute); err != nil {
		t.Fatalf("first request: %v", err)
	}
	start := time.Now()
	err := get(urls[0], time.Millisecond)
	end := time.Now()
	took = end.Sub(first)
	var we *client.WaitError
	if !errors.As(err, &we) {
		return append(fails, fmt.Sprintf("second request to the host within 1ms: %v; want a *client.WaitError", err)), took
	}
	if !we.Deadline || we.Wait <= time.Millisecond || we.Wait > 200*time.Millisecond || we.MaxWait != 30*time.Second {
		fails = append(fails, fmt.Sprintf("WaitError %+v; want Deadline, a Wait over 1ms and at most 200ms, MaxWait 30s", *we))
	}
	if d := end.Sub(start); d >= we.Wait {
		fails = append(fails, fmt.Sprintf("the refused request returned after %s, not at once (its wait was %s)", d, we.Wait))
	}
	if n := hits[0].Load(); n != 1 {
		fails = append(fails, fmt.Sprintf("the first host got %d requests, want 1 (the refused one is not sent)", n))
	}
	// The other host has a queue of its own: its first request is sent at
	// once, not refused for a wait behind the first host's (a round trip
	// slower than the deadline on a loaded machine fails with the
	// context's error instead, which says nothing of the queue).
	err = get(urls[1], 20*time.Millisecond)
	if errors.As(err, &we) {
		fails = append(fails, fmt.Sprintf("first request to the other host: %v; want it sent at once, not queued behind the first host", err))
	}
	if n := hits[1].Load(); err == nil && n != 1 {
		fails = append(fails, fmt.Sprintf("the other host got %d requests, want 1", n))
	}
	return fails, took
}

// readmeLimiter is the README's direct use of a Limiter, verbatim; it
// returns the decision.
func readmeLimiter(ctx context.Context, store algorithms.Store, clientIP string) (algorithms.Decision, error) {
	// README:begin limiter
	limiter, err := algorithms.NewLimiter(store, algorithms.Spec{
		Algorithm: algorithms.SlidingWindow, Limit: 100, Window: time.Minute,
	})
	if err != nil {
		log.Fatal(err) // a Spec that is not valid: the error names the field
	}
	d, err := limiter.Allow(ctx, clientIP)
	if err == nil && !d.Allowed {
		// retry after d.RetryAfter
	}
	// README:end
	return d, err
}

// TestReadmeLimiter runs the README's Limiter on a memory store with a
// manual clock at a minute boundary: 100 requests pass, the 101st is denied
// until the 100 weigh 99 on the next minute, 0.6s into it.
func TestReadmeLimiter(t *testing.T) {
	checkReadmeBlock(t, "Every decision is exact integer arithmetic", "limiter")
	clock, store := clockedStore(t)
	for i := 1; i <= 100; i++ {
		if d, err := readmeLimiter(t.Context(), store, "203.0.113.7"); err != nil || !d.Allowed || d.Remaining != int64(100-i) {
			t.Fatalf("request %d: %+v, %v; want allowed, %d left", i, d, err, 100-i)
		}
	}
	d, err := readmeLimiter(t.Context(), store, "203.0.113.7")
	if want := time.Minute + 600*time.Millisecond; err != nil || d.Allowed || d.RetryAfter != want {
		t.Fatalf("request 101: %+v, %v; want denied, RetryAfter %s", d, err, want)
	}
	if d, err := readmeLimiter(t.Context(), store, "198.51.100.1"); err != nil || !d.Allowed {
		t.Errorf("another client: %+v, %v; want allowed", d, err)
	}
	clock.Advance(d.RetryAfter - time.Nanosecond)
	if d, err := readmeLimiter(t.Context(), store, "203.0.113.7"); err != nil || d.Allowed {
		t.Errorf("1ns before RetryAfter: %+v, %v; want denied", d, err)
	}
	clock.Advance(time.Nanosecond)
	if d, err := readmeLimiter(t.Context(), store, "203.0.113.7"); err != nil || !d.Allowed {
		t.Errorf("after RetryAfter: %+v, %v; want allowed", d, err)
	}
}

// TestReadmeExampleCommands: the shell commands the README gives for
// examples/redis and examples/config are the ones in each example's
// package documentation (the README adds comments), so that the two cannot
// drift apart.
func TestReadmeExampleCommands(t *testing.T) {
	for _, c := range []struct{ intro, file string }{
		{"`examples/redis` runs two instances", "examples/redis/main.go"},
		{"## Configuration, hot reload, adaptive limits, metrics", "examples/config/main.go"},
	} {
		var readme []string
		for _, l := range strings.Split(strings.TrimSuffix(readmeBlockAfter(t, c.intro, "sh"), "\n"), "\n") {
			cmd, _, _ := strings.Cut(l, " # ")
			readme = append(readme, strings.TrimSpace(cmd))
		}
		src, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		doc, _, _ := strings.Cut(string(src), "\npackage ")
		var documented []string
		for _, l := range strings.Split(doc, "\n") {
			if cmd, ok := strings.CutPrefix(l, "//\t"); ok {
				documented = append(documented, cmd)
			}
		}
		if !slices.Equal(readme, documented) {
			t.Errorf("the README's commands for %s:\n%s\nits package documentation's:\n%s",
				c.file, strings.Join(readme, "\n"), strings.Join(documented, "\n"))
		}
	}
}

// TestReadmeNoGoRunInBackground: no shell command of the README or of an
// example's package documentation starts a server with `go run ... &`.
// There $! is the go command, not the server: `kill $!` ends go and leaves
// the server listening (it still holds its ports when the command is run
// again), and the commands pasted after it run while go is still compiling
// (curl then prints 000). Build a binary and run that in the background, as
// the configuration section does.
func TestReadmeNoGoRunInBackground(t *testing.T) {
	files := []string{"README.md"}
	docs, err := filepath.Glob("examples/*/main.go")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, docs...)
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(src)
		if file != "README.md" {
			text, _, _ = strings.Cut(text, "\npackage ")
		}
		for i, l := range strings.Split(text, "\n") {
			l = strings.TrimPrefix(l, "//\t")
			cmd, _, _ := strings.Cut(l, " # ")
			cmd = strings.TrimSpace(cmd)
			if strings.HasPrefix(cmd, "go run ") && strings.HasSuffix(cmd, "&") && !strings.HasSuffix(cmd, "&&") {
				t.Errorf("%s:%d: %q runs go in the background: $! is the go command, which kill $! ends without stopping the server, and what follows runs while it compiles; build a binary and run that", file, i+1, cmd)
			}
		}
	}
}

// TestReadmeWaitsForBackgroundServer: a shell command of the README or of
// an example's package documentation that starts a server in the
// background is not followed at once by a request to it: the server needs
// a moment to listen (examples/config about 0.2 to 0.4 s on a 2-CPU
// machine), and pasted as written, the curl after it ran first, answered
// 000 (connection refused) two times in five. A sleep, as the Redis
// section's "sleep 1", comes between.
func TestReadmeWaitsForBackgroundServer(t *testing.T) {
	files := []string{"README.md"}
	docs, err := filepath.Glob("examples/*/main.go")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, docs...)
	started := 0
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(src)
		if file != "README.md" {
			text, _, _ = strings.Cut(text, "\npackage ")
		}
		background := "" // the command before, if it ran in the background
		for i, l := range strings.Split(text, "\n") {
			l = strings.TrimPrefix(l, "//\t")
			cmd, _, _ := strings.Cut(l, " # ")
			cmd = strings.TrimSpace(cmd)
			if background != "" && strings.HasPrefix(cmd, "curl ") {
				t.Errorf("%s:%d: %q comes right after %q, which starts the server in the background: it runs before the server listens (curl prints 000); wait first (sleep 1)", file, i+1, cmd, background)
			}
			background = ""
			if strings.HasSuffix(cmd, "&") && !strings.HasSuffix(cmd, "&&") && !strings.HasPrefix(cmd, "redis-server ") {
				background = cmd
				started++
			}
		}
	}
	if started == 0 {
		t.Fatal("no command of the README or the examples' documentation starts a server in the background: the configuration and Redis sections do")
	}
}

// TestReadmeSnippetImportsNamed: the README names the import of every
// package its Go snippets use (the X of each X.Name that the snippet does
// not declare), in the text between the snippet's heading or paragraph and
// the block, as an import path in backquotes whose last element (a /vN
// suffix dropped) is the name, or as "package `name`" where the two differ
// (go-redis): a new user copying a snippet into a file of their own is not
// left to guess that prometheus is client_golang's or redis is go-redis/v9.
func TestReadmeSnippetImportsNamed(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, intro := range []string{
		"## Quick start (chi)",
		"In code (what `examples/config` does)",
		"## Many instances, one limit (Redis)",
		"Behind load balancers, with users signed in",
		"The quick start's limits as one rule table",
		"## Calling a rate-limited API (`client`)",
		"Every decision is exact integer arithmetic",
	} {
		_, after, ok := strings.Cut(readme, "\n"+intro)
		if !ok {
			t.Fatalf("README.md has no paragraph starting %q", intro)
		}
		text, rest, ok := strings.Cut(after, "\n```go\n")
		if !ok {
			t.Fatalf("README.md has no Go block after %q", intro)
		}
		block, _, _ := strings.Cut(rest, "```")
		named := map[string]bool{}
		for _, m := range regexp.MustCompile("`([a-z0-9./_-]+)`").FindAllStringSubmatch(text, -1) {
			p := regexp.MustCompile(`/v[0-9]+$`).ReplaceAllString(m[1], "")
			named[p[strings.LastIndex(p, "/")+1:]] = true
		}
		for _, m := range regexp.MustCompile("package `([a-z0-9]+)`").FindAllStringSubmatch(text, -1) {
			named[m[1]] = true
		}
		for _, pkg := range snippetPackages(t, block) {
			if !named[pkg] {
				t.Errorf("the Go block after %q uses package %s, whose import the README does not name before it", intro, pkg)
			}
		}
	}
}

// snippetPackages returns the names that code, a function body, uses as
// the X of an X.Name without declaring them: the packages it needs.
func snippetPackages(t *testing.T, code string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "snippet.go", "package p\nfunc _() error {\n"+code+"\n}\n", 0)
	if err != nil {
		t.Fatalf("README snippet does not parse: %v\n%s", err, code)
	}
	var pkgs []string
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			// Obj is nil for a name the snippet does not declare.
			if id, ok := sel.X.(*ast.Ident); ok && id.Obj == nil && !slices.Contains(pkgs, id.Name) {
				pkgs = append(pkgs, id.Name)
			}
		}
		return true
	})
	return pkgs
}

// TestReadmeWithoutContextCost: the README said WithoutContext "saves the
// one allocation per request that carries it", which reads as no
// allocation left; with rate-limit headers on (the default) the middleware
// then allocates their values instead (80 or 208 bytes), so the count per
// request is unchanged and the bytes drop (middleware's
// TestAllocationsWithoutContextHeaderValues). The README says so now.
func TestReadmeWithoutContextCost(t *testing.T) {
	text := strings.Join(strings.Fields(readmeText(t)), " ")
	_, after, ok := strings.Cut(text, "`middleware.WithoutContext` leaves it out")
	if !ok {
		t.Fatal("the README no longer says what middleware.WithoutContext leaves out")
	}
	sentence, _, _ := strings.Cut(after, "BENCHMARKS.md")
	if strings.Contains(sentence, "saves the one allocation") || !strings.Contains(sentence, "header values") {
		t.Errorf("the README says of WithoutContext %q; want the allocation it drops and the header values' allocation that remains", sentence)
	}
}

// TestReadmeServersHaveTimeouts: a Go block of the README that serves does
// so with an http.Server whose ReadHeaderTimeout and ReadTimeout are set,
// as the quick start tells users to in production and as the examples do
// (app.NewServer). The configuration code, "what examples/config does",
// ended with http.ListenAndServe(":8080", ...), a server with no timeout
// at all: a client trickling its request in or leaving its connection
// idle held it for ever.
func TestReadmeServersHaveTimeouts(t *testing.T) {
	serving := 0
	for _, b := range strings.Split(readmeText(t), "```go\n")[1:] {
		code, _, _ := strings.Cut(b, "```")
		if !strings.Contains(code, "ListenAndServe(") && !strings.Contains(code, ".Serve(") {
			continue
		}
		serving++
		if strings.Contains(code, "http.ListenAndServe(") || !strings.Contains(code, "ReadHeaderTimeout:") || !strings.Contains(code, "ReadTimeout:") {
			t.Errorf("a Go block of README.md serves without an http.Server whose ReadHeaderTimeout and ReadTimeout are set:\n%s", code)
		}
	}
	if serving == 0 {
		t.Fatal("no Go block of README.md serves: the configuration code's does")
	}
}
