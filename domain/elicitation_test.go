package domain_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
)

const branchForm = `{"type":"object","title":"Push target","properties":{
	"branch":{"type":"string","default":"main"},
	"force":{"type":"boolean","default":false},
	"retries":{"type":"integer"},
	"colour":{"type":"string","enum":["red","green"]}},
	"required":["branch"]}`

func question(schema string) domain.ElicitationQuestion {
	return domain.ElicitationQuestion{Session: domain.PermissionParent, Mode: domain.ElicitModeForm,
		Message: "Which branch should I push to?", Schema: json.RawMessage(schema)}
}

func TestAnswersAnswer(t *testing.T) {
	tests := []struct {
		name    string
		answers string
		q       domain.ElicitationQuestion
		action  domain.ElicitationAction
		content map[string]any
		reason  string
	}{
		{name: "by field name", answers: `{"fields":{"branch":"dev","retries":3}}`, q: question(branchForm),
			action: domain.ElicitAccept, content: map[string]any{"branch": "dev", "retries": 3.0}},
		{name: "by question first", answers: `{"questions":{"Which branch should I push to?":{"branch":"release"}},"fields":{"branch":"dev"}}`,
			q: question(branchForm), action: domain.ElicitAccept, content: map[string]any{"branch": "release"}},
		{name: "by schema title", answers: `{"questions":{"Push target":{"branch":"release","colour":"red"}}}`,
			q: question(branchForm), action: domain.ElicitAccept, content: map[string]any{"branch": "release", "colour": "red"}},
		{name: "defaults when allowed", answers: `{"defaults":true}`, q: question(branchForm),
			action: domain.ElicitAccept, content: map[string]any{"branch": "main", "force": false}},
		{name: "no defaults unless allowed", answers: `{}`, q: question(branchForm),
			action: domain.ElicitDecline, reason: `no answer for the required field "branch"`},
		{name: "wrong type", answers: `{"fields":{"branch":"dev","force":"yes"}}`, q: question(branchForm),
			action: domain.ElicitDecline, reason: `the answer for the field "force" is not a boolean`},
		{name: "not an integer", answers: `{"fields":{"branch":"dev","retries":1.5}}`, q: question(branchForm),
			action: domain.ElicitDecline, reason: `the answer for the field "retries" is not an integer`},
		{name: "not a choice", answers: `{"fields":{"branch":"dev","colour":"blue"}}`, q: question(branchForm),
			action: domain.ElicitDecline, reason: `the answer for the field "colour" is not one of the field's choices`},
		{name: "enum of objects never matches", answers: `{"fields":{"x":"a"}}`,
			q:      question(`{"type":"object","properties":{"x":{"type":"string","enum":[{"a":1},"b"]}}}`),
			action: domain.ElicitDecline, reason: `the answer for the field "x" is not one of the field's choices`},
		{name: "nothing to answer optional fields with", answers: `{"fields":{"other":"x"}}`,
			q:      question(`{"type":"object","properties":{"x":{"type":"string"}}}`),
			action: domain.ElicitDecline, reason: "no answer for any field of the form"},
		{name: "no schema", answers: `{"fields":{"x":"a"}}`, q: question(`null`),
			action: domain.ElicitDecline, reason: "the form's schema names no field"},
		{name: "url mode", answers: `{"fields":{"x":"a"}}`,
			q:      domain.ElicitationQuestion{Mode: domain.ElicitModeURL, Message: "Sign in", URL: "https://example.invalid/"},
			action: domain.ElicitDecline, reason: "acpdrive answers forms only and never opens a URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := domain.ParseAnswers([]byte(tt.answers))
			require.NoError(t, err)
			got := a.Answer(tt.q)
			assert.Equal(t, tt.action, got.Action)
			assert.Equal(t, tt.reason, got.Reason)
			if tt.content != nil {
				assert.Equal(t, tt.content, got.Content)
			}
		})
	}
}

// claudeForm is the form Claude's AskUserQuestion becomes
// (claude-agent-acp 0.101.0): a single-select as a string with titled
// oneOf options, a multi-select as an array whose items are titled anyOf
// options, each with an optional free-text companion.
const claudeForm = `{"type":"object","properties":{
	"question_0":{"type":"string","title":"Branch","description":"Which branch should I push to?","oneOf":[
		{"const":"main","title":"main","description":"The default branch"},
		{"const":"dev","title":"dev","description":"The development branch"}]},
	"question_0_custom":{"type":"string","title":"Other"},
	"question_1":{"type":"array","title":"Checks","description":"Which checks should run?","items":{"anyOf":[
		{"const":"lint","title":"lint"},{"const":"test","title":"test"},{"const":"build","title":"build"}]}},
	"question_1_custom":{"type":"string","title":"Other"}}}`

// codexForm is the form codex's request_user_input becomes
// (codex-acp 2.6.0): every question required, its options a titled oneOf.
const codexForm = `{"type":"object","properties":{
	"branch":{"title":"Which branch should I push to?","description":"Branch","type":"string","oneOf":[
		{"const":"main","title":"main"},{"const":"dev","title":"dev"},
		{"const":"None of the above","title":"None of the above"}]},
	"branch_note":{"type":"string","title":"Additional answer or note"}},
	"required":["branch"]}`

// choiceForm has options whose consts differ from their titles, as
// Claude's refusal-fallback form does.
const choiceForm = `{"type":"object","properties":{"choice":{"type":"string","oneOf":[
	{"const":"retry_fallback","title":"Retry with the other model"},
	{"const":"cancelled","title":"Keep the refusal"}]}}}`

// TestAnswersRuntimeForms: the forms today's runtimes send are read: a
// titled oneOf/anyOf option's const is a choice, a multi-select takes a
// list of picks (or one pick), an option's title stands for its const,
// and a field is found by its name, else its title, else its description.
func TestAnswersRuntimeForms(t *testing.T) {
	tests := []struct {
		name    string
		answers string
		schema  string
		action  domain.ElicitationAction
		content map[string]any
		reason  string
	}{
		{name: "claude single-select", answers: `{"fields":{"question_0":"dev"}}`, schema: claudeForm,
			action: domain.ElicitAccept, content: map[string]any{"question_0": "dev"}},
		{name: "claude single-select, not a choice", answers: `{"fields":{"question_0":"release"}}`, schema: claudeForm,
			action: domain.ElicitDecline, reason: `the answer for the field "question_0" is not one of the field's choices`},
		{name: "claude multi-select", answers: `{"fields":{"question_0":"main","question_1":["lint","test"]}}`, schema: claudeForm,
			action: domain.ElicitAccept, content: map[string]any{"question_0": "main", "question_1": []any{"lint", "test"}}},
		{name: "claude multi-select, one pick", answers: `{"fields":{"question_1":"build"}}`, schema: claudeForm,
			action: domain.ElicitAccept, content: map[string]any{"question_1": []any{"build"}}},
		{name: "claude multi-select, not a choice", answers: `{"fields":{"question_1":["lint","deploy"]}}`, schema: claudeForm,
			action: domain.ElicitDecline, reason: `the answer for the field "question_1" is not one of the field's choices`},
		{name: "claude multi-select, not a list", answers: `{"fields":{"question_1":true}}`, schema: claudeForm,
			action: domain.ElicitDecline, reason: `the answer for the field "question_1" is not a list of strings`},
		{name: "a list for a single-select", answers: `{"fields":{"question_0":["dev"]}}`, schema: claudeForm,
			action: domain.ElicitDecline, reason: `the answer for the field "question_0" is not a string`},
		{name: "claude free text", answers: `{"fields":{"question_0_custom":"release"}}`, schema: claudeForm,
			action: domain.ElicitAccept, content: map[string]any{"question_0_custom": "release"}},
		{name: "codex required choice", answers: `{"fields":{"branch":"dev"}}`, schema: codexForm,
			action: domain.ElicitAccept, content: map[string]any{"branch": "dev"}},
		{name: "codex required field unanswered", answers: `{"fields":{"branch_note":"dev"}}`, schema: codexForm,
			action: domain.ElicitDecline, reason: `no answer for the required field "branch"`},
		{name: "a title stands for its const", answers: `{"fields":{"choice":"Keep the refusal"}}`, schema: choiceForm,
			action: domain.ElicitAccept, content: map[string]any{"choice": "cancelled"}},
		{name: "a const as itself", answers: `{"fields":{"choice":"retry_fallback"}}`, schema: choiceForm,
			action: domain.ElicitAccept, content: map[string]any{"choice": "retry_fallback"}},
		{name: "codex field by its title (the question)", answers: `{"fields":{"Which branch should I push to?":"dev"}}`, schema: codexForm,
			action: domain.ElicitAccept, content: map[string]any{"branch": "dev"}},
		{name: "claude fields by their descriptions (the questions)",
			answers: `{"fields":{"Which branch should I push to?":"main","Which checks should run?":["test"]}}`, schema: claudeForm,
			action: domain.ElicitAccept, content: map[string]any{"question_0": "main", "question_1": []any{"test"}}},
		{name: "claude field by its title (the header)", answers: `{"questions":{"Which branch should I push to?":{"Branch":"dev"}}}`, schema: claudeForm,
			action: domain.ElicitAccept, content: map[string]any{"question_0": "dev"}},
		{name: "a name before a title", answers: `{"fields":{"branch":"main","Which branch should I push to?":"dev"}}`, schema: codexForm,
			action: domain.ElicitAccept, content: map[string]any{"branch": "main"}},
		{name: "the question's values before any field's", answers: `{"questions":{"Which branch should I push to?":{"Which branch should I push to?":"dev"}},"fields":{"branch":"main"}}`,
			schema: codexForm, action: domain.ElicitAccept, content: map[string]any{"branch": "dev"}},
		{name: "one title for several fields", answers: `{"fields":{"question_0":"dev","Other":"after lunch"}}`, schema: claudeForm,
			action: domain.ElicitAccept, content: map[string]any{"question_0": "dev", "question_0_custom": "after lunch", "question_1_custom": "after lunch"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := domain.ParseAnswers([]byte(tt.answers))
			require.NoError(t, err)
			got := a.Answer(question(tt.schema))
			assert.Equal(t, tt.action, got.Action, got.Reason)
			assert.Equal(t, tt.reason, got.Reason)
			if tt.content != nil {
				assert.Equal(t, tt.content, got.Content)
			}
		})
	}
}

// TestAnswersMultiSelectFromGo: a program's []string answers a
// multi-select.
func TestAnswersMultiSelectFromGo(t *testing.T) {
	a := domain.Answers{Fields: map[string]any{"question_1": []string{"test", "build"}}}
	got := a.Answer(question(claudeForm))
	require.Equal(t, domain.ElicitAccept, got.Action, got.Reason)
	assert.Equal(t, map[string]any{"question_1": []any{"test", "build"}}, got.Content)
}

func TestAnswersFromGoValues(t *testing.T) {
	a := domain.Answers{Fields: map[string]any{"branch": "dev", "retries": 2}}
	got := a.Answer(question(branchForm))
	require.Equal(t, domain.ElicitAccept, got.Action, got.Reason)
	assert.Equal(t, map[string]any{"branch": "dev", "retries": 2.0}, got.Content)
}

func TestParseAnswersRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"unknown member":  `{"field":{"branch":"dev"}}`,
		"object value":    `{"fields":{"branch":{"name":"dev"}}}`,
		"list of numbers": `{"questions":{"q":{"branch":["dev",1]}}}`,
		"null value":      `{"fields":{"branch":null}}`,
		"two values":      `{} {}`,
		"not json":        `fields: {}`,
		"not an object":   `[]`,
		"defaults a word": `{"defaults":"yes"}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := domain.ParseAnswers([]byte(in))
			assert.Error(t, err)
		})
	}
}

func TestElicitationMessage(t *testing.T) {
	tests := []struct {
		info domain.ElicitationInfo
		want string
	}{
		{domain.ElicitationInfo{Message: "Q?", Action: domain.ElicitAccept, Fields: []string{"a", "b"}}, `answered "Q?" (a, b)`},
		{domain.ElicitationInfo{Message: "Q?", Action: domain.ElicitDecline, Reason: "no answer"}, `declined "Q?": no answer`},
		{domain.ElicitationInfo{Message: "Q?", Action: domain.ElicitUnanswered, Reason: "no policy"}, `did not answer "Q?": no policy`},
		{domain.ElicitationInfo{Message: "Q?", Action: domain.ElicitCancel}, `cancelled "Q?": the turn is ending`},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.info.ElicitationMessage())
	}
}
