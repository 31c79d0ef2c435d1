package ratekeeper_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeGoVersion: the README names the Go release that go.mod's go
// line asks for, and says that it is needed for everything a new user does
// with the module, not the tests alone: the demo (README's first command)
// and a module importing the library are refused by an older go command
// (or, under GOTOOLCHAIN=auto, made to download this one) just as the
// tests are.
func TestReadmeGoVersion(t *testing.T) {
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (1\.\d+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	want := "Go " + string(m[1])
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	loc := regexp.MustCompile(`Go 1\.\d+\b`).FindStringIndex(readme)
	if loc == nil {
		t.Fatalf("the README names no Go release; go.mod asks for %s", want)
	}
	if got := readme[loc[0]:loc[1]]; got != want {
		t.Fatalf("the README names %s first; go.mod asks for %s", got, want)
	}
	// The sentence that names it, from the end of the one before.
	start := strings.LastIndex(readme[:loc[0]], ". ") + 2
	end := loc[1] + strings.Index(readme[loc[1]:], ". ")
	sentence := strings.Join(strings.Fields(readme[start:end]), " ")
	for _, word := range []string{"demo", "import", "tests"} {
		if !strings.Contains(sentence, word) {
			t.Errorf("the README's sentence naming %s does not say that %q needs it too:\n%s", want, word, sentence)
		}
	}
}
