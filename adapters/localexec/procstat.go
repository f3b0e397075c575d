package localexec

import (
	"bytes"
	"strconv"
)

// procStat is what this package reads from a Linux /proc/<pid>/stat.
type procStat struct {
	pid   int
	comm  string
	state byte
	ppid  int
	pgrp  int
	// start is the process's start time in clock ticks since boot; with
	// the PID it names one process for good, since a PID is reused only
	// by a process started later.
	start uint64
}

// gone reports whether the process has exited (a zombie, or one being
// torn down): it can no longer run or be killed, only reaped.
func (s procStat) gone() bool { return s.state == 'Z' || s.state == 'X' }

// parseProcStat parses "pid (comm) state ppid pgrp session tty tpgid flags
// minflt cminflt majflt cmajflt utime stime cutime cstime priority nice
// num_threads itrealvalue starttime ...". comm may itself hold spaces and
// parentheses, so it runs from the first '(' to the last ')'.
func parseProcStat(data []byte) (procStat, bool) {
	open := bytes.IndexByte(data, '(')
	closing := bytes.LastIndexByte(data, ')')
	if open < 1 || closing < open {
		return procStat{}, false
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(data[:open])))
	if err != nil {
		return procStat{}, false
	}
	// Fields after comm, numbered from 0: state is 0, ppid 1, pgrp 2 and
	// starttime 19 (field 22 of proc(5)).
	const startField = 19
	fields := bytes.Fields(data[closing+1:])
	if len(fields) <= startField || len(fields[0]) != 1 {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(string(fields[1]))
	pgrp, err2 := strconv.Atoi(string(fields[2]))
	start, err3 := strconv.ParseUint(string(fields[startField]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procStat{}, false
	}
	return procStat{
		pid:   pid,
		comm:  string(data[open+1 : closing]),
		state: fields[0][0],
		ppid:  ppid,
		pgrp:  pgrp,
		start: start,
	}, true
}
