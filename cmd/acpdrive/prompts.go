package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// readDashPrompt replaces a lone "-" among the prompts with standard
// input, read whole, as -f - reads it (docs/behaviour.md#cli): standard
// input is read once, so a second "-", -f - or --steer-stdin beside it is
// a usage error, and so is an empty prompt.
func readDashPrompt(prompts []string, f runFlags, stdin io.Reader) ([]string, error) {
	at := -1
	for i, p := range prompts {
		if p != "-" {
			continue
		}
		if at >= 0 || slices.Contains(f.promptFiles, "-") {
			return nil, errors.New("-: standard input can be read once")
		}
		at = i
	}
	if at < 0 {
		return prompts, nil
	}
	if f.steerStdin {
		return nil, errors.New("--steer-stdin and - both read standard input")
	}
	b, err := io.ReadAll(stdin)
	if err != nil {
		return nil, fmt.Errorf("-: %w", err)
	}
	if strings.TrimSpace(string(b)) == "" {
		return nil, errors.New("-: the prompt read from standard input is empty")
	}
	prompts[at] = string(b)
	return prompts, nil
}

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
