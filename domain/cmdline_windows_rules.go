package domain

import "fmt"

// SplitWindowsCommandLine splits a command line into words by the Windows
// command-line convention (the rules of CommandLineToArgvW and of the
// Microsoft C runtime), without running a shell and without expansion:
//
//   - unquoted spaces and tabs separate words (line breaks too, which a
//     Windows command line cannot hold);
//   - a double quote starts or ends a quoted part, in which blanks are
//     kept; inside a quoted part, two double quotes in a row stand for one
//     literal double quote;
//   - a run of backslashes is literal unless a double quote follows it:
//     then each pair of backslashes stands for one backslash, and an odd
//     one left over makes the double quote literal;
//   - the first word, the program, follows simpler rules: backslashes are
//     always literal and a double quote only starts or ends a quoted part;
//   - single quotes, ^, %, & and | have no meaning and stay as written;
//   - quoted parts join with adjacent text into one word, and "" alone
//     makes an empty word.
//
// So C:\tools\agent.exe --acp is two words with the backslashes kept, and
// "C:\Program Files\agent\agent.exe" is one. An empty or blank line
// yields nil, nil. A double quote left open at the end yields an error
// matching ErrUnterminatedQuote (the C runtime would close it silently;
// configuration is checked more strictly).
func SplitWindowsCommandLine(s string) ([]string, error) {
	var (
		words   []string
		word    []byte
		inWord  bool
		quoted  bool
		quoteAt int
	)
	i := 0
	// The program: quotes toggle, nothing escapes.
	for i < len(s) && isWindowsBlank(s[i]) {
		i++
	}
	for ; i < len(s); i++ {
		c := s[i]
		if c == '"' {
			quoted = !quoted
			quoteAt = i
			inWord = true
			continue
		}
		if !quoted && isWindowsBlank(c) {
			break
		}
		word, inWord = append(word, c), true
	}
	if quoted {
		return nil, fmt.Errorf("split command line: %w (double quote at byte %d)", ErrUnterminatedQuote, quoteAt)
	}
	if inWord {
		words = append(words, string(word))
	}
	word, inWord = nil, false

	// The arguments.
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case !quoted && isWindowsBlank(c):
			if inWord {
				words = append(words, string(word))
				word, inWord = word[:0], false
			}
		case c == '\\':
			n := 0
			for i < len(s) && s[i] == '\\' {
				n++
				i++
			}
			inWord = true
			if i < len(s) && s[i] == '"' {
				for k := 0; k < n/2; k++ {
					word = append(word, '\\')
				}
				if n%2 == 1 {
					word = append(word, '"')
					continue
				}
			} else {
				for k := 0; k < n; k++ {
					word = append(word, '\\')
				}
			}
			i-- // the loop steps onto the byte after the run again
		case c == '"':
			inWord = true
			if quoted && i+1 < len(s) && s[i+1] == '"' {
				word = append(word, '"')
				i++
				continue
			}
			quoted = !quoted
			quoteAt = i
		default:
			word, inWord = append(word, c), true
		}
	}
	if quoted {
		return nil, fmt.Errorf("split command line: %w (double quote at byte %d)", ErrUnterminatedQuote, quoteAt)
	}
	if inWord {
		words = append(words, string(word))
	}
	return words, nil
}

func isWindowsBlank(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r':
		return true
	}
	return false
}
