package localexec

import "testing"

func TestParseProcStat(t *testing.T) {
	tail := " 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0 987654 rest"
	tests := []struct {
		name string
		in   string
		want procStat
		ok   bool
	}{
		{"plain", "42 (sleep) S 7 42" + tail,
			procStat{pid: 42, comm: "sleep", state: 'S', ppid: 7, pgrp: 42, start: 987654}, true},
		{"comm with spaces and parentheses", "9 (a) (b c) Z 1 3" + tail,
			procStat{pid: 9, comm: "a) (b c", state: 'Z', ppid: 1, pgrp: 3, start: 987654}, true},
		{"empty comm", "5 () R 1 5" + tail, procStat{pid: 5, state: 'R', ppid: 1, pgrp: 5, start: 987654}, true},
		{"no comm", "42 sleep S 7 42" + tail, procStat{}, false},
		{"no pid", "(sleep) S 7 42" + tail, procStat{}, false},
		{"truncated", "42 (sleep) S 7 42 0 0", procStat{}, false},
		{"bad state", "42 (sleep) SS 7 42" + tail, procStat{}, false},
		{"bad start", "42 (sleep) S 7 42 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0 x", procStat{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseProcStat([]byte(tt.in))
			if ok != tt.ok || got != tt.want {
				t.Fatalf("parseProcStat = %+v, %t; want %+v, %t", got, ok, tt.want, tt.ok)
			}
		})
	}
}
