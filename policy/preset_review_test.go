package policy_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/policy"
)

// presetClock is a clock the test moves by hand.
type presetClock struct{ t time.Time }

func (c *presetClock) Now() time.Time { return c.t }

// greedy counts the requests a client admits in [from, to) when it sends
// one at from and, after each, the next as soon as the limiter allows it
// (at once after an admission, after RetryAfter after a denial), under
// spec on a fresh store whose clock starts at start.
func greedy(t *testing.T, spec algorithms.Spec, start, from, to time.Time) int {
	t.Helper()
	clock := &presetClock{t: start}
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	l, err := algorithms.NewLimiter(store, spec)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for clock.t.Before(to) {
		d, err := l.Allow(context.Background(), "k")
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			if !clock.t.Before(from) {
				n++
			}
			continue
		}
		if d.RetryAfter <= 0 {
			t.Fatalf("%s: denied at %s with RetryAfter %s", spec.Algorithm, clock.t.Sub(start), d.RetryAfter)
		}
		clock.t = clock.t.Add(d.RetryAfter)
	}
	return n
}

// TestPresetFigures pins the figures the preset's doc (preset.go) gives,
// each computed by a client that sends as fast as the preset lets it.
func TestPresetFigures(t *testing.T) {
	key := remoteKey
	t0 := time.Unix(1_700_000_000, 0)
	login := policy.Must(policy.Login(key)).Spec()
	comments := policy.Must(policy.Comments(key)).Spec()
	register := policy.Must(policy.Register(key)).Spec()

	// Login: "at most 7,200 guesses a day per IP and account".
	if n := greedy(t, login, t0, t0, t0.Add(24*time.Hour)); n != 7200 {
		t.Errorf("login: %d attempts in a day, the doc says at most 7,200", n)
	}
	// "no boundary burst of 10 in two seconds, as a fixed window would
	// allow": 5 at the end of a minute and 5 just after, under a fixed
	// window of the same limit, and only the first 5 under the preset.
	fixed := login
	fixed.Algorithm = algorithms.FixedWindow
	for _, c := range []struct {
		spec algorithms.Spec
		want int
	}{{fixed, 10}, {login, 5}} {
		clock := &presetClock{t: time.Unix(0, 0).Add(59 * time.Second)} // windows are aligned to the epoch
		store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		l, _ := algorithms.NewLimiter(store, c.spec)
		n := 0
		for i := range 20 {
			if i == 10 {
				clock.t = clock.t.Add(2 * time.Second) // 61 s: the next minute
			}
			if d, _ := l.Allow(context.Background(), "k"); d.Allowed {
				n++
			}
		}
		store.Close()
		if n != c.want {
			t.Errorf("%s: %d admitted at 59 s and 61 s, want %d", c.spec.Algorithm, n, c.want)
		}
	}

	// Comments: "3 at once, then one every 10 seconds"; "a bot tops out
	// at 360 an hour once its first 3 are spent": 360 in its second hour,
	// and in its first the 3 and 359 more, the next one due at its end.
	if n := greedy(t, comments, t0, t0, t0.Add(time.Nanosecond)); n != policy.CommentsBurst {
		t.Errorf("comments: %d at once, want %d", n, policy.CommentsBurst)
	}
	if n := greedy(t, comments, t0, t0, t0.Add(10*time.Second+time.Nanosecond)); n != policy.CommentsBurst+1 {
		t.Errorf("comments: %d in the first 10 s (both ends), want %d", n, policy.CommentsBurst+1)
	}
	if n := greedy(t, comments, t0, t0.Add(time.Hour), t0.Add(2*time.Hour)); n != 360 {
		t.Errorf("comments: %d in the second hour, the doc says 360", n)
	}
	if n := greedy(t, comments, t0, t0, t0.Add(time.Hour)); n != policy.CommentsBurst+359 {
		t.Errorf("comments: %d in the first hour, want %d", n, policy.CommentsBurst+359)
	}

	// Register: 10 an hour, for a client starting with a window (the
	// counter's windows are aligned to the epoch; one starting mid-window
	// gets a few more in its first hour, as the weighted estimate lets
	// the previous window's count fade).
	h0 := t0.Truncate(time.Hour)
	if n := greedy(t, register, h0, h0, h0.Add(time.Hour)); n != policy.RegisterLimit {
		t.Errorf("register: %d in the first hour, want %d", n, policy.RegisterLimit)
	}
}
