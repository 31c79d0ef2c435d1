package client

// links are an element's place in a queue: the elements ahead of it and
// behind it, nil at the ends.
type links[T any] struct{ prev, next *T }

// linked is the pointer type of a queue's elements, which hold their
// links.
type linked[T any] interface {
	*T
	place() *links[T]
}

// A queue is a doubly linked list of elements, in order, linked through
// their own links: an element joins and leaves it in constant time
// wherever it stands (a request whose context ended, ahead of thousands).
// Its zero value is empty. The gate's tickets, a cut's probe waiters and a
// line's turns wait in queues.
type queue[T any, P linked[T]] struct{ head, tail *T }

// pushBack puts x last.
func (q *queue[T, P]) pushBack(x *T) { q.insertAfter(x, q.tail) }

// insertAfter puts x after y, or first when y is nil.
func (q *queue[T, P]) insertAfter(x, y *T) {
	lx := P(x).place()
	lx.prev = y
	if y != nil {
		ly := P(y).place()
		lx.next, ly.next = ly.next, x
	} else {
		lx.next, q.head = q.head, x
	}
	if lx.next != nil {
		P(lx.next).place().prev = x
	} else {
		q.tail = x
	}
}

// remove takes x, one of q's elements, out of q.
func (q *queue[T, P]) remove(x *T) {
	lx := P(x).place()
	if lx.prev != nil {
		P(lx.prev).place().next = lx.next
	} else {
		q.head = lx.next
	}
	if lx.next != nil {
		P(lx.next).place().prev = lx.prev
	} else {
		q.tail = lx.prev
	}
	lx.prev, lx.next = nil, nil
}
