package domain

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// StderrTailMax is the most standard-error output, in bytes, an early exit
// report quotes: the last 8 KiB.
const StderrTailMax = 8 << 10

// Early exit report texts.
const (
	// MsgEarlyExitPrefix starts every early exit report; the exit status
	// follows.
	MsgEarlyExitPrefix = "the agent runtime exited before responding: "
	// MsgEarlierOutputOmitted prefixes the quoted standard error when it
	// was cut to its tail.
	MsgEarlierOutputOmitted = "[earlier output omitted] "
	// MsgNoStderr stands in for standard-error output that is empty once
	// cleaned.
	MsgNoStderr = "no standard-error output"
)

// unknownExitStatus stands in for a blank status.
const unknownExitStatus = "unknown exit status"

// EarlyExitReport renders the message of a runtime that exited before
// answering a start-up call:
//
//	the agent runtime exited before responding: <status>: <stderr>
//
// status is "exit status N" or "signal: <name>" ("unknown exit status" when
// blank). stderr is the cleaned tail: invalid UTF-8 replaced with U+FFFD,
// ANSI escape sequences (CSI, OSC and the other string sequences, two-byte
// escapes) and every other control character removed, blank lines dropped,
// the remaining lines trimmed and joined with " | ". When truncated is true
// (or the tail is longer than StderrTailMax, in which case only its last
// StderrTailMax bytes are used) the text is prefixed
// "[earlier output omitted] " and a partial UTF-8 sequence at its start is
// dropped. Nothing left reads "no standard-error output".
func EarlyExitReport(status string, stderrTail []byte, truncated bool) string {
	if len(stderrTail) > StderrTailMax {
		stderrTail = stderrTail[len(stderrTail)-StderrTailMax:]
		truncated = true
	}
	if truncated {
		stderrTail = dropLeadingContinuation(stderrTail)
	}

	st := strings.Join(cleanLines(status), " ")
	if st == "" {
		st = unknownExitStatus
	}
	body := strings.Join(cleanLines(string(stderrTail)), " | ")
	if body == "" {
		body = MsgNoStderr
	}
	if truncated {
		body = MsgEarlierOutputOmitted + body
	}
	return MsgEarlyExitPrefix + st + ": " + body
}

// dropLeadingContinuation removes the UTF-8 continuation bytes (at most
// three) that a cut through a multi-byte character leaves at the start.
func dropLeadingContinuation(b []byte) []byte {
	for i := 0; i < utf8.UTFMax-1 && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
		b = b[1:]
	}
	return b
}

// escape parser states.
const (
	stText     = iota
	stEsc      // after ESC
	stEscInter // ESC followed by intermediate bytes
	stCSI      // control sequence: parameters, intermediates, final
	stString   // OSC, DCS, SOS, PM, APC: up to BEL or ST
	stStrEsc   // ESC inside a string, maybe the start of ST
)

// cleanLines removes escape sequences and control characters from s and
// returns its non-blank lines, trimmed. Newline, carriage return and the
// Unicode line and paragraph separators break lines; a tab becomes a space.
func cleanLines(s string) []string {
	s = strings.ToValidUTF8(s, string(utf8.RuneError))
	var (
		lines []string
		line  strings.Builder
		state = stText
	)
	breakLine := func() {
		if t := strings.TrimSpace(line.String()); t != "" {
			lines = append(lines, t)
		}
		line.Reset()
	}
	for _, r := range s {
	again:
		switch state {
		case stEsc:
			switch {
			case r == '[':
				state = stCSI
			case r == ']' || r == 'P' || r == 'X' || r == '^' || r == '_':
				state = stString
			case r == 0x1b:
				// stay: a new escape starts
			case r >= 0x20 && r <= 0x2f:
				state = stEscInter
			case r >= 0x30 && r <= 0x7e:
				state = stText
			default:
				state = stText
				goto again
			}
			continue
		case stEscInter, stCSI:
			// Continuation bytes from 0x20 up to last (an escape's
			// intermediates; a control sequence's parameters and
			// intermediates), then a final byte up to 0x7e; anything else
			// ends the sequence and is read again as text.
			last := rune(0x2f)
			if state == stCSI {
				last = 0x3f
			}
			switch {
			case r >= 0x20 && r <= last:
			case r > last && r <= 0x7e:
				state = stText
			default:
				state = stText
				goto again
			}
			continue
		case stString:
			switch r {
			case 0x07, 0x9c:
				state = stText
			case 0x1b:
				state = stStrEsc
			case '\n':
				// An unterminated string ends at the line so that one stray
				// introducer cannot swallow the rest of the output.
				state = stText
				breakLine()
			}
			continue
		case stStrEsc:
			if r == '\\' {
				state = stText
				continue
			}
			state = stEsc
			goto again
		}

		// stText
		switch {
		case r == 0x1b:
			state = stEsc
		case r == 0x9b:
			state = stCSI
		case r == 0x90 || r == 0x98 || r == 0x9d || r == 0x9e || r == 0x9f:
			state = stString
		case r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029':
			breakLine()
		case r == '\t':
			line.WriteByte(' ')
		case unicode.IsControl(r) || isInvisibleFormat(r):
			// dropped
		default:
			line.WriteRune(r)
		}
	}
	breakLine()
	return lines
}

// isInvisibleFormat reports the format characters that could reorder or
// hide report text: bidirectional controls and the byte-order mark.
func isInvisibleFormat(r rune) bool {
	switch {
	case r == '\u200e' || r == '\u200f' || r == '\u061c' || r == '\ufeff':
		return true
	case r >= '\u202a' && r <= '\u202e':
		return true
	case r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}
