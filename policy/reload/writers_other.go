//go:build !linux

package reload

// writeWatch would tell whether the file's writer has closed it; only
// Linux tells the Watcher so (inotify's IN_CLOSE_WRITE), and elsewhere a
// file is read as it is once its events stop for the debounce.
type writeWatch struct{}

func newWriteWatch() (*writeWatch, error) { return nil, nil }

func (*writeWatch) follow(string)            {}
func (*writeWatch) writing() bool            { return false }
func (*writeWatch) closed() <-chan struct{}  { return nil }
func (*writeWatch) written() <-chan struct{} { return nil }
func (*writeWatch) close()                   {}
