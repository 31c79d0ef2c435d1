package plural

import "testing"

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0 lines"}, {1, "1 line"}, {2, "2 lines"}, {-1, "-1 lines"}, {1000, "1000 lines"},
	} {
		if got := Count(tc.n, "line"); got != tc.want {
			t.Errorf("Count(%d, %q) = %q, want %q", tc.n, "line", got, tc.want)
		}
	}
	if got := Count(1, "key-window"); got != "1 key-window" {
		t.Errorf("Count(1, %q) = %q, want %q", "key-window", got, "1 key-window")
	}
}
