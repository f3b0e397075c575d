// Package config loads a WORKFLOW.md: it splits off the YAML front matter,
// reads the agent, agent-client-protocol, worker and token_rates blocks
// into a domain.Config with the defaults of docs/behaviour.md#configuration, and
// returns the findings of the checks of docs/behaviour.md#validation together with the loader's own
// (bad YAML, wrong types, unknown keys), each with the key path.
//
// Load is the one function that turns a WORKFLOW.md into a verdict: the
// validate command, the run command's --workflow, and any reload call it,
// so a file gets the same findings with byte-identical messages wherever
// it is checked. Load ends by calling domain.Config.Validate, which a
// session build repeats on the same Config with the same result.
//
// The package reads files, so it is not part of the domain; it implements
// no port, so it is not an adapter.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"

	"github.com/acpdrive/acpdrive/domain"
)

// Bounds on a WORKFLOW.md.
const (
	// MaxFileBytes is the largest WORKFLOW.md read, 16 MiB.
	MaxFileBytes = 16 << 20
	// MaxFrontMatterBytes is the largest front matter parsed, 1 MiB.
	MaxFrontMatterBytes = 1 << 20
)

// Check names of the loader's own findings, all of severity error except
// CheckUnknownKey (a warning). The checks of docs/behaviour.md#validation are
// domain.Config.Validate's, named by the domain.Check constants.
const (
	// CheckFileTooLarge: the file is larger than MaxFileBytes.
	CheckFileTooLarge = "workflow.too_large"
	// CheckFrontMatterUnterminated: the file opens a front matter with a
	// "---" line and never closes it.
	CheckFrontMatterUnterminated = "workflow.front_matter.unterminated"
	// CheckFrontMatterTooLarge: the front matter is larger than
	// MaxFrontMatterBytes.
	CheckFrontMatterTooLarge = "workflow.front_matter.too_large"
	// CheckFrontMatterNotUTF8: the front matter is not valid UTF-8.
	CheckFrontMatterNotUTF8 = "workflow.front_matter.not_utf8"
	// CheckYAMLInvalid: the front matter is not valid YAML.
	CheckYAMLInvalid = "workflow.yaml.invalid"
	// CheckWrongType: a key this kind reads holds a value of the wrong
	// YAML type (agent-client-protocol.mcp_config has its own check,
	// domain.CheckMCPConfigWrongType).
	CheckWrongType = "config.wrong_type"
	// CheckOutOfRange: an integer does not fit the setting.
	CheckOutOfRange = "config.out_of_range"
	// CheckDuplicateKey: a mapping this kind reads has the same key twice.
	CheckDuplicateKey = "config.duplicate_key"
	// CheckUnknownKey: a key this kind does not read, inside a block it
	// does (warning; the key is ignored).
	CheckUnknownKey = "config.unknown_key"
	// CheckCommandInvalid: the agent.command string does not split into
	// words (an unterminated quote, a trailing backslash).
	CheckCommandInvalid = "agent.command.invalid"
)

// Load reads the WORKFLOW.md at path and returns its configuration and
// findings; see Parse. The error is non-nil only when the file cannot be
// read at all (missing, a directory, no permission): "read <path>:
// <reason>", matching fs.ErrNotExist and the like with errors.Is.
// Everything wrong with its content is a finding. The configuration is fit to use only when
// domain.HasErrors(findings) is false.
func Load(path string) (domain.Config, []domain.Finding, error) {
	data, tooLarge, err := readBounded(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is named once, below
		}
		return domain.DefaultConfig(), nil, fmt.Errorf("read %s: %w", path, err)
	}
	if tooLarge {
		return domain.DefaultConfig(), []domain.Finding{{
			Severity: domain.SeverityError,
			Check:    CheckFileTooLarge,
			Message:  fmt.Sprintf("the file is larger than the %d-byte limit", MaxFileBytes),
		}}, nil
	}
	cfg, findings := Parse(data, path)
	return cfg, findings, nil
}

func readBounded(path string) ([]byte, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > MaxFileBytes {
		return nil, true, nil
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, false, err
	}
	return data, len(data) > MaxFileBytes, nil
}

// Parse reads a WORKFLOW.md's content; workflowPath is where it lives,
// against whose directory a relative agent-client-protocol.mcp_config
// resolves. It returns the configuration (the defaults of docs/behaviour.md#configuration, overridden by
// the front matter) and the findings in a fixed order: the loader's own,
// in document order, then domain.Config.Validate's.
//
// A file that does not open with a "---" line has no front matter and
// gets the defaults (and therefore agent.command.required). Only the
// agent, agent-client-protocol, worker and token_rates blocks are read;
// other top-level keys belong to the orchestrator and are ignored. When
// the front matter cannot be parsed at all (unterminated, too large, not
// UTF-8, not YAML, not a mapping) that one finding is returned alone.
func Parse(data []byte, workflowPath string) (domain.Config, []domain.Finding) {
	cfg := domain.DefaultConfig()
	if len(data) > MaxFileBytes {
		return cfg, []domain.Finding{{Severity: domain.SeverityError, Check: CheckFileTooLarge,
			Message: fmt.Sprintf("the file is larger than the %d-byte limit", MaxFileBytes)}}
	}
	if bytes.HasPrefix(data, []byte("\xff\xfe")) || bytes.HasPrefix(data, []byte("\xfe\xff")) {
		return cfg, []domain.Finding{{Severity: domain.SeverityError, Check: CheckFrontMatterNotUTF8,
			Message: "the file is UTF-16 encoded; save it as UTF-8"}}
	}
	front, found, fault := splitFrontMatter(data)
	if fault != nil {
		return cfg, []domain.Finding{*fault}
	}
	l := &loader{cfg: cfg, dir: workflowDir(workflowPath)}
	if found {
		root, fault := parseYAML(front)
		if fault != nil {
			return cfg, []domain.Finding{*fault}
		}
		if root != nil {
			if root.Kind != yaml.MappingNode {
				return cfg, []domain.Finding{{Severity: domain.SeverityError, Check: CheckWrongType,
					Message: fmt.Sprintf("front matter: expected a mapping, found %s (line %d)", describe(root), root.Line)}}
			}
			l.top(root)
		}
	}
	findings := l.findings
	for _, f := range l.cfg.Validate() {
		if f.Check == domain.CheckCommandRequired && (l.errored["agent.command"] || l.errored["agent"]) {
			continue // the loader already said what is wrong with agent.command
		}
		findings = append(findings, f)
	}
	return l.cfg, findings
}

func workflowDir(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return filepath.Dir(path)
}

// splitFrontMatter returns the text between an opening "---" line (the
// file's first, after an optional UTF-8 byte order mark) and the next
// "---" line. Trailing blanks and a carriage return on a delimiter line
// are allowed. found is false when the file does not open a front matter.
func splitFrontMatter(data []byte) (front []byte, found bool, fault *domain.Finding) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	if !isDelimiter(first) {
		return nil, false, nil
	}
	off := 0
	for off <= len(rest) {
		line, _, hasNext := bytes.Cut(rest[off:], []byte("\n"))
		if isDelimiter(line) {
			front = rest[:off]
			break
		}
		if !hasNext {
			return nil, true, &domain.Finding{Severity: domain.SeverityError, Check: CheckFrontMatterUnterminated,
				Message: `the front matter opened by "---" on line 1 is never closed by another "---" line`}
		}
		off += len(line) + 1
		if off > MaxFrontMatterBytes {
			return nil, true, frontTooLarge()
		}
	}
	if len(front) > MaxFrontMatterBytes {
		return nil, true, frontTooLarge()
	}
	if !utf8.Valid(front) {
		line, col := invalidUTF8(front)
		return nil, true, &domain.Finding{Severity: domain.SeverityError, Check: CheckFrontMatterNotUTF8,
			Message: fmt.Sprintf("the front matter is not valid UTF-8 (line %d, column %d)", line+1, col)}
	}
	return front, true, nil
}

func frontTooLarge() *domain.Finding {
	return &domain.Finding{Severity: domain.SeverityError, Check: CheckFrontMatterTooLarge,
		Message: fmt.Sprintf("the front matter is larger than the %d-byte limit", MaxFrontMatterBytes)}
}

func isDelimiter(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r")) == "---"
}

// invalidUTF8 returns the 1-based line and byte column of the first byte
// of b that is not valid UTF-8.
func invalidUTF8(b []byte) (line, col int) {
	line, col = 1, 1
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return line, col
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col += size
		}
		i += size
	}
	return line, col
}

// parseYAML parses the front matter into a node tree. One newline stands
// in for the opening "---" line, so the parser's line numbers are the
// file's. It returns nil for an empty or comment-only front matter.
func parseYAML(front []byte) (*yaml.Node, *domain.Finding) {
	src := make([]byte, 0, len(front)+1)
	src = append(append(src, '\n'), front...)
	if line, col, r, bad := disallowedChar(src); bad {
		return nil, &domain.Finding{Severity: domain.SeverityError, Check: CheckYAMLInvalid,
			Message: fmt.Sprintf("the front matter is not valid YAML: it contains the control character %U (line %d, column %d)", r, line, col)}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, &domain.Finding{Severity: domain.SeverityError, Check: CheckYAMLInvalid,
			Message: "the front matter is not valid YAML: " + yamlErrorText(src, err)}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	root := resolve(doc.Content[0])
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return nil, nil
	}
	return root, nil
}

// errNotRead is returned by the value readers after they recorded a
// finding; the caller leaves the default in place.
var errNotRead = errors.New("not read")

// parserProblems are the problems the YAML parser (as opposed to its
// scanner) reports, each with the construct the library then names the
// line of: where that construct starts, not where the problem is. For
// these problems the library prints a 0-based line number, for scanner
// problems a 1-based one.
var parserProblems = map[string]string{
	"did not find expected ',' or ']'":       "the flow sequence",
	"did not find expected ',' or '}'":       "the flow mapping",
	"did not find expected '-' indicator":    "the block sequence",
	"did not find expected key":              "the block mapping",
	"did not find expected node content":     "the node",
	"did not find expected <document start>": "",
	"did not find expected <stream-start>":   "",
	"found duplicate %TAG directive":         "",
	"found duplicate %YAML directive":        "",
	"found incompatible YAML document":       "",
	"found undefined tag handle":             "",
}

var (
	yamlLine      = regexp.MustCompile(`^line ([0-9]+): (.*)$`)
	unknownAnchor = regexp.MustCompile(`^unknown anchor '(.*)' referenced$`)
)

// yamlErrorText turns a YAML library error into "line N: problem" with N
// the file's 1-based line wherever the library gives or implies one.
func yamlErrorText(src []byte, err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, convErr := strconv.Atoi(m[1])
		construct, parser := parserProblems[m[2]]
		switch {
		case convErr != nil || !parser:
			return msg
		case construct != "":
			return fmt.Sprintf("%s that starts at line %d: %s", construct, n+1, m[2])
		default:
			return fmt.Sprintf("line %d: %s", n+1, m[2])
		}
	}
	if m := unknownAnchor.FindStringSubmatch(msg); m != nil {
		if i := bytes.Index(src, []byte("*"+m[1])); i >= 0 {
			return fmt.Sprintf("line %d: %s", 1+bytes.Count(src[:i], []byte("\n")), msg)
		}
	}
	return msg
}

// disallowedChar finds the first character YAML does not allow in a
// stream (C0 and C1 controls other than tab, line feed, carriage return
// and next line; U+FFFE and U+FFFF), with its 1-based line and column.
// src must be valid UTF-8.
func disallowedChar(src []byte) (line, col int, r rune, bad bool) {
	line, col = 1, 1
	for _, r := range string(src) {
		switch {
		case r == '\n':
			line, col = line+1, 1
			continue
		case r == '\t' || r == '\r' || r == 0x85:
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0xfffe || r == 0xffff:
			return line, col, r, true
		}
		col++
	}
	return 0, 0, 0, false
}
