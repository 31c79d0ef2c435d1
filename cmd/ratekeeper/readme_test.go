package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/internal/readmetest"
)

// TestReadmeReplay runs the README's replay command (the sample
// configuration over the sample logs, in the order the shell expands
// access.log*) and checks what the README says of it: exit status 1, the
// login policy rejecting the number of requests the README gives.
func TestReadmeReplay(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const command = "go run ./cmd/ratekeeper replay --config examples/config/ratekeeper.yaml \\\n    cmd/ratekeeper/testdata/access.log*"
	if !strings.Contains(string(readme), command) {
		t.Fatalf("README.md does not show the replay command tested here:\n%s", command)
	}
	claim := regexp.MustCompile("the `login` policy\\s+rejecting (\\d+) of their requests").FindSubmatch(readme)
	if claim == nil {
		t.Fatal("README.md does not say how many requests the login policy rejects")
	}
	logs, err := filepath.Glob("testdata/access.log*")
	if err != nil || len(logs) != 2 {
		t.Fatalf("testdata/access.log* = %v, %v; want the two sample logs", logs, err)
	}
	args := append([]string{"replay", "--quiet", "--config", "../../examples/config/ratekeeper.yaml"}, logs...)
	out, errOut, code := runCmd(args...)
	if code != exitFindings {
		t.Errorf("replay: exit %d, want %d (README: the sample logs exit 1); stderr:\n%s", code, exitFindings, errOut)
	}
	got := regexp.MustCompile(`(?m)^policy login: .*\n  requests +\d+\n  rejected +(\d+) `).FindStringSubmatch(out)
	if got == nil {
		t.Fatalf("replay reports no rejections for policy login:\n%s", out)
	}
	if got[1] != string(claim[1]) {
		t.Errorf("replay: policy login rejects %s requests; README.md says %s", got[1], claim[1])
	}
}

// TestReadmeReplaySuggestionsOneKey checks what the README says of the
// sample logs' login suggestions: they are one client's, since the
// percentiles count key-windows, so that a new user does not raise a
// login limit to make room for a password guesser. The README gives the
// suggested range, the client holding every rejection, and the P95 of
// each key's busiest window; replay's JSON report must give the same.
func TestReadmeReplaySuggestionsOneKey(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	// The README's words, any space in them a line break as well.
	words := "the `login` policy's suggestions, (\\d+) to (\\d+) a minute, are one client's: (\\S+) has all (\\d+) of its rejections, and 95% of the keys never made more than (\\d+)"
	claim := regexp.MustCompile(strings.ReplaceAll(words, " ", "\\s+")).FindStringSubmatch(string(readme))
	if claim == nil {
		t.Fatal("README.md does not say whose the login policy's suggestions on the sample logs are")
	}
	logs, err := filepath.Glob("testdata/access.log*")
	if err != nil || len(logs) != 2 {
		t.Fatalf("testdata/access.log* = %v, %v; want the two sample logs", logs, err)
	}
	out, errOut, code := runCmd(append([]string{"replay", "--quiet", "--json", "--config", "../../examples/config/ratekeeper.yaml"}, logs...)...)
	if code != exitFindings {
		t.Fatalf("replay: exit %d, want %d; stderr:\n%s", code, exitFindings, errOut)
	}
	var rep struct {
		Policies []struct {
			Name        string
			Rejected    int64
			TopRejected []struct {
				Key      string
				Rejected int64
			} `json:"top_rejected"`
			Rates struct {
				PeakP95 int64 `json:"peak_p95"`
			} `json:"requests_per_key_per_window"`
			Limits []struct {
				Label string
				Spec  struct{ Limit int64 }
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Policies {
		if p.Name != "login" {
			continue
		}
		var suggested []string
		for _, l := range p.Limits {
			if l.Label != "configured" {
				suggested = append(suggested, strconv.FormatInt(l.Spec.Limit, 10))
			}
		}
		if len(p.TopRejected) == 0 || len(suggested) == 0 {
			t.Fatalf("replay's login report has no rejected key or no suggestion: %+v", p)
		}
		top := p.TopRejected[0]
		got := []string{suggested[0], suggested[len(suggested)-1], strings.TrimPrefix(top.Key, "(fallback 1) "),
			strconv.FormatInt(top.Rejected, 10), strconv.FormatInt(p.Rates.PeakP95, 10)}
		if !slices.Equal(got, claim[1:]) || top.Rejected != p.Rejected {
			t.Errorf("replay: login suggests %s to %s, %s rejected %d times of %d, busiest-window P95 %s; README.md says %q",
				got[0], got[1], top.Key, top.Rejected, p.Rejected, got[4], claim[0])
		}
		return
	}
	t.Fatal("replay's report has no policy login")
}

// TestReadmeDemoTable: the README shows the table of requests each
// algorithm admits in the seed scenarios as the demo prints it, lines and
// spacing as they are, so that a new user sees the counts the scenarios
// are there for (the README listed the scenarios alone).
func TestReadmeDemoTable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := readmetest.BlockAfter(t, string(readme), "The demo prints the requests each algorithm admits in them", "")
	if strings.Count(want, "\n") < 5 {
		t.Fatalf("the README's demo table has %d lines, want its header and a row per scenario:\n%s", strings.Count(want, "\n"), want)
	}
	out, errOut, code := runCmd("demo", "--svg", filepath.Join(t.TempDir(), "d.svg"))
	if code != exitOK {
		t.Fatalf("demo: exit %d, stderr %s", code, errOut)
	}
	if !strings.Contains(out, "\n"+want) {
		t.Errorf("demo does not print the README's table:\n%s\ndemo:\n%s", want, out)
	}
}
