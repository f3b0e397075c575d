package claude_measure

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/journaltail"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

var _ ports.RetryJournal = (*measurement)(nil)

// apiErrorRecord is Claude Code's record of an API error it is about to
// retry (type system, subtype api_error): its retry delay, attempt and
// limit, and the error. The adapter 0.101.0 keeps it in the transcript,
// the error as {message, status, rateLimits {rateLimitType,
// resetsAt}|null, …}; 0.23.1 makes it with the SDK's error object
// {status, error {error {type, message}}, …} but keeps none in the
// transcript (measured; docs/behaviour.md#runtime-retrying).
type apiErrorRecord struct {
	Type         string  `json:"type"`
	Subtype      string  `json:"subtype"`
	RetryInMs    float64 `json:"retryInMs"`
	RetryAttempt int     `json:"retryAttempt"`
	MaxRetries   int     `json:"maxRetries"`
	Error        struct {
		Message    string `json:"message"`
		Status     int    `json:"status"`
		RateLimits *struct {
			RateLimitType string  `json:"rateLimitType"`
			ResetsAt      float64 `json:"resetsAt"`
		} `json:"rateLimits"`
		Body *struct {
			Error *struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		} `json:"error"`
	} `json:"error"`
}

// bodyTypes are the Anthropic error types a body without a status names.
var bodyTypes = map[string]domain.FailureClass{
	"rate_limit_error":      domain.FailureRateLimited,
	"overloaded_error":      domain.FailureOverloaded,
	"api_error":             domain.FailureOverloaded,
	"authentication_error":  domain.FailureAuthFailed,
	"permission_error":      domain.FailureAuthFailed,
	"billing_error":         domain.FailureQuotaExhausted,
	"request_too_large":     domain.FailureContextOverflow,
	"invalid_request_error": domain.FailureUnknown,
}

// retryOf reads one api_error record as the runtime's retry: the class of
// its status (or its body's type; none: the connection dropped), a 429
// naming a usage window with a reset after now quota_exhausted with the
// wait to it.
func retryOf(r apiErrorRecord, now time.Time) domain.RuntimeRetry {
	e := r.Error
	out := domain.RuntimeRetry{Attempt: r.RetryAttempt, MaxAttempts: r.MaxRetries, WaitMS: int64(r.RetryInMs), ProviderStatus: e.Status}
	msg := e.Message
	class, known := domain.ClassOfStatus(e.Status)
	if e.Body != nil && e.Body.Error != nil {
		if msg == "" {
			msg = e.Body.Error.Message
		}
		if c, ok := bodyTypes[e.Body.Error.Type]; ok && !known {
			class, known = c, true
		}
	}
	switch {
	case known:
	case e.Status == 0:
		// No answer at all: a connection error or a timeout.
		class = domain.FailureStreamDropped
	default:
		class = domain.FailureUnknown
	}
	out.Class = class
	words := "API error"
	if e.Status != 0 {
		words += " " + strconv.Itoa(e.Status)
	}
	if rl := e.RateLimits; e.Status == 429 && rl != nil && rl.RateLimitType != "" && rl.ResetsAt > 0 {
		reset := time.Unix(int64(rl.ResetsAt), 0)
		if wait := reset.Sub(now); wait > 0 {
			out.Class, out.RetryAfterMS = domain.FailureQuotaExhausted, wait.Milliseconds()
			words += fmt.Sprintf(", usage window %s resets at %s", rl.RateLimitType, reset.UTC().Format(time.RFC3339))
		}
	}
	if msg != "" {
		words += ": " + domain.TruncateRunes(msg, 120)
	}
	out.Evidence = "Claude Code's transcript: " + words
	return out
}

// apiErrors reads the api_error records of data's whole lines that follow
// the last change of promptId from prompt (the running turn's), oldest
// first.
func apiErrors(data []byte, prompt string, now time.Time) []domain.RuntimeRetry {
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 || !bytes.Contains(data, []byte(`"api_error"`)) {
		return nil
	}
	var retries []domain.RuntimeRetry
	for line := range bytes.SplitSeq(data[:end], []byte{'\n'}) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || !bytes.Contains(line, []byte(`"api_error"`)) && !bytes.Contains(line, []byte(`"promptId"`)) {
			continue
		}
		var head record
		if json.Unmarshal(line, &head) != nil {
			continue
		}
		if head.Type == "user" && head.PromptID != "" && head.PromptID != prompt {
			retries, prompt = nil, head.PromptID
			continue
		}
		var r apiErrorRecord
		if json.Unmarshal(line, &r) != nil || r.Type != "system" || r.Subtype != "api_error" {
			continue
		}
		retries = append(retries, retryOf(r, now))
	}
	return retries
}

// TurnRetries implements ports.RetryJournal: the api_error records of the
// session's transcript since the last settled turn.
func (m *measurement) TurnRetries(sessionID string, now time.Time) []domain.RuntimeRetry {
	if !journaltail.ValidID(sessionID) {
		return nil
	}
	m.mu.Lock()
	st := m.sessions[sessionID]
	var path, prompt string
	var offset int64
	if st != nil {
		path, prompt, offset = st.path, st.lastPrompt, st.offset
	}
	m.mu.Unlock()
	if path == "" {
		path = m.find(sessionID)
	}
	if path == "" {
		return nil
	}
	data, err := readFrom(path, offset)
	if err != nil {
		m.log.Debug("transcript not readable for the runtime's retries", "session_id", sessionID, "path", path, "error", err)
		return nil
	}
	return apiErrors(data, prompt, now)
}
