package policy_test

import (
	"os"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigDocSchema parses the schema that Config's doc comment shows, as
// a reader would copy it: it must be a valid file.
func TestConfigDocSchema(t *testing.T) {
	src, err := os.ReadFile("config.go")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(src), "// The file is YAML or JSON with these fields (only policies is required):\n//\n")
	if !ok {
		t.Fatal("config.go: Config's doc has no schema")
	}
	var file strings.Builder
	for _, line := range strings.Split(after, "\n") {
		line, ok := strings.CutPrefix(line, "//\t")
		if !ok {
			break
		}
		file.WriteString(line + "\n")
	}
	if n := strings.Count(file.String(), "\n"); n < 20 {
		t.Fatalf("Config's doc schema has %d lines:\n%s", n, file.String())
	}
	if _, err := policy.ParseConfig([]byte(file.String()), "ratekeeper.yaml"); err != nil {
		t.Errorf("Config's doc schema is not a valid file: %v\n%s", err, file.String())
	}
}
