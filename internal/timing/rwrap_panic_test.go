package timing

import (
	"net/http"
	"testing"
)

// TestServeStatusPanicBeforeAnyStatusIsUnsent: a handler that panics
// having written nothing leaves the headers unsent (a recoverer further
// out answers with them), so done's sent is false, as for one that
// returned having written nothing; one that wrote its status first sent
// them. sent was true after every panic: the middleware left its IETF
// line as it was before a give-back, in the recoverer's 500.
func TestServeStatusPanicBeforeAnyStatusIsUnsent(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    http.HandlerFunc
		sent bool
	}{
		{"nothing written", func(w http.ResponseWriter, r *http.Request) { panic("boom") }, false},
		{"status written", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusAccepted)
			panic("boom")
		}, true},
		{"body written", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("part"))
			panic(http.ErrAbortHandler)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, sent := 0, !tc.sent
			func() {
				defer func() { recover() }()
				ServeStatus(&http1Writer{}, httpRequest(t), tc.h, nil, func(s int, sn bool) { status, sent = s, sn })
			}()
			if status != http.StatusInternalServerError || sent != tc.sent {
				t.Errorf("done told %d, sent %v; want 500, %v", status, sent, tc.sent)
			}
		})
	}
}

func httpRequest(t *testing.T) *http.Request {
	t.Helper()
	r, err := http.NewRequest("GET", "http://example.com/", nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
