package domain

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// PermissionVerdict is what a permission policy decides for one request
// (docs/behaviour.md#permission-posture).
type PermissionVerdict string

// The three verdicts a policy gives, and the one only an ending gives.
const (
	// PermissionAllow answers with the request's allow_once option.
	PermissionAllow PermissionVerdict = "allow"
	// PermissionRefuse answers with a refusing option: reject_once first,
	// else reject_always.
	PermissionRefuse PermissionVerdict = "refuse"
	// PermissionPerson answers cancelled and ends the turn
	// turn_input_required: only a person could decide.
	PermissionPerson PermissionVerdict = "person"
	// PermissionCancelled is no policy's verdict: the answer given at once
	// while an ending is already decided or held.
	PermissionCancelled PermissionVerdict = "cancelled"
)

// ParsePermissionVerdict reads a policy verdict: allow, refuse or person.
func ParsePermissionVerdict(s string) (PermissionVerdict, bool) {
	switch v := PermissionVerdict(s); v {
	case PermissionAllow, PermissionRefuse, PermissionPerson:
		return v, true
	}
	return "", false
}

// Which session asked (PermissionRequest.Session).
const (
	// PermissionParent: the session acpdrive started.
	PermissionParent = "parent"
	// PermissionChild: a child session it follows
	// (docs/behaviour.md#sessions-as-resources-and-child-sessions).
	PermissionChild = "child"
	// PermissionOther: a session this run does not follow (or none named);
	// such a request is never a policy's, it gets the default refusal.
	PermissionOther = "other"
)

// Permission option kinds of ACP, as a request offers them.
const (
	OptionKindAllowOnce    = "allow_once"
	OptionKindAllowAlways  = "allow_always"
	OptionKindRejectOnce   = "reject_once"
	OptionKindRejectAlways = "reject_always"
)

// PermissionOffer is one option a permission request offers.
type PermissionOffer struct {
	// ID is the option's id, sent back verbatim when it is chosen.
	ID string `json:"option_id"`
	// Kind is the option's kind as the runtime wrote it.
	Kind string `json:"kind"`
}

// PermissionPath is one path a permission request names (in the tool
// call's locations or its rawInput), judged against the workspace roots.
type PermissionPath struct {
	// Path is the path as the runtime gave it.
	Path string `json:"path"`
	// Resolved is the absolute path after resolving "..", "." and every
	// symbolic link of its longest existing prefix; "" when it cannot be
	// known (a remote launch, an unreadable directory, a link loop).
	Resolved string `json:"resolved,omitempty"`
	// Inside reports that Resolved is a workspace root or lies under one.
	Inside bool `json:"inside"`
}

// PermissionRequest is what a policy is asked: what the runtime wants to
// do, the options it offers, and which session asks.
type PermissionRequest struct {
	// SessionID is the session the request names.
	SessionID string `json:"session_id,omitempty"`
	// Session is PermissionParent or PermissionChild.
	Session string `json:"session"`
	// ToolCallID is the tool call's id, when the request carries one.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Kind is the tool call's kind, normalized (ToolOther when absent).
	Kind ToolKind `json:"kind"`
	// Title is the tool call's title as the runtime wrote it.
	Title string `json:"title,omitempty"`
	// Paths are the paths of the tool call's locations and of its
	// rawInput, in that order, each once.
	Paths []PermissionPath `json:"paths,omitempty"`
	// Command is the command of an execute request, when the runtime
	// gives one (rawInput.command; a list is joined with spaces).
	Command string `json:"command,omitempty"`
	// Options are the options offered, in the runtime's order.
	Options []PermissionOffer `json:"options"`
}

// Inside reports that the request names at least one path and that every
// path it names is known and inside a workspace root. A request whose
// paths cannot be known, or that names none, is not inside.
func (r PermissionRequest) Inside() bool {
	if len(r.Paths) == 0 {
		return false
	}
	for _, p := range r.Paths {
		if !p.Inside || p.Resolved == "" {
			return false
		}
	}
	return true
}

// PermissionDecision is a policy's answer to one request.
type PermissionDecision struct {
	// Verdict is allow, refuse or person; anything else counts as refuse.
	Verdict PermissionVerdict
	// By names what decided: "preset <name>", "rules <file>:<line>", or
	// a caller's own policy's name.
	By string
	// Reason says why, in words, when it is more than the verdict: the
	// preset's scope, the path outside the workspace, the rule that
	// matched (docs/behaviour.md#permission-decisions). "" for the
	// refusal of an unattended run.
	Reason string
}

// MsgPermissionRefusedPrefix begins the notice of a permission request a
// policy refused for a reason of its own; the reason follows.
const MsgPermissionRefusedPrefix = "refused a permission request: "

// PermissionRefusedNotice is the notice of a refused permission request:
// what decided it, or, for the refusal of an unattended run,
// MsgPermissionRefused (docs/behaviour.md#permission-decisions).
func PermissionRefusedNotice(d PermissionDecision) string {
	if d.Reason == "" {
		return MsgPermissionRefused
	}
	return MsgPermissionRefusedPrefix + d.Reason
}

// PermissionPersonDetail is the detail of a turn a policy's verdict
// "person" ended (turn_input_required): what sent the request to a person.
func PermissionPersonDetail(d PermissionDecision) string {
	if d.By == "" {
		return "the permission policy sends this request to a person"
	}
	return "the permission policy sends this request to a person (" + d.By + ")"
}

// PathInside reports whether the absolute, cleaned path p is one of roots
// or lies under one. It judges names only; the caller resolves symbolic
// links first (docs/behaviour.md#permission-posture).
func PathInside(p string, roots []string) bool {
	if p == "" || !filepath.IsAbs(p) {
		return false
	}
	p = filepath.Clean(p)
	for _, r := range roots {
		if r == "" || !filepath.IsAbs(r) {
			continue
		}
		r = filepath.Clean(r)
		if p == r {
			return true
		}
		prefix := r
		if !strings.HasSuffix(prefix, string(filepath.Separator)) {
			prefix += string(filepath.Separator)
		}
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// ChoosePermissionOption turns a verdict into the answer sent, choosing
// among the offered options by kind only (never an *_always option to
// allow, never an id the runtime did not offer, never "the first
// option"): allow sends the first allow_once; refuse the first
// reject_once, else the first reject_always; person sends no option (the
// cancelled outcome). When no offered option fits, the request is refused
// the documented way: an allow without allow_once becomes refuse, a
// refuse without a refusing option becomes person. sent is the verdict
// carried out; optionID is "" when the answer is cancelled.
func ChoosePermissionOption(v PermissionVerdict, offers []PermissionOffer) (sent PermissionVerdict, optionID string) {
	first := func(kind string) (string, bool) {
		for _, o := range offers {
			if o.Kind == kind {
				return o.ID, true
			}
		}
		return "", false
	}
	if v == PermissionAllow {
		if id, ok := first(OptionKindAllowOnce); ok {
			return PermissionAllow, id
		}
		v = PermissionRefuse
	}
	if v != PermissionPerson {
		for _, k := range [...]string{OptionKindRejectOnce, OptionKindRejectAlways} {
			if id, ok := first(k); ok {
				return PermissionRefuse, id
			}
		}
	}
	return PermissionPerson, ""
}

// PermissionPreset names a policy an operator chooses
// (--permissions, agent.permissions).
type PermissionPreset string

// The presets.
const (
	// PresetRefuse refuses every request: the default, today's posture.
	PresetRefuse PermissionPreset = "refuse"
	// PresetRead allows read, search and think; refuses the rest.
	PresetRead PermissionPreset = "read"
	// PresetEdit allows what PresetRead allows, and edit, delete and move
	// whose every path is inside the workspace or an additional
	// directory; refuses the rest.
	PresetEdit PermissionPreset = "edit"
	// PresetRules decides by an ordered rules file.
	PresetRules PermissionPreset = "rules"
)

// PermissionPolicy is an operator's choice of policy: a preset, or the
// rules of a rules file. Its zero value is PresetRefuse. It implements
// ports.PermissionPolicy.
type PermissionPolicy struct {
	// Preset names the policy; "" is PresetRefuse.
	Preset PermissionPreset
	// Source is the rules file's path, for PresetRules.
	Source string
	// Rules are the rules file's rules, for PresetRules: the first that
	// matches decides, and the last matches every request.
	Rules []PermissionRule
}

// String is the policy as --permissions takes it.
func (p PermissionPolicy) String() string {
	switch p.Preset {
	case "":
		return string(PresetRefuse)
	case PresetRules:
		return "rules:" + p.Source
	}
	return string(p.Preset)
}

// IsDefault reports the refusal posture.
func (p PermissionPolicy) IsDefault() bool { return p.Preset == "" || p.Preset == PresetRefuse }

// Decide is the policy's verdict on r. A preset or rule set it does not
// know refuses.
func (p PermissionPolicy) Decide(r PermissionRequest) PermissionDecision {
	by := "preset " + string(p.Preset)
	readish := r.Kind == ToolRead || r.Kind == ToolSearch || r.Kind == ToolThink
	editish := r.Kind == ToolEdit || r.Kind == ToolDelete || r.Kind == ToolMove
	switch p.Preset {
	case "", PresetRefuse:
		return PermissionDecision{Verdict: PermissionRefuse, By: "preset " + string(PresetRefuse)}
	case PresetRead:
		if readish {
			return PermissionDecision{Verdict: PermissionAllow, By: by}
		}
		return PermissionDecision{Verdict: PermissionRefuse, By: by,
			Reason: "preset read allows reading and searching only, not a request of kind " + string(r.Kind)}
	case PresetEdit:
		if readish || editish && r.Inside() {
			return PermissionDecision{Verdict: PermissionAllow, By: by}
		}
		why := "preset edit allows reading, and edits inside the workspace; not a request of kind " + string(r.Kind)
		switch {
		case editish && len(r.Paths) == 0:
			why = "the request names no path; preset edit allows edits inside the workspace only"
		case editish:
			why = "a path it names is outside the workspace; preset edit allows edits inside the workspace only"
		}
		return PermissionDecision{Verdict: PermissionRefuse, By: by, Reason: why}
	case PresetRules:
		for _, rule := range p.Rules {
			if rule.Matches(r) {
				at := fmt.Sprintf("%s:%d", p.Source, rule.Line)
				return PermissionDecision{Verdict: rule.Verdict, By: "rules " + at, Reason: "the rule on " + at + " decides it"}
			}
		}
		return PermissionDecision{Verdict: PermissionRefuse, By: by, Reason: "no rule of " + p.Source + " matches it"}
	}
	return PermissionDecision{Verdict: PermissionRefuse, By: by}
}

// ParsePermissionPolicy reads --permissions and agent.permissions:
// "refuse", "read", "edit" or "rules:FILE". For a rules file only the
// path is read here (Source); the caller reads the file and parses it
// with ParsePermissionRules.
func ParsePermissionPolicy(s string) (PermissionPolicy, error) {
	t := strings.TrimSpace(s)
	switch PermissionPreset(t) {
	case "", PresetRefuse:
		return PermissionPolicy{Preset: PresetRefuse}, nil
	case PresetRead, PresetEdit:
		return PermissionPolicy{Preset: PermissionPreset(t)}, nil
	}
	if file, ok := strings.CutPrefix(t, "rules:"); ok && strings.TrimSpace(file) != "" {
		return PermissionPolicy{Preset: PresetRules, Source: strings.TrimSpace(file)}, nil
	}
	return PermissionPolicy{}, fmt.Errorf("permissions %q is not one of refuse, read, edit, rules:FILE", s)
}

// PermissionRule is one line of a rules file
// (docs/behaviour.md#permission-rules): conditions and a verdict. An
// empty condition matches every request.
type PermissionRule struct {
	// Line is the rule's line in its file (1-based).
	Line int
	// Verdict is what the rule decides.
	Verdict PermissionVerdict
	// Kinds, when set, are the tool kinds the rule matches.
	Kinds []ToolKind
	// Title, when set, is a pattern the title must match: "*" any run of
	// characters, "?" one character, everything else itself.
	Title string
	// Path, when set, is "inside" (the request names paths and every one
	// is inside a workspace root) or "outside" (any other request).
	Path string
	// Session, when set, is PermissionParent or PermissionChild.
	Session string
}

// Matches reports whether every condition of the rule holds for r.
func (rule PermissionRule) Matches(r PermissionRequest) bool {
	if len(rule.Kinds) > 0 {
		found := false
		for _, k := range rule.Kinds {
			found = found || k == r.Kind
		}
		if !found {
			return false
		}
	}
	if rule.Title != "" && !globMatch(rule.Title, r.Title) {
		return false
	}
	switch rule.Path {
	case "inside":
		if !r.Inside() {
			return false
		}
	case "outside":
		if r.Inside() {
			return false
		}
	}
	return rule.Session == "" || rule.Session == r.Session
}

// unconditional reports a rule without conditions.
func (rule PermissionRule) unconditional() bool {
	return len(rule.Kinds) == 0 && rule.Title == "" && rule.Path == "" && rule.Session == ""
}

// globMatch matches s against pattern: "*" any run of characters
// (possibly empty), "?" one character, anything else itself.
func globMatch(pattern, s string) bool {
	p, t := []rune(pattern), []rune(s)
	pi, ti, star, mark := 0, 0, -1, 0
	for ti < len(t) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == t[ti]):
			pi++
			ti++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, ti
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			ti = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// RuleError is one fault of a rules file, at its line.
type RuleError struct {
	// Line is the 1-based line of the fault.
	Line int
	// Message says what is wrong.
	Message string
}

// Error implements error.
func (e RuleError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Message) }

// ParsePermissionRules reads a rules file's text
// (docs/behaviour.md#permission-rules). Each non-blank line that is not a
// comment (#) is a rule:
//
//	allow|refuse|person [kind=K[,K…]] [title=PATTERN] [path=inside|outside] [session=parent|child]
//
// A value holding spaces is written in double quotes (Go's quoting). The
// first rule that matches decides; the last rule must have no condition
// (it is the default). It returns the rules and every fault found, each
// with its line; rules are nil when there is a fault.
func ParsePermissionRules(text string) ([]PermissionRule, []RuleError) {
	var rules []PermissionRule
	var errs []RuleError
	bad := func(line int, format string, args ...any) {
		errs = append(errs, RuleError{Line: line, Message: fmt.Sprintf(format, args...)})
	}
	if !utf8.ValidString(text) {
		return nil, []RuleError{{Line: 1, Message: "the file is not valid UTF-8"}}
	}
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		words, err := splitRuleWords(line)
		if err != nil {
			bad(n, "%v", err)
			continue
		}
		v, ok := ParsePermissionVerdict(words[0])
		if !ok {
			bad(n, "a rule begins with allow, refuse or person, not %q", words[0])
			continue
		}
		rule := PermissionRule{Line: n, Verdict: v}
		seen := map[string]bool{}
		for _, w := range words[1:] {
			key, val, ok := strings.Cut(w, "=")
			if !ok || val == "" {
				bad(n, "%q is not a condition KEY=VALUE (kind, title, path or session)", w)
				continue
			}
			if seen[key] {
				bad(n, "condition %s is given twice", key)
				continue
			}
			seen[key] = true
			switch key {
			case "kind":
				for _, k := range strings.Split(val, ",") {
					tk := ToolKind(strings.TrimSpace(k))
					if NormalizeToolKind(string(tk)) != tk || tk == "" {
						bad(n, "kind %q is not one of read, edit, delete, move, search, execute, think, fetch, switch_mode, other", k)
						continue
					}
					rule.Kinds = append(rule.Kinds, tk)
				}
			case "title":
				rule.Title = val
			case "path":
				if val != "inside" && val != "outside" {
					bad(n, "path %q is not inside or outside", val)
				}
				rule.Path = val
			case "session":
				if val != PermissionParent && val != PermissionChild {
					bad(n, "session %q is not parent or child", val)
				}
				rule.Session = val
			default:
				bad(n, "unknown condition %q (kind, title, path or session)", key)
			}
		}
		rules = append(rules, rule)
	}
	switch {
	case len(rules) == 0 && len(errs) == 0:
		errs = append(errs, RuleError{Line: 1, Message: "the file has no rule; its last rule is the default and must have no condition"})
	case len(rules) > 0 && !rules[len(rules)-1].unconditional():
		last := rules[len(rules)-1]
		bad(last.Line, "the last rule is the default and must have no condition (write a last line such as \"refuse\")")
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return rules, nil
}

// splitRuleWords splits a rule line into words at blanks; a value may be
// double-quoted (KEY="a b"), and a "#" outside quotes begins a comment.
func splitRuleWords(line string) ([]string, error) {
	var words []string
	for line != "" {
		line = strings.TrimLeft(line, " \t")
		if line == "" || line[0] == '#' {
			break
		}
		end := 0
		var w strings.Builder
		for end < len(line) && line[end] != ' ' && line[end] != '\t' {
			if line[end] == '"' {
				q, err := strconv.QuotedPrefix(line[end:])
				if err != nil {
					return nil, fmt.Errorf("an unterminated or invalid quoted value in %q", line)
				}
				u, _ := strconv.Unquote(q)
				w.WriteString(u)
				end += len(q)
				continue
			}
			w.WriteByte(line[end])
			end++
		}
		words = append(words, w.String())
		line = line[end:]
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("an empty rule")
	}
	return words, nil
}

// PermissionInfo is the permission_decision event's account of one
// request and its answer (docs/behaviour.md#permission-posture).
type PermissionInfo struct {
	// Request is what the runtime asked.
	Request PermissionRequest `json:"request"`
	// Decision is the verdict carried out: allow, refuse, person or
	// cancelled.
	Decision PermissionVerdict `json:"decision"`
	// Asked is the policy's own verdict when no offered option fitted it
	// and the request was refused the documented way instead; "" otherwise.
	Asked PermissionVerdict `json:"asked,omitempty"`
	// By names what decided: "preset <name>", "rules <file>:<line>",
	// "ending_pending" (an ending was already decided), "other_session"
	// (the request names a session this run does not follow).
	By string `json:"by"`
	// OptionID is the option sent; "" when the answer was cancelled.
	OptionID string `json:"option_id,omitempty"`
}

// PermissionMessage is the permission_decision event's text: the decision,
// the tool kind and title, and what decided.
func (i PermissionInfo) PermissionMessage() string {
	title := TruncateRunes(i.Request.Title, 120)
	if title == "" {
		title = "(no title)"
	}
	return fmt.Sprintf("%s %s %q (%s)", i.Decision, i.Request.Kind, title, i.By)
}

// CheckPermissionsInvalid is the validation check of a permission policy
// that cannot decide: an unknown preset, a rules file with no rule, or
// whose last rule has a condition, or that cannot be read or parsed.
const CheckPermissionsInvalid = "agent.permissions.invalid"

// Validate returns the error findings that keep the policy from deciding.
func (p PermissionPolicy) Validate() []Finding {
	bad := func(msg string) []Finding {
		return []Finding{{Severity: SeverityError, Check: CheckPermissionsInvalid, Message: "agent.permissions: " + msg}}
	}
	switch p.Preset {
	case "", PresetRefuse, PresetRead, PresetEdit:
		return nil
	case PresetRules:
		if len(p.Rules) == 0 {
			return bad(fmt.Sprintf("the rules file %q holds no rule", p.Source))
		}
		if last := p.Rules[len(p.Rules)-1]; !last.unconditional() {
			return bad(fmt.Sprintf("%s:%d: the last rule is the default and must have no condition", p.Source, last.Line))
		}
		return nil
	}
	return bad(fmt.Sprintf("%q is not one of refuse, read, edit, rules:FILE", string(p.Preset)))
}

func (p PermissionPolicy) clone() PermissionPolicy {
	p.Rules = append([]PermissionRule(nil), p.Rules...)
	return p
}
