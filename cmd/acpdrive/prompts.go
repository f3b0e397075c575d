package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// readPromptFiles reads the prompts -f names, one prompt per file, in the
// order given; "-" is standard input, which can be read once
// (docs/behaviour.md#cli). An empty prompt is refused.
func readPromptFiles(paths []string, stdin io.Reader) ([]string, error) {
	var prompts []string
	stdinRead := false
	for _, p := range paths {
		var b []byte
		var err error
		switch {
		case p == "-" && stdinRead:
			return nil, errors.New("-f -: standard input can be read once")
		case p == "-":
			stdinRead = true
			b, err = io.ReadAll(stdin)
		default:
			b, err = os.ReadFile(p)
		}
		if err != nil {
			return nil, fmt.Errorf("-f %s: %w", p, err)
		}
		if strings.TrimSpace(string(b)) == "" {
			return nil, fmt.Errorf("-f %s: the prompt is empty", p)
		}
		prompts = append(prompts, string(b))
	}
	return prompts, nil
}
