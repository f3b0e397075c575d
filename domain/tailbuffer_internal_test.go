package domain

import "testing"

// TestTailBufferAllocatesAsBytesArrive: a TailBuffer that was never written
// to holds no ring, and one that got a few bytes holds a small one; the
// ring never grows past StderrTailMax.
func TestTailBufferAllocatesAsBytesArrive(t *testing.T) {
	tests := []struct {
		name    string
		writes  []int
		wantCap int
	}{
		{"never written", nil, 0},
		{"a short line", []int{40}, tailFirstAlloc},
		{"just over the first allocation", []int{tailFirstAlloc, 1}, 2 * tailFirstAlloc},
		{"a large write", []int{3000}, 4096},
		{"past the bound", []int{5000, 5000}, StderrTailMax},
		{"one huge write", []int{5 * StderrTailMax}, StderrTailMax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r TailBuffer
			for _, n := range tt.writes {
				_, _ = r.Write(make([]byte, n))
			}
			if got := cap(r.buf); got != tt.wantCap {
				t.Errorf("ring capacity %d, want %d", got, tt.wantCap)
			}
		})
	}
}
