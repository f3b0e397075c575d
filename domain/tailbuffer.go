package domain

import "sync"

// tailFirstAlloc is the first allocation of a TailBuffer's ring; it
// doubles from there up to StderrTailMax.
const tailFirstAlloc = 256

// TailBuffer keeps the last StderrTailMax bytes written to it: the
// standard-error tail every transport keeps for the early exit report. The
// zero value is ready and holds no buffer: the ring is allocated as bytes
// arrive, doubling up to StderrTailMax, so a runtime that writes nothing
// to standard error costs nothing here. It is safe for concurrent use.
type TailBuffer struct {
	mu    sync.Mutex
	buf   []byte // the kept bytes; a ring once it holds StderrTailMax
	next  int    // once full, the index the next byte goes to
	total int64  // bytes ever written
}

// Write appends p, discarding the oldest bytes beyond StderrTailMax. It
// never fails.
func (r *TailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total += int64(n)
	if len(p) > StderrTailMax {
		p = p[len(p)-StderrTailMax:]
	}
	if len(r.buf) < StderrTailMax {
		// Still filling: append, growing the allocation by doubling but
		// never past StderrTailMax.
		take := min(len(p), StderrTailMax-len(r.buf))
		if need := len(r.buf) + take; need > cap(r.buf) {
			size := max(tailFirstAlloc, 2*cap(r.buf))
			for size < need {
				size *= 2
			}
			grown := make([]byte, len(r.buf), min(size, StderrTailMax))
			copy(grown, r.buf)
			r.buf = grown
		}
		r.buf = append(r.buf, p[:take]...)
		p = p[take:]
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
	out := make([]byte, 0, len(r.buf))
	out = append(out, r.buf[r.next:]...)
	out = append(out, r.buf[:r.next]...)
	return out, r.total > int64(len(r.buf))
}
