package qwen_measure

import (
	"encoding/json"

	"github.com/acpdrive/acpdrive/domain"
)

// record is one line of the chats journal, as far as the source reads it.
type record struct {
	Type          string `json:"type"`
	Subtype       string `json:"subtype"`
	SystemPayload *struct {
		UIEvent *apiResponse `json:"uiEvent"`
	} `json:"systemPayload"`
}

// apiResponse is a ui_telemetry event; a nil counter was absent.
type apiResponse struct {
	Name     string `json:"event.name"`
	Model    string `json:"model"`
	Input    *int64 `json:"input_token_count"`
	Output   *int64 `json:"output_token_count"`
	Cached   *int64 `json:"cached_content_token_count"`
	Thoughts *int64 `json:"thoughts_token_count"`
	Total    *int64 `json:"total_token_count"`
}

const (
	typeUser          = "user"
	typeSystem        = "system"
	subtypeTelemetry  = "ui_telemetry"
	subtypeCheckpoint = "branch_checkpoint"
	eventAPIResponse  = "qwen-code.api_response"
)

// kind is what a journal line means to the source.
type kind int

const (
	kindOther kind = iota
	kindTurnStart
	kindCall
	kindIncompleteCall
	kindTurnEnd
)

// classify decodes one line: its kind, and for a complete call its
// figures and model.
func classify(line []byte) (kind, domain.Usage, string) {
	var r record
	if json.Unmarshal(line, &r) != nil {
		return kindOther, domain.Usage{}, ""
	}
	switch {
	case r.Type == typeUser:
		return kindTurnStart, domain.Usage{}, ""
	case r.Type == typeSystem && r.Subtype == subtypeCheckpoint:
		return kindTurnEnd, domain.Usage{}, ""
	case r.Type == typeSystem && r.Subtype == subtypeTelemetry && r.SystemPayload != nil &&
		r.SystemPayload.UIEvent != nil && r.SystemPayload.UIEvent.Name == eventAPIResponse:
		e := r.SystemPayload.UIEvent
		if e.Input == nil || e.Output == nil || e.Cached == nil || e.Thoughts == nil || e.Total == nil {
			return kindIncompleteCall, domain.Usage{}, ""
		}
		return kindCall, domain.Usage{
			InputTokens:     *e.Input,
			OutputTokens:    *e.Output,
			CacheReadTokens: *e.Cached,
			ReasoningTokens: *e.Thoughts,
			TotalTokens:     *e.Total,
		}, e.Model
	}
	return kindOther, domain.Usage{}, ""
}
