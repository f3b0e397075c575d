package domain_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

func ExampleDisposition() {
	for _, tc := range []struct {
		stopReason string
		override   domain.Override
	}{
		{domain.StopEndTurn, domain.OverrideNone},
		{domain.StopMaxTurnRequests, domain.OverrideNone},
		{"paused", domain.OverrideNone},
		{domain.StopEndTurn, domain.OverrideCancel},
	} {
		r := domain.Disposition(tc.stopReason, tc.override, "")
		if r.Err == nil {
			fmt.Println(r.Outcome.Event())
			continue
		}
		fmt.Println(r.Outcome.Event(), r.Err.Kind, r.Err.Kind.Retryable(), r.Message())
	}

	err := fmt.Errorf("issue 7: %w", domain.FailedResult(
		domain.NewError(domain.KindPortExit, domain.MsgConnEndedBeforeResult)).Err)
	fmt.Println(errors.Is(err, domain.KindPortExit), err)
	// Output:
	// turn_completed
	// turn_failed turn_request_limit true agent reached its request limit for the turn (stopReason max_turn_requests)
	// turn_failed turn_outcome_unknown false agent reported an unrecognized stop reason: "paused"
	// turn_cancelled turn_cancelled false turn cancelled
	// true issue 7: agent: port_exit: the agent's connection ended before a response arrived
}

func ExampleAccumulator() {
	var acc domain.Accumulator
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

	acc.Add("m1", "Reading ", t0)
	acc.Add("m1", "the file.", t0.Add(time.Second))
	if done, ok := acc.Add("m2", "Done.", t0.Add(5*time.Second)); ok {
		fmt.Printf("%s %q %s\n", done.ID, done.Text, done.At.Format(time.TimeOnly))
	}
	if done, ok := acc.Flush(); ok {
		fmt.Printf("%s %q %s\n", done.ID, done.Text, done.At.Format(time.TimeOnly))
	}
	last, _ := acc.Last()
	fmt.Println(last.Text)
	// Output:
	// m1 "Reading the file." 12:00:01
	// m2 "Done." 12:00:05
	// Done.
}

func ExampleEarlyExitReport() {
	stderr := []byte("\x1b[31mError:\x1b[0m missing API key\n\nset GEMINI_API_KEY\n")
	fmt.Println(domain.EarlyExitReport("exit status 41", stderr, false))
	// Output:
	// the agent runtime exited before responding: exit status 41: Error: missing API key | set GEMINI_API_KEY
}

func ExampleCapabilities_Notice() {
	caps := domain.NewCapabilities(false, false)
	caps.Lower(domain.CapSessionContinuation)
	if notice, ok := caps.Notice(); ok {
		fmt.Println(notice)
	}
	// Output:
	// this session started with a declared capability gap in: token counts, session continuation
}

func ExampleSplitCommandLine() {
	words, err := domain.SplitCommandLine(`gemini --experimental-acp --model "gemini 2.5" 'a$b'`)
	fmt.Printf("%q %v\n", words, err)
	// Output:
	// ["gemini" "--experimental-acp" "--model" "gemini 2.5" "a$b"] <nil>
}
