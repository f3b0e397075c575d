package inproc

import "sync"

// tailSize is how many trailing bytes of standard error are kept.
const tailSize = 8 << 10

// tailRing keeps the last tailSize bytes written to it. It is safe for
// concurrent use.
type tailRing struct {
	mu   sync.Mutex
	kept []byte
	cut  bool
}

// Write keeps the newest bytes of b, dropping the oldest beyond tailSize.
// It never fails.
func (r *tailRing) Write(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(b) >= tailSize {
		r.cut = r.cut || len(b) > tailSize || len(r.kept) > 0
		r.kept = append(r.kept[:0], b[len(b)-tailSize:]...)
		return len(b), nil
	}
	if over := len(r.kept) + len(b) - tailSize; over > 0 {
		r.kept = append(r.kept[:0], r.kept[over:]...)
		r.cut = true
	}
	r.kept = append(r.kept, b...)
	return len(b), nil
}

// Tail returns a copy of the kept bytes and whether earlier ones were
// dropped.
func (r *tailRing) Tail() ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]byte(nil), r.kept...), r.cut
}
