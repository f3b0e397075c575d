package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Elicitation modes (ElicitationQuestion.Mode). acpdrive offers the form
// mode only, and only when an answers policy is set; it never opens a URL
// (docs/behaviour.md#elicitation).
const (
	ElicitModeForm = "form"
	ElicitModeURL  = "url"
)

// ElicitationAction is what an elicitation/create request was answered
// with.
type ElicitationAction string

// The actions of an elicitation answer.
const (
	// ElicitAccept: the form was filled in (ElicitationAnswer.Content).
	ElicitAccept ElicitationAction = "accept"
	// ElicitDecline: the question was declined; the turn then needs a
	// person.
	ElicitDecline ElicitationAction = "decline"
	// ElicitCancel: the question was cancelled because the turn is ending
	// already.
	ElicitCancel ElicitationAction = "cancel"
	// ElicitUnanswered: a JSON-RPC error answered the request (no policy
	// was set, so elicitation was not offered; or a mode that was not
	// offered); the turn then needs a person.
	ElicitUnanswered ElicitationAction = "unanswered"
)

// What decided an elicitation answer (ElicitationInfo.By).
const (
	// ElicitByAnswers: the answers policy.
	ElicitByAnswers = "answers"
	// ElicitByNoPolicy: no answers policy was set.
	ElicitByNoPolicy = "no_policy"
	// ElicitByModeNotOffered: the request used a mode acpdrive did not
	// offer.
	ElicitByModeNotOffered = "mode_not_offered"
	// ElicitByEndingPending: the turn's ending was decided already.
	ElicitByEndingPending = "ending_pending"
)

// ElicitationQuestion is one elicitation/create request as an answers
// policy sees it.
type ElicitationQuestion struct {
	// Session is PermissionParent or PermissionChild: whose question it is.
	Session string
	// ToolCallID is the tool call the question belongs to, when named.
	ToolCallID string
	// Mode is the request's mode (ElicitModeForm, ElicitModeURL, or
	// another the runtime named).
	Mode string
	// Message is the question as the runtime worded it.
	Message string
	// Schema is the form's requestedSchema, as sent.
	Schema json.RawMessage
	// URL is the URL of a url-mode request. acpdrive never opens it.
	URL string
}

// ElicitationAnswer is an answers policy's answer to one question.
type ElicitationAnswer struct {
	// Action is ElicitAccept, ElicitDecline or ElicitCancel.
	Action ElicitationAction
	// Content is the filled-in form on ElicitAccept: field name to value.
	Content map[string]any
	// Reason says why a question was not answered.
	Reason string
}

// ElicitationInfo is the account of one question, on the elicitation
// event and, when the turn ended needing a person because of it, on the
// turn's result (TurnResult.Question).
type ElicitationInfo struct {
	// Session is whose question it was (PermissionParent or
	// PermissionChild).
	Session string `json:"session"`
	// ToolCallID is the tool call the question belonged to, when named.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Mode is the request's mode.
	Mode string `json:"mode"`
	// Message is the question.
	Message string `json:"message"`
	// Schema is the form's requestedSchema, as sent.
	Schema json.RawMessage `json:"schema,omitempty"`
	// URL is a url-mode request's URL (never opened).
	URL string `json:"url,omitempty"`
	// Action is what the request was answered with.
	Action ElicitationAction `json:"action"`
	// Fields are the names of the fields answered, sorted, on accept.
	Fields []string `json:"fields,omitempty"`
	// By is what decided (ElicitByAnswers, ElicitByNoPolicy, ...).
	By string `json:"by"`
	// Reason says why the question was not answered.
	Reason string `json:"reason,omitempty"`
}

// ElicitationMessage is the elicitation event's one-line account.
func (i ElicitationInfo) ElicitationMessage() string {
	q := fmt.Sprintf("%q", i.Message)
	switch i.Action {
	case ElicitAccept:
		return "answered " + q + " (" + strings.Join(i.Fields, ", ") + ")"
	case ElicitCancel:
		return "cancelled " + q + ": the turn is ending"
	}
	verb := "declined "
	if i.Action == ElicitUnanswered {
		verb = "did not answer "
	}
	if i.Reason == "" {
		return verb + q
	}
	return verb + q + ": " + i.Reason
}

// Answers is an answers policy as read from a file (ParseAnswers): the
// values to fill a form in with, keyed by the question or by the field's
// name (docs/behaviour.md#elicitation).
type Answers struct {
	// Questions holds the values for the forms of one question, keyed by
	// the question's message or its schema's title; they come first.
	Questions map[string]map[string]any `json:"questions,omitempty"`
	// Fields holds values by field name, for any question. Here and in
	// Questions, a field with no value under its name takes the one under
	// its title, else under its description.
	Fields map[string]any `json:"fields,omitempty"`
	// Defaults lets a field with no value take its schema's default.
	Defaults bool `json:"defaults,omitempty"`
}

// CheckAnswersInvalid is the validation check of an answers file that
// cannot be read or parsed (agent.answers).
const CheckAnswersInvalid = "agent.answers.invalid"

// ParseAnswers reads an answers file: a JSON object with "questions",
// "fields" and "defaults", every value a string, a number, a boolean or a
// list of strings (the picks of a multi-select field). Unknown members are
// errors, as a mistyped key would otherwise answer nothing.
func ParseAnswers(data []byte) (Answers, error) {
	var a Answers
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(&a); err != nil {
		return Answers{}, fmt.Errorf("answers: %w", err)
	}
	if dec.More() {
		return Answers{}, errors.New("answers: more than one JSON value")
	}
	check := func(where string, m map[string]any) error {
		for k, v := range m {
			n, err := scalar(v)
			if err != nil {
				return fmt.Errorf("answers: %s%q: %w", where, k, err)
			}
			m[k] = n
		}
		return nil
	}
	if err := check("fields.", a.Fields); err != nil {
		return Answers{}, err
	}
	for q, m := range a.Questions {
		if err := check("questions."+fmt.Sprintf("%q", q)+".", m); err != nil {
			return Answers{}, err
		}
	}
	return a, nil
}

// scalar checks a decoded answer value and turns a json.Number into a
// float64.
func scalar(v any) (any, error) {
	switch v := v.(type) {
	case string, bool:
		return v, nil
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return nil, fmt.Errorf("not a number: %s", v)
		}
		return f, nil
	case []any:
		for _, item := range v {
			if _, ok := item.(string); !ok {
				return nil, errors.New("a list must hold strings only")
			}
		}
		return v, nil
	}
	return nil, errors.New("a value must be a string, a number, a boolean or a list of strings")
}

// formSchema is the flat object schema of a form-mode request.
type formSchema struct {
	Type       string                     `json:"type"`
	Title      string                     `json:"title"`
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
}

// formField is one property of a form: a string, a number, an integer or
// a boolean, or an array of strings (a multi-select). A field's choices
// are its enum or the consts of its titled oneOf/anyOf options (the form
// Claude's AskUserQuestion and codex's request_user_input send); a
// multi-select's are its items'. Its title and description may hold the
// question (docs/behaviour.md#elicitation).
type formField struct {
	Type        string          `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Enum        []any           `json:"enum"`
	OneOf       []enumOption    `json:"oneOf"`
	AnyOf       []enumOption    `json:"anyOf"`
	Items       *formField      `json:"items"`
	Default     json.RawMessage `json:"default"`
}

// lookupField is the value m holds for the field name: under its name,
// else under its title, else under its description. A runtime may name
// its fields after nothing a policy can know beforehand (codex names them
// with ids its model chose, Claude question_<n>) and put the question
// itself in the field's title or description (docs/behaviour.md#elicitation).
func lookupField(m map[string]any, name string, f formField) (any, bool) {
	for _, key := range []string{name, f.Title, f.Description} {
		if key == "" {
			continue
		}
		if v, ok := m[key]; ok {
			return v, true
		}
	}
	return nil, false
}

// enumOption is one titled choice of a oneOf/anyOf enum.
type enumOption struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

// Answer answers q from the policy: a form whose every required field has
// a value of its type (from Questions, then Fields, each keyed by the
// field's name, else its title, else its description; then the schema's
// default when Defaults allows) is accepted with the fields that have one;
// anything else is declined with the reason. A url-mode question is always
// declined: acpdrive never opens a URL.
func (a Answers) Answer(q ElicitationQuestion) ElicitationAnswer {
	decline := func(format string, args ...any) ElicitationAnswer {
		return ElicitationAnswer{Action: ElicitDecline, Reason: fmt.Sprintf(format, args...)}
	}
	if q.Mode != ElicitModeForm {
		return decline("acpdrive answers forms only and never opens a URL")
	}
	var s formSchema
	if err := json.Unmarshal(q.Schema, &s); err != nil || len(s.Properties) == 0 {
		return decline("the form's schema names no field")
	}
	byQuestion := a.Questions[q.Message]
	if byQuestion == nil && s.Title != "" {
		byQuestion = a.Questions[s.Title]
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	content := map[string]any{}
	for _, name := range names {
		var f formField
		if err := json.Unmarshal(s.Properties[name], &f); err != nil {
			return decline("the form's field %q cannot be read", name)
		}
		v, ok := lookupField(byQuestion, name, f)
		if !ok {
			v, ok = lookupField(a.Fields, name, f)
		}
		if !ok && a.Defaults && len(f.Default) > 0 && string(f.Default) != "null" {
			ok = json.Unmarshal(f.Default, &v) == nil
		}
		if !ok {
			if slices.Contains(s.Required, name) {
				return decline("no answer for the required field %q", name)
			}
			continue
		}
		v, err := f.value(numberAsFloat(v))
		if err != nil {
			return decline("the answer for the field %q %v", name, err)
		}
		content[name] = v
	}
	if len(content) == 0 {
		return decline("no answer for any field of the form")
	}
	return ElicitationAnswer{Action: ElicitAccept, Content: content}
}

// value is the answer v as the field takes it: for a multi-select (type
// array), a single string becomes a list of one pick and every pick must
// be one of the items' choices; otherwise v itself, of the field's type
// and among its choices (a string that is the title of exactly one
// titled option stands for that option's const).
func (f formField) value(v any) (any, error) {
	if f.Type != "array" {
		if err := f.accepts(v); err != nil {
			return nil, err
		}
		return f.choice(v)
	}
	var picks []any
	switch v := v.(type) {
	case string:
		picks = []any{v}
	case []string:
		for _, p := range v {
			picks = append(picks, p)
		}
	case []any:
		picks = v
	default:
		return nil, errors.New("is not a list of strings")
	}
	item := formField{Type: "string"}
	if f.Items != nil {
		item = *f.Items
	}
	out := make([]any, 0, len(picks))
	for _, p := range picks {
		if _, ok := p.(string); !ok {
			return nil, errors.New("is not a list of strings")
		}
		if err := item.accepts(p); err != nil {
			return nil, err
		}
		c, err := item.choice(p)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// choice is v among the field's choices: v when the field has none or v
// is one; the const of the one titled option whose title v is; else an
// error.
func (f formField) choice(v any) (any, error) {
	options := append(slices.Clone(f.OneOf), f.AnyOf...)
	if len(f.Enum) == 0 && len(options) == 0 {
		return v, nil
	}
	same := func(e any) bool { return sameScalar(e, v) }
	if slices.ContainsFunc(f.Enum, same) || slices.ContainsFunc(options, func(o enumOption) bool { return same(o.Const) }) {
		return v, nil
	}
	var found []any
	for _, o := range options {
		if s, ok := v.(string); ok && o.Title != "" && o.Title == s {
			found = append(found, o.Const)
		}
	}
	if len(found) == 1 && sameScalar(found[0], found[0]) {
		return found[0], nil
	}
	return nil, errors.New("is not one of the field's choices")
}

// accepts reports whether v is a value of the field's type.
func (f formField) accepts(v any) error {
	switch f.Type {
	case "string":
		if _, ok := v.(string); !ok {
			return errors.New("is not a string")
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return errors.New("is not a boolean")
		}
	case "number", "integer":
		n, ok := v.(float64)
		if !ok {
			return fmt.Errorf("is not a %s", f.Type)
		}
		if f.Type == "integer" && n != math.Trunc(n) {
			return errors.New("is not an integer")
		}
	}
	return nil
}

// sameScalar compares two decoded JSON values that may not be comparable
// (an enum may list objects): only equal strings, numbers and booleans
// are the same.
func sameScalar(a, b any) bool {
	switch a.(type) {
	case string, float64, bool:
		return a == b
	}
	return false
}

// numberAsFloat turns a Go number (as a program may fill Answers in) into
// the float64 JSON decoding gives; anything else is returned as it is.
func numberAsFloat(v any) any {
	switch n := v.(type) {
	case int:
		return float64(n)
	case int32:
		return float64(n)
	case int64:
		return float64(n)
	case uint:
		return float64(n)
	case float32:
		return float64(n)
	case json.Number:
		if f, err := n.Float64(); err == nil {
			return f
		}
	}
	return v
}
