package ratekeeper_test

import (
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// packageDoc returns the package documentation of file.
func packageDoc(t *testing.T, file string) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	return f.Doc.Text()
}

// statusCodes returns the HTTP status codes s names, sorted, once each.
func statusCodes(s string) []string {
	codes := regexp.MustCompile(`\b[1-5][0-9][0-9]\b`).FindAllString(s, -1)
	slices.Sort(codes)
	return slices.Compact(codes)
}

// TestDocClientRetries: the root package's list says which refusals
// package client retries as client's own documentation does: 429, 503,
// 529 and a 403 refusing the request for its rate. It said "retries 429
// and 503".
func TestDocClientRetries(t *testing.T) {
	client := packageDoc(t, "client/doc.go")
	_, backoff, ok := strings.Cut(client, "it backs off when turned away:")
	if !ok {
		t.Fatal(`client/doc.go has no "it backs off when turned away:" item`)
	}
	backoff, _, _ = strings.Cut(backoff, "\n  - ") // up to the next item
	want := statusCodes(backoff)

	root := packageDoc(t, "doc.go")
	_, item, ok := strings.Cut(root, "\n  - client: ")
	if !ok {
		t.Fatal("doc.go lists no package client")
	}
	item, _, _ = strings.Cut(item, "\n  - ")
	if got := statusCodes(item); !slices.Equal(got, want) {
		t.Errorf("doc.go says package client %q: it names the statuses %v; client/doc.go retries %v", strings.Join(strings.Fields(item), " "), got, want)
	}
}
