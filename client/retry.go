package client

import (
	"bytes"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"
)

// replayable reports whether req may be sent again: its method is
// idempotent (or opted in, or it carries an idempotency key), and its body
// can be had again.
func (t *Transport) replayable(req *http.Request) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	if t.methods[req.Method] {
		return true
	}
	return hasIdempotencyKey(req.Header)
}

// hasIdempotencyKey reports whether h holds an Idempotency-Key or
// X-Idempotency-Key entry, even one with no value (net/http's convention
// for a request idempotent without the header on the wire), under its
// canonical name or any other spelling: net/http sends a name set through
// the map as it is written, and the server reads names case-insensitively.
func hasIdempotencyKey(h http.Header) bool {
	if _, ok := h["Idempotency-Key"]; ok {
		return true
	}
	if _, ok := h["X-Idempotency-Key"]; ok {
		return true
	}
	for k := range h {
		if strings.EqualFold(k, "Idempotency-Key") || strings.EqualFold(k, "X-Idempotency-Key") {
			return true
		}
	}
	return false
}

// rewind returns a copy of req for another attempt, with a fresh body.
func rewind(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, fmt.Errorf("client: replaying the request body: %w", err)
		}
		r.Body = body
	}
	return r, nil
}

// backoff returns the wait before retry number attempt: uniform in
// [0, min(ceiling, base·2^(attempt−1))].
func (t *Transport) backoff(attempt int) time.Duration {
	c := t.ceiling
	// base<<shift is within the ceiling, and so does not overflow, when
	// base <= ceiling>>shift; past 63 bits the shift leaves 0, below base.
	if shift := attempt - 1; t.base <= t.ceiling>>shift {
		c = t.base << shift
	}
	return time.Duration(t.uniform(uint64(c) + 1))
}

// uniform returns a number in [0, n) for n >= 1, from the high half of a
// 64×64-bit product (Lemire's method without the rejection step: the bias,
// below n/2^64, does not matter for a jitter and no source can make it loop).
func (t *Transport) uniform(n uint64) uint64 {
	var x uint64
	if t.src == nil {
		x = rand.Uint64()
	} else {
		t.randMu.Lock()
		x = t.src.Uint64()
		t.randMu.Unlock()
	}
	hi, _ := bits.Mul64(x, n)
	return hi
}

// drainLimit bounds what drain reads from a body so that the connection can
// be reused; a longer body is closed unread.
const drainLimit = 64 << 10

// drainTimeout bounds, in real time (reading a body is I/O, not a wait of
// the Clock's), how long keep and drain read a refusal's body: a server
// that sends its headers and then stalls would otherwise hold RoundTrip
// for as long as it likes, whatever the retry and wait bounds. The body is
// then closed, which ends the read (a net/http body ends a read blocked on
// its connection when closed), and its connection is not reused.
const drainTimeout = time.Second

// keep reads what is left of resp's body (up to drainLimit, within
// drainTimeout) and closes it, so that the connection can be reused, and
// returns resp with a body that replays what was read: a retry that gives
// up before it is sent returns it. A longer body, or one not read in full
// in time, is closed unread past that point, and keep returns nil.
func keep(resp *http.Response) *http.Response {
	if resp.Body == nil || resp.Body == http.NoBody {
		return resp
	}
	var buf bytes.Buffer
	err := readBounded(resp.Body, func(body io.Reader) error {
		_, err := buf.ReadFrom(io.LimitReader(body, drainLimit+1))
		return err
	})
	if err != nil || buf.Len() > drainLimit {
		return nil
	}
	resp.Body = io.NopCloser(bytes.NewReader(buf.Bytes()))
	return resp
}

// drain reads what is left of body (up to drainLimit, within drainTimeout)
// and closes it.
func drain(body io.ReadCloser) {
	if body == nil {
		return
	}
	_ = readBounded(body, func(body io.Reader) error {
		_, err := io.Copy(io.Discard, io.LimitReader(body, drainLimit))
		return err
	})
}

// readBounded has read read body and then closes it, or closes it once
// drainTimeout has passed, ending a read that stalls; the body is closed
// once either way.
func readBounded(body io.ReadCloser, read func(io.Reader) error) error {
	var once sync.Once
	closeOnce := func() { once.Do(func() { _ = body.Close() }) }
	timer := time.AfterFunc(drainTimeout, closeOnce)
	err := read(body)
	timer.Stop()
	closeOnce()
	return err
}

func closeBody(r *http.Request) {
	if r.Body != nil {
		_ = r.Body.Close()
	}
}
