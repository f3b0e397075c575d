package refagent

import "encoding/json"

// Provider failures as the runtimes measured report them
// (docs/reference-agent.md#provider-failures): one named turn per failure
// class, so a person sees each class without a script.
const (
	// geminiRetryInfoBody is a Gemini API 429 whose RetryInfo asks for 17 s.
	geminiRetryInfoBody = `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"17s"}]}}`
	// geminiKeyInvalidBody is the Gemini API's answer to an expired key.
	geminiKeyInvalidBody = `{"error":{"code":400,"message":"API key expired. Please renew the API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}}]}}`
	// claudeRetryWarning is the session failure extension's record of the
	// Claude adapter 0.101.0 retrying a rate limit.
	claudeRetryWarning = `{"sessionUpdate":"session_info_update","_meta":{"jetbrains":{"air":{"version":1,"sessionFailure":{"id":"t:error","revision":1,"category":"limit","severity":"warning","title":"Retrying Claude, attempt 1 of 10.","actions":[]}}}}}`
)

// failureError is a turn that answers the prompt with one JSON-RPC error.
func failureError(description string, code int, message, data string) *Turn {
	e := &RPCError{Code: code, Message: message}
	if data != "" {
		e.Data = json.RawMessage(data)
	}
	return &Turn{Description: description, Steps: []Step{{Step: StepError, Error: e}}}
}

// failureTurns are the named turns of the provider failures.
func failureTurns() map[string]*Turn {
	return map[string]*Turn{
		"failure-rate-limit": failureError(
			"Answers the prompt as Gemini CLI does a rate limit whose RetryInfo asks for 17 s: error 429, the provider's body as the message (rate_limited, retryable, retry_after 17 s).",
			429, geminiRetryInfoBody, ""),
		"failure-overloaded": failureError(
			"Answers the prompt as the Claude adapter does repeated 529s: -32603 \"Internal error: API Error: Repeated 529 Overloaded errors. …\", data errorKind server_error (overloaded, retryable).",
			codeInternalError, "Internal error: API Error: Repeated 529 Overloaded errors. The API is at capacity — this is usually temporary. Try again in a moment.", `{"errorKind":"server_error"}`),
		"failure-quota": failureError(
			"Answers the prompt as the Claude adapter does a spent credit: -32603 \"Internal error: Credit balance is too low\", data errorKind billing_error (quota_exhausted, not retryable).",
			codeInternalError, "Internal error: Credit balance is too low", `{"errorKind":"billing_error"}`),
		"failure-credentials": failureError(
			"Answers the prompt as Gemini CLI does an expired API key: error 400, the provider's body with google.rpc.ErrorInfo reason API_KEY_INVALID (auth_failed, not retryable).",
			400, geminiKeyInvalidBody, ""),
		"failure-context-overflow": failureError(
			"Answers the prompt as Claude Code does an overlong prompt: -32603 \"Internal error: Prompt is too long: 208310 tokens > 200000 maximum\" (context_overflow, not retryable).",
			codeInternalError, "Internal error: Prompt is too long: 208310 tokens > 200000 maximum", `{"errorKind":"invalid_request"}`),
		"failure-usage-window": failureError(
			"Answers the prompt as the Claude adapter does a spent 5-hour window: -32603 \"Internal error: You've hit your 5-hour limit · resets 5:32pm (UTC)\", data errorKind rate_limit (quota_exhausted, retryable after the reset, retry_after to the next 17:32 UTC).",
			codeInternalError, "Internal error: You've hit your 5-hour limit · resets 5:32pm (UTC)", `{"errorKind":"rate_limit"}`),
		"failure-retrying": {
			Description: "Announces a retry as the Claude adapter does with the session failure extension (a session_info_update whose warning record says \"Retrying Claude, attempt 1 of 10.\", category limit), then waits for session/cancel: a turn bound ends it rate_limited.",
			Steps:       []Step{{Step: StepUpdate, Update: json.RawMessage(claudeRetryWarning)}, {Step: StepWaitCancel}},
		},
	}
}
