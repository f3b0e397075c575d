package domain

import (
	"errors"
	"fmt"
)

// Errors SplitCommandLine returns, wrapped with the byte offset where the
// problem starts; match them with errors.Is.
var (
	// ErrUnterminatedQuote: a single or double quote is never closed.
	ErrUnterminatedQuote = errors.New("unterminated quote")
	// ErrTrailingBackslash: the command line ends in an unescaped backslash.
	ErrTrailingBackslash = errors.New("trailing backslash")
)

// SplitCommandLine splits a command line into words the way a POSIX shell
// would, without running one and without any expansion:
//
//   - unquoted blanks (space, tab, newline, carriage return, vertical tab,
//     form feed) separate words;
//   - single quotes keep everything up to the next single quote literally;
//   - inside double quotes a backslash escapes only ", \, $ and ` (and
//     removes a following newline); any other backslash is kept;
//   - outside quotes a backslash keeps the next byte literally, and a
//     backslash-newline pair is removed;
//   - quotes join with adjacent text into one word, and a pair of quotes
//     with nothing between them makes an empty word.
//
// Variables, globs, redirections and operators such as | ; & are not
// interpreted: they stay in the words as written. An empty or blank line
// yields nil, nil. An unterminated quote or a trailing backslash yields an
// error matching ErrUnterminatedQuote or ErrTrailingBackslash.
func SplitCommandLine(s string) ([]string, error) {
	var (
		words  []string
		word   []byte
		inWord bool
	)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case isBlank(ch):
			if inWord {
				words = append(words, string(word))
				word, inWord = word[:0], false
			}
		case ch == '\\':
			if i+1 >= len(s) {
				return nil, fmt.Errorf("split command line: %w at byte %d", ErrTrailingBackslash, i)
			}
			i++
			if s[i] == '\n' {
				continue
			}
			word, inWord = append(word, s[i]), true
		case ch == '\'':
			end := indexByteFrom(s, i+1, '\'')
			if end < 0 {
				return nil, fmt.Errorf("split command line: %w (single quote at byte %d)", ErrUnterminatedQuote, i)
			}
			word, inWord = append(word, s[i+1:end]...), true
			i = end
		case ch == '"':
			start := i
			inWord = true
			closed := false
			for i++; i < len(s); i++ {
				c := s[i]
				if c == '"' {
					closed = true
					break
				}
				if c == '\\' && i+1 < len(s) {
					switch n := s[i+1]; n {
					case '"', '\\', '$', '`':
						word = append(word, n)
						i++
						continue
					case '\n':
						i++
						continue
					}
				}
				word = append(word, c)
			}
			if !closed {
				return nil, fmt.Errorf("split command line: %w (double quote at byte %d)", ErrUnterminatedQuote, start)
			}
		default:
			word, inWord = append(word, ch), true
		}
	}
	if inWord {
		words = append(words, string(word))
	}
	return words, nil
}

func isBlank(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return false
}

func indexByteFrom(s string, from int, c byte) int {
	for i := from; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}
