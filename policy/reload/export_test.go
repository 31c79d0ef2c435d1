package reload

// Clock and Timer let the tests drive a Watcher's debounce and grace on a
// fake clock.
type (
	Clock = clock
	Timer = timer
)

// WithClock makes the Watcher read the time from c and make its timer
// with it.
func WithClock(c Clock) Option {
	return func(w *Watcher) error {
		w.clock = c
		return nil
	}
}

// AfterTimer makes the Watcher's goroutine call f after each reload its
// timer started (whether or not it changed anything).
func AfterTimer(f func()) Option {
	return func(w *Watcher) error {
		w.tick = f
		return nil
	}
}
