package domain

import "sync"

// TailBuffer keeps the last StderrTailMax bytes written to it: the
// standard-error tail every transport keeps for the early exit report. The
// zero value is ready; it is safe for concurrent use.
type TailBuffer struct {
	mu    sync.Mutex
	buf   [StderrTailMax]byte
	next  int   // index the next byte goes to
	total int64 // bytes ever written
}

// Write appends p, discarding the oldest bytes beyond the ring's size. It
// never fails.
func (r *TailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total += int64(n)
	if len(p) > len(r.buf) {
		p = p[len(p)-len(r.buf):]
	}
	for len(p) > 0 {
		c := copy(r.buf[r.next:], p)
		p = p[c:]
		r.next = (r.next + c) % len(r.buf)
	}
	return n, nil
}

// Tail returns a copy of the kept bytes in write order and whether earlier
// bytes were discarded.
func (r *TailBuffer) Tail() ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.total <= int64(len(r.buf)) {
		out := make([]byte, r.total)
		copy(out, r.buf[:r.total])
		return out, false
	}
	out := make([]byte, 0, len(r.buf))
	out = append(out, r.buf[r.next:]...)
	out = append(out, r.buf[:r.next]...)
	return out, true
}
