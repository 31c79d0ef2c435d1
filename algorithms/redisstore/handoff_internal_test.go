package redisstore

import (
	"errors"
	"testing"
)

// TestLeaveReturnsAReplyThatCameFirst: a call whose reply reaches the
// channel after its caller's last look (ready) and before the caller
// marks itself gone (leave) has ended, so no late function will tell
// anyone about it: leave hands the reply to the caller, which returns it
// as it returns one ready at its context's end, rather than the context's
// error for a call Redis answered.
func TestLeaveReturnsAReplyThatCameFirst(t *testing.T) {
	ch := make(chan asyncResult, 1)
	h := new(handoff)
	errReply := errors.New("the call's own error")
	// The goroutine's whole end, before the caller leaves: its reply, then
	// passOn (no panic) and ended (no late function yet).
	ch <- asyncResult{v: "reply", err: errReply}
	h.passOn(ch)
	h.ended()
	lateRan := false
	r, ok := h.leave(ch, func() { lateRan = true })
	if !ok {
		t.Fatal("leave after the reply came = no reply; want the reply, which nothing else returns")
	}
	if r.v != "reply" || r.err != errReply {
		t.Errorf("leave = %v, %v; want the call's reply and error", r.v, r.err)
	}
	if lateRan {
		t.Error("leave ran the late function itself")
	}
}

// TestLeaveBeforeTheReply: a caller that leaves first gets nothing, and
// the late function runs when the call ends; the reply goes unread.
func TestLeaveBeforeTheReply(t *testing.T) {
	ch := make(chan asyncResult, 1)
	h := new(handoff)
	lateRan := false
	if r, ok := h.leave(ch, func() { lateRan = true }); ok {
		t.Fatalf("leave before any reply = %v, true; want none", r)
	}
	ch <- asyncResult{v: "reply"}
	h.passOn(ch)
	if lateRan {
		t.Fatal("the late function ran before the call ended")
	}
	h.ended()
	if !lateRan {
		t.Error("the call ended after its caller left, and its late function did not run")
	}
}

// TestLeaveRaisesAHandedOverPanic: a panic handed to the caller before it
// left is the caller's to raise, as with any reply leave returns.
func TestLeaveRaisesAHandedOverPanic(t *testing.T) {
	ch := make(chan asyncResult, 1)
	h := new(handoff)
	func() {
		defer h.passOn(ch)
		panic("hook")
	}()
	r, ok := h.leave(ch, nil)
	if !ok {
		t.Fatal("leave after a handed-over panic = no reply; want the panic")
	}
	defer func() {
		if p := recover(); p != "hook" {
			t.Errorf("raise = panic %v; want the call's panic %q", p, "hook")
		}
	}()
	r.raise()
	t.Error("raise returned; want the call's panic")
}
