package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/config"
	"github.com/acpdrive/acpdrive/domain"
)

// exitFindings is validate's exit status when an error finding was made.
const exitFindings = 1

// defaultWorkflow is the file validate checks when none is named.
const defaultWorkflow = "WORKFLOW.md"

var errValidateHelp = errors.New("help requested")

// validateCommand implements "acpdrive validate [WORKFLOW.md] [--json]".
//
// It loads the file with config.Load, the same function run --workflow
// and a reload use, and prints every finding: one line per finding,
// "<severity> <check>: <message>", nothing when there is none; or, with
// --json, one object {"findings":[{"severity","check","message"}],"ok"}.
// Exit status: 0 when no finding is an error (warnings allowed), 1 when
// one is, 2 for a usage error or a file that cannot be read at all
// (missing, a directory, no permission), reported on stderr. Anything
// wrong with a file that can be read, down to it being too large or not
// UTF-8, is a finding.
func validateCommand(args []string, stdout, stderr io.Writer) int {
	path, asJSON, err := parseValidateArgs(args)
	if errors.Is(err, errValidateHelp) {
		validateUsage(stdout)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive validate: %v\n", err)
		validateUsage(stderr)
		return exitUsage
	}
	cfg, findings, err := config.Load(path)
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive validate: %v\n", err)
		return exitUsage
	}
	findings = append(append(findings, outputSchemaFindings(cfg)...), urlFindings(cfg)...)
	if asJSON {
		if err := writeFindingsJSON(stdout, findings); err != nil {
			fmt.Fprintf(stderr, "acpdrive validate: %v\n", err)
			return exitUsage
		}
	} else {
		for _, f := range findings {
			fmt.Fprintf(stdout, "%s %s: %s\n", f.Severity, f.Check, f.Message)
		}
	}
	if domain.HasErrors(findings) {
		return exitFindings
	}
	return exitOK
}

// parseValidateArgs accepts the flags before or after the path.
func parseValidateArgs(args []string) (path string, asJSON bool, err error) {
	var paths []string
	flags := true
	for _, a := range args {
		switch {
		case flags && a == "--":
			flags = false
		case flags && (a == "--json" || a == "-json"):
			asJSON = true
		case flags && (a == "-h" || a == "-help" || a == "--help"):
			return "", false, errValidateHelp
		case flags && strings.HasPrefix(a, "-") && a != "-":
			return "", false, fmt.Errorf("unknown flag %s", a)
		default:
			paths = append(paths, a)
		}
	}
	switch len(paths) {
	case 0:
		return defaultWorkflow, asJSON, nil
	case 1:
		return paths[0], asJSON, nil
	}
	return "", false, fmt.Errorf("at most one WORKFLOW.md may be named, got %d", len(paths))
}

// findingJSON is one finding in --json output.
type findingJSON struct {
	Severity domain.Severity `json:"severity"`
	Check    string          `json:"check"`
	Message  string          `json:"message"`
}

func writeFindingsJSON(w io.Writer, findings []domain.Finding) error {
	out := struct {
		Findings []findingJSON `json:"findings"`
		OK       bool          `json:"ok"`
	}{Findings: make([]findingJSON, 0, len(findings)), OK: !domain.HasErrors(findings)}
	for _, f := range findings {
		out.Findings = append(out.Findings, findingJSON(f))
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

func validateUsage(w io.Writer) {
	fmt.Fprint(w, `usage: acpdrive validate [WORKFLOW.md] [--json]

Checks a WORKFLOW.md (default ./WORKFLOW.md) the way a run and a reload do,
and prints one line per finding: "<severity> <check>: <message>".

  --json   print {"findings":[{"severity","check","message"}],"ok":bool}

Exit status: 0 no error finding, 1 an error finding, 2 bad usage or a file
that cannot be read.
`)
}

// outputSchemaFindings checks agent.output_schema as Start does: the file
// is read and compiled (docs/behaviour.md#structured-results).
func outputSchemaFindings(cfg domain.Config) []domain.Finding {
	if cfg.OutputSchema == "" {
		return nil
	}
	s, err := withOutputSchema(domain.SessionSettings{}, cfg)
	if err == nil {
		if _, cerr := app.CompileOutputSchema(s.OutputSchema); cerr != nil {
			err = fmt.Errorf("%s: %w", app.MsgOutputSchema, cerr)
		}
	}
	if err == nil {
		return nil
	}
	return []domain.Finding{{Severity: domain.SeverityError, Check: domain.CheckOutputSchemaInvalid, Message: err.Error()}}
}
