package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// FailureClass names the provider failure behind a turn that did not
// complete (docs/behaviour.md#failures). Its values are contract strings.
type FailureClass string

// Failure classes (docs/behaviour.md#failures).
const (
	// FailureRateLimited: the provider limited the request rate (HTTP
	// 429); retry after the limit resets.
	FailureRateLimited FailureClass = "rate_limited"
	// FailureOverloaded: the provider's side is overloaded or failing
	// (HTTP 5xx, Anthropic 529); retry soon.
	FailureOverloaded FailureClass = "overloaded"
	// FailureQuotaExhausted: the account's quota, credit or usage limit is
	// spent; a retry cannot help until a person acts.
	FailureQuotaExhausted FailureClass = "quota_exhausted"
	// FailureAuthFailed: the credential is missing, invalid or expired; a
	// retry cannot help until a person acts.
	FailureAuthFailed FailureClass = "auth_failed"
	// FailureContextOverflow: the conversation outgrew the model's context
	// window; a retry on the same session cannot help, a fresh session can.
	FailureContextOverflow FailureClass = "context_overflow"
	// FailureStreamDropped: the model's stream or the connection to the
	// provider dropped mid-turn; retry.
	FailureStreamDropped FailureClass = "stream_dropped"
	// FailureUnknown: nothing the runtime sent names a provider failure.
	FailureUnknown FailureClass = "unknown"
)

// Retryable reports whether a failure of this class may be retried: quota,
// credentials and context overflow may not; unknown may (its error kind
// decides, see TurnResult.Retryable).
func (c FailureClass) Retryable() bool {
	switch c {
	case FailureQuotaExhausted, FailureAuthFailed, FailureContextOverflow:
		return false
	default:
		return true
	}
}

// Failure is the class of a turn that did not complete, with what decided
// it (docs/behaviour.md#failures).
type Failure struct {
	// Class is the failure's class.
	Class FailureClass
	// Retryable reports whether retrying the turn can help: the class's
	// rule, and for FailureUnknown the error kind's.
	Retryable bool
	// RetryAfter is the wait the runtime said the provider asked for; zero
	// when the runtime does not expose one (never invented).
	RetryAfter time.Duration
	// ProviderStatus is the provider's HTTP status when the runtime sent
	// it; zero otherwise.
	ProviderStatus int
	// Evidence says what decided the class, in a few words quoting the
	// runtime (an error code, a data field, a documented text).
	Evidence string
}

// failureJSON is the wire shape of a Failure in --json output.
type failureJSON struct {
	Class          FailureClass `json:"class"`
	Retryable      bool         `json:"retryable"`
	RetryAfterMS   int64        `json:"retry_after_ms,omitempty"`
	ProviderStatus int          `json:"provider_status,omitempty"`
	Evidence       string       `json:"evidence"`
}

// MarshalJSON renders {"class","retryable","retry_after_ms"?,
// "provider_status"?,"evidence"} (docs/behaviour.md#failures).
func (f Failure) MarshalJSON() ([]byte, error) {
	return json.Marshal(failureJSON{Class: f.Class, Retryable: f.Retryable,
		RetryAfterMS: f.RetryAfter.Milliseconds(), ProviderStatus: f.ProviderStatus, Evidence: f.Evidence})
}

// UnmarshalJSON reads the shape MarshalJSON writes.
func (f *Failure) UnmarshalJSON(b []byte) error {
	var j failureJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*f = Failure{Class: j.Class, Retryable: j.Retryable, RetryAfter: time.Duration(j.RetryAfterMS) * time.Millisecond,
		ProviderStatus: j.ProviderStatus, Evidence: j.Evidence}
	return nil
}

// Text is the one line a person reads, for example "rate limited by the
// provider (HTTP 429); retryable, after 17s".
func (f Failure) Text() string {
	var b strings.Builder
	b.WriteString(failureWords[f.Class])
	if b.Len() == 0 {
		b.WriteString(string(f.Class))
	}
	if f.ProviderStatus != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", f.ProviderStatus)
	}
	if f.Retryable {
		b.WriteString("; retryable")
		if f.RetryAfter > 0 {
			b.WriteString(", after " + f.RetryAfter.String())
		}
	} else {
		b.WriteString("; not retryable")
	}
	if f.Evidence != "" {
		b.WriteString(" — " + f.Evidence)
	}
	return b.String()
}

var failureWords = map[FailureClass]string{
	FailureRateLimited:     "rate limited by the provider",
	FailureOverloaded:      "the provider is overloaded or failing",
	FailureQuotaExhausted:  "the account's quota or credit is exhausted",
	FailureAuthFailed:      "the credential was refused",
	FailureContextOverflow: "the conversation outgrew the context window",
	FailureStreamDropped:   "the model's stream dropped",
	FailureUnknown:         "failure of no known provider class",
}

// newFailure is a failure of class c with the class's retry rule.
func newFailure(c FailureClass, status int, evidence string) Failure {
	return Failure{Class: c, Retryable: c.Retryable(), ProviderStatus: status, Evidence: evidence}
}

// UnknownFailure is the class of a turn nothing classified: retryable as
// kind is (docs/behaviour.md#errors).
func UnknownFailure(kind ErrorKind, evidence string) Failure {
	return Failure{Class: FailureUnknown, Retryable: kind.Retryable(), Evidence: evidence}
}

// ClassOfStatus maps a provider's HTTP status onto a class: 429
// rate_limited, 401 and 403 auth_failed, 402 quota_exhausted, 413
// context_overflow, 500, 502, 503, 504 and 529 overloaded; ok is false
// for any other.
func ClassOfStatus(status int) (c FailureClass, ok bool) {
	switch status {
	case 429:
		return FailureRateLimited, true
	case 401, 403:
		return FailureAuthFailed, true
	case 402:
		return FailureQuotaExhausted, true
	case 413:
		return FailureContextOverflow, true
	case 500, 502, 503, 504, 529:
		return FailureOverloaded, true
	}
	return "", false
}

// RPCError is what a runtime's JSON-RPC error answer carries.
type RPCError struct {
	// Code is the error's code.
	Code int64
	// Message is the error's message, as sent.
	Message string
	// Data is the error's data, as sent (nil when absent).
	Data []byte
}

// ACP's code for "Authentication required".
const codeAuthRequired = -32000

// errorKinds maps the `errorKind` of an error's data (the Claude adapter,
// 0.101.0: the Claude SDK's assistant error kinds and the adapter's own)
// onto classes.
var errorKinds = map[string]FailureClass{
	"rate_limit":             FailureRateLimited,
	"overloaded":             FailureOverloaded,
	"server_error":           FailureOverloaded,
	"billing_error":          FailureQuotaExhausted,
	"account_on_hold":        FailureQuotaExhausted,
	"authentication_failed":  FailureAuthFailed,
	"oauth_org_not_allowed":  FailureAuthFailed,
	"verification_required":  FailureAuthFailed,
	"cloud_credential_error": FailureAuthFailed,
	"max_output_tokens":      FailureContextOverflow,
	"transport_lost":         FailureStreamDropped,
	"no_result":              FailureStreamDropped,
}

// codexErrorInfos maps codex's `codexErrorInfo` (codex-acp 2.x, camelCase)
// and `codex_error_info` (codex-acp 0.x, snake_case) values, compared with
// underscores removed and lower case, onto classes.
var codexErrorInfos = map[string]FailureClass{
	"contextwindowexceeded":          FailureContextOverflow,
	"usagelimitexceeded":             FailureQuotaExhausted,
	"quotaexceeded":                  FailureQuotaExhausted,
	"ratelimitexceeded":              FailureRateLimited,
	"serveroverloaded":               FailureOverloaded,
	"internalservererror":            FailureOverloaded,
	"unauthorized":                   FailureAuthFailed,
	"httpconnectionfailed":           FailureStreamDropped,
	"responsestreamconnectionfailed": FailureStreamDropped,
	"responsestreamdisconnected":     FailureStreamDropped,
	"responsetoomanyfailedattempts":  FailureStreamDropped,
}

// Exact error texts the runtimes document, each anchored to the whole
// message (after the SDK's "Internal error: " prefix) so an agent's own
// prose is never mistaken for one (docs/behaviour.md#failures).
var errorTexts = []struct {
	re    *regexp.Regexp
	class FailureClass
	who   string
}{
	// The Claude adapter 0.101.0 (TURN_NO_RESULT_MESSAGE).
	{regexp.MustCompile(`^The turn ended without a result: the agent went idle while this prompt was still in flight \(e\.g\. the model stream dropped mid-turn\)\. Any partial output may be incomplete; please retry\.$`), FailureStreamDropped, "claude-agent-acp"},
	// Claude Code's API error texts.
	{regexp.MustCompile(`^Prompt is too long(: \d+ tokens > \d+ maximum| · [^\n]*)?$`), FailureContextOverflow, "Claude Code"},
	{regexp.MustCompile(`^Credit balance is too low$`), FailureQuotaExhausted, "Claude Code"},
	{regexp.MustCompile(`^Invalid API key( · [^\n]*)?$`), FailureAuthFailed, "Claude Code"},
	// Gemini CLI's text (TerminalQuotaError).
	{regexp.MustCompile(`^You have exhausted your daily quota on this model\.$`), FailureQuotaExhausted, "Gemini CLI"},
	// The providers' quota wording (OpenAI, Google), at the start.
	{regexp.MustCompile(`^You exceeded your current quota, please check your plan and billing details\.`), FailureQuotaExhausted, "provider"},
	// codex's own texts.
	{regexp.MustCompile(`^Quota exceeded\. Check your plan and billing details\.$`), FailureQuotaExhausted, "codex"},
	{regexp.MustCompile(`^Codex ran out of room in the model's context window\. Start a new thread or clear earlier history before retrying\.$`), FailureContextOverflow, "codex"},
}

// ClassifyRPCError decides the class of a turn a runtime ended with a
// JSON-RPC error (docs/behaviour.md#failures), from, in order: the data's
// `errorKind`; the data's `codexErrorInfo` or `codex_error_info` (with its
// HTTP status); an HTTP status as the code (Gemini CLI) or in the data;
// ACP's -32000 Authentication required; the runtimes' documented error
// texts, anchored to the whole message. retry_after is read from the data
// where the runtime puts it there. Nothing else: unknown.
func ClassifyRPCError(e RPCError) Failure {
	data := decodeObject(e.Data)
	status, where := statusIn(data), "in the error data"
	if status == 0 {
		status, where = statusInText(errorText(e.Message)), "in the error's text"
	}
	if status == 0 && e.Code >= 400 && e.Code <= 599 {
		status = int(e.Code)
	}
	f, ok := classifyData(data, status)
	if !ok {
		// A documented text or a provider's error body in the message
		// names the class more precisely than a status (a 429 that is an
		// exhausted quota).
		f, ok = classifyText(errorText(e.Message), status)
	}
	if !ok {
		if c, found := classifyBody(errorText(e.Message)); found {
			f, ok = newFailure(c, status, "the provider's error body in the message"), true
		}
	}
	if !ok {
		f, ok = classifyStatus(e.Code, status, where)
	}
	if !ok && e.Code == codeAuthRequired {
		f, ok = newFailure(FailureAuthFailed, status, "error code -32000 (Authentication required)"), true
	}
	if !ok {
		if s, isStr := stringField(data, "message"); isStr {
			f, ok = classifyText(s, status)
			_, codex := data["codex_error_info"]
			if _, codex2 := data["codexErrorInfo"]; !ok && (codex || codex2) {
				// codex-acp 0.x puts codex's own text in the data's
				// message, its codex_error_info "other".
				if c, st, found := codexText(strings.TrimSpace(s)); found {
					f, ok = newFailure(c, max(st, status), "codex text "+strconv.Quote(TruncateRunes(s, 120))), true
				}
			}
		}
	}
	if !ok {
		f = UnknownFailure(KindResponseError, fmt.Sprintf("error code %d", e.Code))
		f.ProviderStatus = status
	}
	if f.Retryable {
		f.RetryAfter = retryAfterIn(data)
	}
	return f
}

// Claude Code's API error texts that name the provider's status, anchored
// at the start of the message.
var statusTexts = []*regexp.Regexp{
	regexp.MustCompile(`^API Error: Request rejected \((\d{3})\)`),
	regexp.MustCompile(`^API Error: Repeated (\d{3}) Overloaded errors\.`),
	regexp.MustCompile(`^API Error: (\d{3}) `),
}

// statusInText is the provider status one of statusTexts names, 0 when
// none does.
func statusInText(msg string) int {
	for _, re := range statusTexts {
		if m := re.FindStringSubmatch(msg); m != nil {
			st, _ := strconv.Atoi(m[1])
			return st
		}
	}
	return 0
}

// classifyData reads errorKind and codexErrorInfo.
func classifyData(data map[string]json.RawMessage, status int) (Failure, bool) {
	if kind, ok := stringField(data, "errorKind"); ok {
		if c, known := errorKinds[kind]; known {
			if st, byStatus := ClassOfStatus(status); byStatus && c == FailureOverloaded {
				c = st
			}
			return newFailure(c, status, "error data errorKind "+strconv.Quote(kind)), true
		}
	}
	for _, key := range []string{"codexErrorInfo", "codex_error_info"} {
		raw, ok := data[key]
		if !ok {
			continue
		}
		if c, ev, found := classifyCodexInfo(raw, status); found {
			return newFailure(c, status, "error data "+key+" "+ev), true
		}
	}
	return Failure{}, false
}

// classifyCodexInfo reads a codexErrorInfo value: a string, or an object
// whose one key names the kind and whose value may carry the status.
func classifyCodexInfo(raw json.RawMessage, status int) (FailureClass, string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		c, ok := codexErrorInfos[normalKey(s)]
		if !ok {
			if st, byStatus := ClassOfStatus(status); byStatus {
				return st, strconv.Quote(s), true
			}
		}
		return c, strconv.Quote(s), ok
	}
	obj := decodeObject(raw)
	for k := range obj {
		if st, byStatus := ClassOfStatus(status); byStatus {
			return st, strconv.Quote(k), true
		}
		if c, ok := codexErrorInfos[normalKey(k)]; ok {
			return c, strconv.Quote(k), true
		}
	}
	return "", "", false
}

// classifyStatus takes the code as an HTTP status (Gemini CLI answers with
// the provider's status as the error code) or a status found in the data.
func classifyStatus(code int64, status int, where string) (Failure, bool) {
	if code >= 400 && code <= 599 {
		if c, ok := ClassOfStatus(int(code)); ok {
			return newFailure(c, int(code), fmt.Sprintf("error code %d (the provider's HTTP status)", code)), true
		}
	}
	if c, ok := ClassOfStatus(status); ok {
		return newFailure(c, status, fmt.Sprintf("HTTP status %d %s", status, where)), true
	}
	return Failure{}, false
}

// classifyText matches the documented texts.
func classifyText(msg string, status int) (Failure, bool) {
	for _, t := range errorTexts {
		if t.re.MatchString(msg) {
			return newFailure(t.class, status, t.who+" text "+strconv.Quote(TruncateRunes(msg, 120))), true
		}
	}
	return Failure{}, false
}

// errorText is a JSON-RPC message without the ACP SDK's "Internal error: "
// prefix.
func errorText(msg string) string {
	msg = strings.TrimSpace(msg)
	if rest, ok := strings.CutPrefix(msg, "Internal error: "); ok {
		return strings.TrimSpace(rest)
	}
	return msg
}

// Reply texts of codex-acp 2.x, which reports a provider failure as a
// completed turn whose reply is the error's text
// (docs/behaviour.md#failures). Each is anchored to the whole reply.
var (
	replyRetryLimit = regexp.MustCompile(`^exceeded retry limit, last status: (\d{3})[^\n]*$`)
	replyStatus     = regexp.MustCompile(`(?s)^unexpected status (\d{3})( [A-Za-z ]+)?: .*$`)
)

// ClassifyReply decides whether the reply of a turn that ended end_turn
// is, whole, an error report of the runtime named agent, version version
// (docs/behaviour.md#failures). Only codex-acp 2.x does this (agentInfo
// name "@agentclientprotocol/codex-acp"); any other runtime's reply is
// never a failure. ok is false for a reply that is not
// one of its exact texts.
func ClassifyReply(agent, version, reply string) (Failure, bool) {
	if agent[strings.LastIndex(agent, "/")+1:] != "codex-acp" || !strings.HasPrefix(version, "2.") {
		return Failure{}, false
	}
	text := strings.TrimSpace(reply)
	if text == "" {
		return Failure{}, false
	}
	evidence := "codex-acp " + version + " reply " + strconv.Quote(TruncateRunes(text, 120))
	if c, st, found := codexText(text); found {
		return newFailure(c, st, evidence), true
	}
	return Failure{}, false
}

// codexText matches codex's own failure texts, each anchored to the whole
// text: "exceeded retry limit, last status: <status> …", "unexpected
// status <status> <reason>: <body>", a provider's JSON error body, and
// codex's quota and context-window texts. status is 0 when the text names
// none.
func codexText(text string) (c FailureClass, status int, ok bool) {
	if m := replyRetryLimit.FindStringSubmatch(text); m != nil {
		st, _ := strconv.Atoi(m[1])
		if c, ok = ClassOfStatus(st); !ok {
			c = FailureUnknown
		}
		return c, st, true
	}
	if m := replyStatus.FindStringSubmatch(text); m != nil {
		st, _ := strconv.Atoi(m[1])
		if c, ok = ClassOfStatus(st); !ok {
			c = FailureUnknown
		}
		if body := strings.SplitN(text, ": ", 2); len(body) == 2 {
			if inner, found := classifyBody(body[1]); found {
				c = inner
			}
		}
		return c, st, true
	}
	if c, found := classifyBody(text); found {
		return c, 0, true
	}
	if f, found := classifyText(text, 0); found && strings.HasPrefix(f.Evidence, "codex ") {
		return f.Class, 0, true
	}
	return "", 0, false
}

// Provider error bodies whose message names the class: OpenAI's context
// overflow and quota messages.
var bodyMessages = []struct {
	re    *regexp.Regexp
	class FailureClass
}{
	{regexp.MustCompile(`^Your input exceeds the context window of this model\.`), FailureContextOverflow},
	{regexp.MustCompile(`^You exceeded your current quota`), FailureQuotaExhausted},
	{regexp.MustCompile(`^The input token count \(\d+\) exceeds the maximum number of tokens allowed \(\d+\)\.$`), FailureContextOverflow},
}

// classifyBody reads a provider's JSON error body, whole:
// {"error":{"message":…,"code"?,"type"?}}.
func classifyBody(text string) (FailureClass, bool) {
	obj := decodeObject([]byte(text))
	inner := decodeObject(obj["error"])
	if inner == nil {
		return "", false
	}
	for _, key := range []string{"code", "type"} {
		switch s, _ := stringField(inner, key); s {
		case "context_length_exceeded":
			return FailureContextOverflow, true
		case "insufficient_quota":
			return FailureQuotaExhausted, true
		case "rate_limit_exceeded", "rate_limit_error":
			return FailureRateLimited, true
		case "overloaded_error", "server_error":
			return FailureOverloaded, true
		}
	}
	msg, _ := stringField(inner, "message")
	for _, b := range bodyMessages {
		if b.re.MatchString(msg) {
			return b.class, true
		}
	}
	return "", false
}

// decodeObject decodes a JSON object; nil when b is not one.
func decodeObject(b []byte) map[string]json.RawMessage {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

// stringField is obj[key] when it is a JSON string.
func stringField(obj map[string]json.RawMessage, key string) (string, bool) {
	raw, ok := obj[key]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// numberField is obj[key] when it is a JSON number.
func numberField(obj map[string]json.RawMessage, key string) (float64, bool) {
	raw, ok := obj[key]
	if !ok {
		return 0, false
	}
	var n float64
	if json.Unmarshal(raw, &n) != nil {
		return 0, false
	}
	return n, true
}

// statusKeys are the data fields that carry an HTTP status.
var statusKeys = []string{"httpStatusCode", "http_status_code", "status", "statusCode", "status_code"}

// statusIn finds an HTTP status in the error's data: at its top level, or
// one level down (codexErrorInfo's {"kind":{"httpStatusCode":429}}).
func statusIn(data map[string]json.RawMessage) int {
	if st := statusAt(data); st != 0 {
		return st
	}
	for _, key := range []string{"codexErrorInfo", "codex_error_info"} {
		inner := decodeObject(data[key])
		if st := statusAt(inner); st != 0 {
			return st
		}
		for _, v := range inner {
			if st := statusAt(decodeObject(v)); st != 0 {
				return st
			}
		}
	}
	return 0
}

func statusAt(obj map[string]json.RawMessage) int {
	for _, key := range statusKeys {
		if n, ok := numberField(obj, key); ok && n >= 100 && n <= 599 {
			return int(n)
		}
	}
	return 0
}

// retryAfterIn reads a retry-after the runtime put in the error's data:
// milliseconds under retryAfterMs or retry_after_ms, seconds under
// retryAfter or retry_after. Zero when absent.
func retryAfterIn(data map[string]json.RawMessage) time.Duration {
	for _, key := range []string{"retryAfterMs", "retry_after_ms"} {
		if n, ok := numberField(data, key); ok && n > 0 {
			return time.Duration(n * float64(time.Millisecond))
		}
	}
	for _, key := range []string{"retryAfter", "retry_after"} {
		if n, ok := numberField(data, key); ok && n > 0 {
			return time.Duration(n * float64(time.Second))
		}
	}
	return 0
}

func normalKey(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }

// The session failure extension (JetBrains AIR's sessionFailure, offered
// by the Claude adapter 0.101.0 and codex-acp 2.6.0 to a client that
// declares it): `_meta.jetbrains.air.sessionFailure` on a
// session_info_update or on the prompt's response.
type airFailure struct {
	Category string   `json:"category"`
	Severity string   `json:"severity"`
	Title    string   `json:"title"`
	Details  string   `json:"details"`
	Actions  []string `json:"actions"`
}

// sessionFailureIn finds the extension's record in a _meta object.
func sessionFailureIn(meta []byte) (airFailure, bool) {
	air := decodeObject(decodeObject(meta)["jetbrains"])
	rec := decodeObject(decodeObject(air["air"])["sessionFailure"])
	if rec == nil {
		return airFailure{}, false
	}
	var f airFailure
	raw, _ := json.Marshal(rec)
	if json.Unmarshal(raw, &f) != nil || f.Category == "" {
		return airFailure{}, false
	}
	return f, true
}

// class maps the extension's category and actions onto a class: access
// auth_failed; limit with retry rate_limited, with new_session
// context_overflow, with neither quota_exhausted; service overloaded;
// connection stream_dropped; anything else unknown.
func (a airFailure) class() FailureClass {
	has := func(action string) bool {
		for _, x := range a.Actions {
			if x == action {
				return true
			}
		}
		return false
	}
	switch a.Category {
	case "access":
		return FailureAuthFailed
	case "limit":
		switch {
		case has("retry"):
			return FailureRateLimited
		case has("new_session"):
			return FailureContextOverflow
		case a.Severity == "warning":
			return FailureRateLimited
		default:
			return FailureQuotaExhausted
		}
	case "service":
		return FailureOverloaded
	case "connection":
		return FailureStreamDropped
	}
	return FailureUnknown
}

// ClassifyFailureMarker reads the session failure extension's record on a
// prompt response's _meta: a record of severity error is the turn's
// failure, whatever the stop reason and the reply say (the marker wins,
// docs/behaviour.md#failures). ok is false when there is none.
func ClassifyFailureMarker(meta []byte) (Failure, bool) {
	a, ok := sessionFailureIn(meta)
	if !ok || a.Severity != "error" {
		return Failure{}, false
	}
	c := a.class()
	status := statusInText(a.Title)
	evidence := fmt.Sprintf("session failure extension: category %q, %q", a.Category, TruncateRunes(a.Title, 120))
	if c == FailureUnknown {
		// The record's title is the runtime's error text: a documented
		// one names the class the category does not.
		if t, found := classifyText(a.Title, status); found {
			c = t.Class
		}
	}
	f := newFailure(c, status, evidence)
	if c == FailureUnknown {
		f.Retryable = false
		for _, x := range a.Actions {
			f.Retryable = f.Retryable || x == "retry"
		}
	}
	return f, true
}

// RuntimeRetry is a runtime's own retry of a provider failure, as it
// announced it (docs/behaviour.md#failures): the runtime_retrying event.
type RuntimeRetry struct {
	// Class is the failure being retried.
	Class FailureClass `json:"class"`
	// Attempt is the retry's number, when the runtime said it (from 1).
	Attempt int `json:"attempt,omitempty"`
	// MaxAttempts is the runtime's own limit, when it said it.
	MaxAttempts int `json:"max_attempts,omitempty"`
	// WaitMS is the wait before the retry, when the runtime said it.
	WaitMS int64 `json:"wait_ms,omitempty"`
	// ProviderStatus is the provider's HTTP status, when sent.
	ProviderStatus int `json:"provider_status,omitempty"`
	// Evidence is the runtime's own words.
	Evidence string `json:"evidence"`
}

// Text is the one line a person reads.
func (r RuntimeRetry) Text() string {
	s := "the runtime is retrying: " + failureWords[r.Class]
	if r.ProviderStatus != 0 {
		s += fmt.Sprintf(" (HTTP %d)", r.ProviderStatus)
	}
	if r.Attempt > 0 {
		s += fmt.Sprintf(", attempt %d", r.Attempt)
		if r.MaxAttempts > 0 {
			s += fmt.Sprintf(" of %d", r.MaxAttempts)
		}
	}
	if r.WaitMS > 0 {
		s += ", waiting " + (time.Duration(r.WaitMS) * time.Millisecond).String()
	}
	return s
}

// Failure is the class of a turn that ended while the runtime was
// retrying this failure (its own bound or the caller's passed).
func (r RuntimeRetry) Failure() Failure {
	return Failure{Class: r.Class, Retryable: r.Class.Retryable(), ProviderStatus: r.ProviderStatus,
		Evidence: "the runtime was retrying when the turn ended: " + TruncateRunes(r.Evidence, 120)}
}

var (
	attemptOf   = regexp.MustCompile(`(\d+)\s*/\s*(\d+)`)
	attemptOfNM = regexp.MustCompile(`attempt (\d+) of (\d+)`)
)

// ClassifyRetrySignal reads a session_info_update's _meta for a runtime's
// announcement that it is retrying a provider failure: codex-acp 2.x's
// `codex.error` with willRetry true ("Reconnecting... n/5", its
// codexErrorInfo and status), and the session failure extension's record
// of severity warning ("Retrying Claude, attempt n of m."). ok is false
// for anything else.
func ClassifyRetrySignal(meta []byte) (RuntimeRetry, bool) {
	m := decodeObject(meta)
	if cerr := decodeObject(decodeObject(m["codex"])["error"]); cerr != nil {
		var will bool
		if json.Unmarshal(cerr["willRetry"], &will) != nil || !will {
			return RuntimeRetry{}, false
		}
		msg, _ := stringField(cerr, "message")
		status := statusIn(cerr)
		r := RuntimeRetry{Class: FailureStreamDropped, ProviderStatus: status, Evidence: TruncateRunes(msg, 200)}
		if info, ok := cerr["codexErrorInfo"]; ok {
			if c, _, found := classifyCodexInfo(info, status); found {
				r.Class = c
			}
		} else if c, ok := ClassOfStatus(status); ok {
			r.Class = c
		}
		if a := attemptOf.FindStringSubmatch(msg); a != nil {
			r.Attempt, _ = strconv.Atoi(a[1])
			r.MaxAttempts, _ = strconv.Atoi(a[2])
		}
		return r, true
	}
	a, ok := sessionFailureIn(meta)
	if !ok || a.Severity != "warning" || a.Category == "unknown" {
		return RuntimeRetry{}, false
	}
	r := RuntimeRetry{Class: a.class(), Evidence: TruncateRunes(a.Title, 200)}
	if n := attemptOfNM.FindStringSubmatch(a.Title); n != nil {
		r.Attempt, _ = strconv.Atoi(n[1])
		r.MaxAttempts, _ = strconv.Atoi(n[2])
	}
	return r, true
}
