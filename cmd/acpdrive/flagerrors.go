package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"time"
)

// parseFlags parses args into fs without the flag package's own output: a
// bad flag is one line naming the flag, what it takes and where the flags
// are listed (docs/behaviour.md#cli); -h or --help prints help to stdout
// and returns flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string, command string, stdout io.Writer, help func(io.Writer)) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		help(stdout)
		return err
	}
	if err != nil {
		return flagError(fs, err, command)
	}
	return nil
}

var (
	reInvalidValue = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-(\S+): (.*)$`)
	reUndefined    = regexp.MustCompile(`^flag provided but not defined: -(\S+)$`)
	reNoArgument   = regexp.MustCompile(`^flag needs an argument: -(\S+)$`)
)

// flagError rewrites the flag package's error as one line for a person.
func flagError(fs *flag.FlagSet, err error, command string) error {
	see := "(acpdrive " + command + " --help lists the flags)"
	msg := err.Error()
	if m := reInvalidValue.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("--%s %q: want %s %s", m[2], m[1], wants(fs.Lookup(m[2]), m[3]), see)
	}
	if m := reUndefined.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("unknown flag --%s %s", m[1], see)
	}
	if m := reNoArgument.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("--%s needs a value: %s %s", m[1], wants(fs.Lookup(m[1]), ""), see)
	}
	return fmt.Errorf("%s %s", msg, see)
}

// wants says what a flag takes; cause is the parser's complaint, kept for
// a flag whose values are its own.
func wants(fl *flag.Flag, cause string) string {
	if fl != nil {
		if g, ok := fl.Value.(flag.Getter); ok {
			switch g.Get().(type) {
			case time.Duration:
				return "a duration like 5s, 1m30s or 0"
			case int, int64, uint, uint64:
				return "a whole number like 1000"
			case float64:
				return "a number like 0.5"
			case bool:
				return "true or false"
			}
		}
	}
	cause = strings.TrimPrefix(cause, "want ")
	if cause == "" {
		return "a value"
	}
	return cause
}

// check refuses what a flag's type lets through but its meaning does not:
// a negative bound or ceiling, an unknown log level
// (docs/behaviour.md#cli).
func (f *runFlags) check(command string) error {
	see := "(acpdrive " + command + " --help lists the flags)"
	durations := []struct {
		name  string
		value time.Duration
		zero  string
	}{
		{"read-timeout", f.readTimeout, "0 means 30s"},
		{"init-timeout", f.initTimeout, "0 keeps the default"},
		{"turn-timeout", f.turnTimeout, "0 disables it"},
		{"stall-timeout", f.stallTimeout, "0 disables it"},
		{"confirm-tool-servers-timeout", f.confirmToolServersTimeout, "0 means 15s"},
	}
	for _, d := range durations {
		if d.value < 0 {
			return fmt.Errorf("--%s %s: want a duration of 0 or more (%s) %s", d.name, d.value, d.zero, see)
		}
	}
	if f.stopGrace <= 0 {
		return fmt.Errorf("--stop-grace %s: want a positive duration like 5s %s", f.stopGrace, see)
	}
	if f.maxTokens < 0 {
		return fmt.Errorf("--max-tokens %d: want a whole number of 0 or more (0: no ceiling) %s", f.maxTokens, see)
	}
	if f.budgets.maxCost < 0 {
		return fmt.Errorf("--max-cost %g: want an amount of 0 or more (0: no ceiling) %s", f.budgets.maxCost, see)
	}
	if c := f.budgets.maxContextFraction; c < 0 || c > 1 {
		return fmt.Errorf("--max-context-fraction %g: want a fraction from 0 to 1 (0: no ceiling) %s", c, see)
	}
	if f.logLevel != "" {
		var level slog.Level
		if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
			return fmt.Errorf("--log-level %q: want debug, info, warn or error %s", f.logLevel, see)
		}
	}
	return nil
}

// printDefaults lists fs's flags on w.
func printDefaults(fs *flag.FlagSet, w io.Writer) {
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}
