package replay

import "testing"

// TestDelayedUncountedCounts replays a leaky_queue policy that counts only
// failed responses (count: failed), 1 per second, with up to 5 s of hold:
// four requests of one client at one instant, logged 500, 200, 200, 500.
// The three after the first each waited behind the failure before it (the
// middleware held them) and are reported delayed, although the two
// successes are given back at once: the report counts the Take's
// decisions, not the look at the key that the give-back leaves in their
// place, in which a success's own place is gone.
func TestDelayedUncountedCounts(t *testing.T) {
	config := "policies:\n  - {name: queue, limit: 1, window: 1s, algorithm: leaky_queue, max_delay: 5s, count: failed}\n"
	p := replayLogged(t, config, Options{}, "POST /comments", 0, 500, 200, 200, 500)
	if p.Requests != 4 || p.Rejected != 0 || p.Delayed != 3 {
		t.Errorf("requests %d rejected %d delayed %d, want 4, 0, 3", p.Requests, p.Rejected, p.Delayed)
	}
	// Counting every response, each waits behind all before it.
	p = replayLogged(t, "policies:\n  - {name: queue, limit: 1, window: 1s, algorithm: leaky_queue, max_delay: 5s}\n",
		Options{}, "POST /comments", 0, 500, 200, 200, 500)
	if p.Requests != 4 || p.Rejected != 0 || p.Delayed != 3 {
		t.Errorf("count: all: requests %d rejected %d delayed %d, want 4, 0, 3", p.Requests, p.Rejected, p.Delayed)
	}
}
