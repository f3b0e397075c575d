package domain_test

import (
	"bytes"
	"testing"

	"github.com/acpdrive/acpdrive/domain"
)

func TestTailBuffer(t *testing.T) {
	tests := []struct {
		name   string
		writes []int // sizes of successive writes
	}{
		{"nothing", nil},
		{"small", []int{10}},
		{"exactly full", []int{domain.StderrTailMax}},
		{"full in pieces", []int{4096, 4096}},
		{"one over", []int{domain.StderrTailMax, 1}},
		{"wraps several times", []int{3000, 3000, 3000, 3000, 3000, 7}},
		{"one huge write", []int{3 * domain.StderrTailMax}},
		{"huge after small", []int{5, domain.StderrTailMax + 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r domain.TailBuffer
			var all []byte
			b := byte(0)
			for _, n := range tt.writes {
				chunk := make([]byte, n)
				for i := range chunk {
					chunk[i] = 'a' + b%26
					b++
				}
				all = append(all, chunk...)
				if got, err := r.Write(chunk); got != n || err != nil {
					t.Fatalf("Write(%d bytes) = %d, %v", n, got, err)
				}
			}
			want := all
			if len(want) > domain.StderrTailMax {
				want = want[len(want)-domain.StderrTailMax:]
			}
			got, truncated := r.Tail()
			if !bytes.Equal(got, want) {
				t.Fatalf("Tail() = %d bytes, not the last %d written", len(got), len(want))
			}
			if wantCut := len(all) > domain.StderrTailMax; truncated != wantCut {
				t.Fatalf("truncated = %v, want %v", truncated, wantCut)
			}
		})
	}
}
