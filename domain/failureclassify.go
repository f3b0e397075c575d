package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// FailureVocabulary is what runtimes say about provider failures: the
// fields, values and exact texts the classification reads
// (docs/behaviour.md#failures). The runtimes' own words are facts of the
// protocol layer, which builds the vocabulary; the domain only applies it.
type FailureVocabulary struct {
	// DataKinds are fields of a JSON-RPC error's data whose string value
	// names a class: field → value → class. A status found beside an
	// overloaded kind refines it.
	DataKinds map[string]map[string]FailureClass
	// DataInfos are fields of the data whose value names a kind, as a
	// string or as an object keyed by the kind (its status one level
	// down): field → kind (lower case, no underscores) → class.
	DataInfos map[string]map[string]FailureClass
	// Texts are documented error texts, each anchored to the whole
	// message.
	Texts []FailureText
	// StatusTexts are texts whose first group is the provider's status,
	// anchored at the message's start.
	StatusTexts []*regexp.Regexp
	// BodyCodes are a provider JSON error body's "code" or "type" values
	// that name a class.
	BodyCodes map[string]FailureClass
	// BodyMessages are a provider JSON error body's messages that name a
	// class.
	BodyMessages []FailureText
	// Reports are whole-text error reports whose first group is the
	// provider's status; a provider body after ": " refines the class.
	Reports []*regexp.Regexp
	// ReportTexts are the Texts a report may also be.
	ReportTexts []FailureText
	// ReplyRuntimes are the runtimes that report a provider failure as a
	// completed turn whose whole reply is a report.
	ReplyRuntimes []RuntimeVersion
	// ReportFields are data fields whose presence says the data's
	// "message" is a report of that runtime (its kind field naming none).
	ReportFields []string
	// UsageWindows are texts of a spent usage window, each anchored to
	// the whole message; a group named "reset" holds the reset time
	// (ParseResetClock). They are read before the data's kind fields: a
	// runtime may call a spent window a rate limit.
	UsageWindows []FailureText
	// RetryPath is the path in a session_info_update's _meta to a
	// runtime's error object carrying willRetry, message and an info
	// field (RetryInfoField, read as DataInfos).
	RetryPath      []string
	RetryInfoField string
}

// FailureText is one documented text and the class it names.
type FailureText struct {
	// Pattern matches the text, anchored by the pattern itself.
	Pattern *regexp.Regexp
	// Class is the class the text names.
	Class FailureClass
	// Source names who writes the text, for the evidence.
	Source string
}

// RuntimeVersion names a runtime by its agentInfo name (an npm scope
// ignored) and a version prefix.
type RuntimeVersion struct {
	// Name is the agentInfo name without its npm scope.
	Name string
	// VersionPrefix starts every version meant ("2.").
	VersionPrefix string
}

// matches reports whether agent (agentInfo name) and version are r.
func (r RuntimeVersion) matches(agent, version string) bool {
	return agent[strings.LastIndex(agent, "/")+1:] == r.Name && strings.HasPrefix(version, r.VersionPrefix)
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

// sdkPrefix is the ACP SDK's prefix of an internal error's message.
const sdkPrefix = "Internal error: "

// ClassifyRPCError decides the class of a turn a runtime ended with a
// JSON-RPC error (docs/behaviour.md#failures), from, in order: the data's
// kind fields; a documented text or a provider's error body as the whole
// message; an HTTP status (the code when it is one, the data, a status
// text); ACP's -32000; a runtime's report in the data's message. Nothing
// else: unknown. retry_after is read from the data, on a retryable class
// only.
func (v FailureVocabulary) ClassifyRPCError(e RPCError) Failure {
	return v.ClassifyRPCErrorAt(e, time.Time{}, nil)
}

// ClassifyRPCErrorAt is ClassifyRPCError that also reads a spent usage
// window's reset (UsageWindows) first: the class quota_exhausted, with
// retry_after the wait from now to the reset, its zone found by zones
// (docs/behaviour.md#usage-windows). A zero now reads the window without
// its reset.
func (v FailureVocabulary) ClassifyRPCErrorAt(e RPCError, now time.Time, zones ZoneResolver) Failure {
	data := decodeObject(e.Data)
	msg := errorText(e.Message)
	status, where := v.statusIn(data), "in the error data"
	if status == 0 {
		status, where = v.statusInText(msg), "in the error's text"
	}
	if status == 0 && e.Code >= 400 && e.Code <= 599 {
		status, where = int(e.Code), "as the error code"
	}
	if f, ok := v.classifyUsageWindow(msg, status, now, zones); ok {
		return f
	}
	f, ok := v.classifyData(data, status)
	var google GoogleError
	if !ok {
		var isGoogle bool
		if google, isGoogle = ParseGoogleError(msg); isGoogle {
			if c, ev, found := google.Class(); found {
				f, ok = newFailure(c, max(status, google.Code), ev+" in the provider's error body"), true
			}
		}
	}
	if !ok {
		f, ok = classifyTexts(v.Texts, msg, status)
	}
	if !ok {
		if c, found := v.classifyBody(msg); found {
			f, ok = newFailure(c, status, "the provider's error body in the message"), true
		}
	}
	if !ok {
		if c, found := ClassOfStatus(status); found {
			f, ok = newFailure(c, status, fmt.Sprintf("HTTP status %d %s", status, where)), true
		}
	}
	if !ok && e.Code == codeAuthRequired {
		f, ok = newFailure(FailureAuthFailed, status, "error code -32000 (Authentication required)"), true
	}
	if !ok {
		if s, isStr := stringField(data, "message"); isStr && v.reportData(data) {
			if c, st, found := v.classifyReport(strings.TrimSpace(s)); found {
				f, ok = newFailure(c, max(st, status), "the runtime's report in the error data "+strconv.Quote(TruncateRunes(s, 120))), true
			}
		}
	}
	if !ok {
		f = UnknownFailure(KindResponseError, fmt.Sprintf("error code %d", e.Code))
		f.ProviderStatus = status
	}
	if f.Retryable {
		f.RetryAfter = retryAfterIn(data)
		if f.RetryAfter == 0 {
			f.RetryAfter = google.RetryDelay
		}
	}
	return f
}

// reportData reports whether the data carries one of ReportFields.
func (v FailureVocabulary) reportData(data map[string]json.RawMessage) bool {
	for _, k := range v.ReportFields {
		if _, ok := data[k]; ok {
			return true
		}
	}
	return false
}

// classifyData reads the kind fields of the data.
func (v FailureVocabulary) classifyData(data map[string]json.RawMessage, status int) (Failure, bool) {
	for _, field := range sortedKeys(v.DataKinds) {
		kind, ok := stringField(data, field)
		if !ok {
			continue
		}
		if c, known := v.DataKinds[field][kind]; known {
			if st, byStatus := ClassOfStatus(status); byStatus && c == FailureOverloaded {
				c = st
			}
			return newFailure(c, status, "error data "+field+" "+strconv.Quote(kind)), true
		}
	}
	for _, field := range sortedKeys(v.DataInfos) {
		raw, ok := data[field]
		if !ok {
			continue
		}
		if c, ev, found := classifyInfo(v.DataInfos[field], raw, status); found {
			return newFailure(c, status, "error data "+field+" "+ev), true
		}
	}
	return Failure{}, false
}

// classifyInfo reads a kind field's value: a string, or an object whose
// one key names the kind (a status beside it decides first).
func classifyInfo(kinds map[string]FailureClass, raw json.RawMessage, status int) (FailureClass, string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if c, ok := kinds[normalKey(s)]; ok {
			return c, strconv.Quote(s), true
		}
		if st, byStatus := ClassOfStatus(status); byStatus {
			return st, strconv.Quote(s), true
		}
		return "", "", false
	}
	for k := range decodeObject(raw) {
		if st, byStatus := ClassOfStatus(status); byStatus {
			return st, strconv.Quote(k), true
		}
		if c, ok := kinds[normalKey(k)]; ok {
			return c, strconv.Quote(k), true
		}
	}
	return "", "", false
}

// classifyTexts matches texts against the whole of msg.
func classifyTexts(texts []FailureText, msg string, status int) (Failure, bool) {
	for _, t := range texts {
		if t.Pattern.MatchString(msg) {
			return newFailure(t.Class, status, t.Source+" text "+strconv.Quote(TruncateRunes(msg, 120))), true
		}
	}
	return Failure{}, false
}

// errorText is a JSON-RPC message without the ACP SDK's "Internal error: "
// prefix, trimmed.
func errorText(msg string) string {
	msg = strings.TrimSpace(msg)
	if rest, ok := strings.CutPrefix(msg, sdkPrefix); ok {
		return strings.TrimSpace(rest)
	}
	return msg
}

// statusInText is the provider status one of StatusTexts names, 0 when
// none does.
func (v FailureVocabulary) statusInText(msg string) int {
	for _, re := range v.StatusTexts {
		if m := re.FindStringSubmatch(msg); m != nil {
			st, _ := strconv.Atoi(m[1])
			return st
		}
	}
	return 0
}

// ClassifyReply decides whether the reply of a turn that ended end_turn
// is, whole, an error report of the runtime named agent, version version
// (docs/behaviour.md#failure-replies): only a runtime of ReplyRuntimes
// reports so; any other runtime's reply is never a failure. ok is false
// for a reply that is not one of its reports.
func (v FailureVocabulary) ClassifyReply(agent, version, reply string) (Failure, bool) {
	known := false
	for _, r := range v.ReplyRuntimes {
		known = known || r.matches(agent, version)
	}
	text := strings.TrimSpace(reply)
	if !known || text == "" {
		return Failure{}, false
	}
	if c, st, found := v.classifyReport(text); found {
		return newFailure(c, st, agent+" "+version+" reply "+strconv.Quote(TruncateRunes(text, 120))), true
	}
	return Failure{}, false
}

// classifyReport matches a runtime's whole-text report: a status report,
// a provider's JSON error body, or one of ReportTexts. status is 0 when
// the text names none.
func (v FailureVocabulary) classifyReport(text string) (c FailureClass, status int, ok bool) {
	for _, re := range v.Reports {
		m := re.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		st, _ := strconv.Atoi(m[1])
		if c, ok = ClassOfStatus(st); !ok {
			c = FailureUnknown
		}
		if _, body, cut := strings.Cut(text, ": "); cut {
			if inner, found := v.classifyBody(body); found {
				c = inner
			}
		}
		return c, st, true
	}
	if c, found := v.classifyBody(text); found {
		return c, 0, true
	}
	if f, found := classifyTexts(v.ReportTexts, text, 0); found {
		return f.Class, 0, true
	}
	return "", 0, false
}

// classifyBody reads a provider's JSON error body, whole:
// {"error":{"message":…,"code"?,"type"?}}.
func (v FailureVocabulary) classifyBody(text string) (FailureClass, bool) {
	inner := decodeObject(decodeObject([]byte(text))["error"])
	if inner == nil {
		return "", false
	}
	for _, key := range []string{"code", "type"} {
		if s, ok := stringField(inner, key); ok {
			if c, known := v.BodyCodes[s]; known {
				return c, true
			}
		}
	}
	msg, _ := stringField(inner, "message")
	if f, ok := classifyTexts(v.BodyMessages, msg, 0); ok {
		return f.Class, true
	}
	return "", false
}

// ClassifyFailureMarker reads the session failure extension's record on a
// prompt response's _meta: a record of severity error is the turn's
// failure, whatever the stop reason and the reply say (the marker wins,
// docs/behaviour.md#failures). ok is false when there is none.
func (v FailureVocabulary) ClassifyFailureMarker(meta []byte) (Failure, bool) {
	a, ok := sessionFailureIn(meta)
	if !ok || a.Severity != "error" {
		return Failure{}, false
	}
	c := a.class()
	status := v.statusInText(a.Title)
	evidence := fmt.Sprintf("session failure extension: category %q, %q", a.Category, TruncateRunes(a.Title, 120))
	if c == FailureUnknown {
		// The record's title is the runtime's error text: a documented
		// one names the class the category does not.
		if t, found := classifyTexts(v.Texts, a.Title, status); found {
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

var (
	attemptOf   = regexp.MustCompile(`(\d+)\s*/\s*(\d+)`)
	attemptOfNM = regexp.MustCompile(`attempt (\d+) of (\d+)`)
)

// ClassifyRetrySignal reads a session_info_update's _meta for a runtime's
// announcement that it is retrying a provider failure: the error object
// at RetryPath with willRetry true ("Reconnecting... n/m", its info field
// and status), and the session failure extension's record of severity
// warning ("… attempt n of m."). ok is false for anything else.
func (v FailureVocabulary) ClassifyRetrySignal(meta []byte) (RuntimeRetry, bool) {
	if len(v.RetryPath) > 0 {
		obj := decodeObject(meta)
		for _, k := range v.RetryPath {
			obj = decodeObject(obj[k])
		}
		if obj != nil {
			return v.retryOf(obj)
		}
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

// retryOf reads a runtime's error object with willRetry.
func (v FailureVocabulary) retryOf(obj map[string]json.RawMessage) (RuntimeRetry, bool) {
	var will bool
	if json.Unmarshal(obj["willRetry"], &will) != nil || !will {
		return RuntimeRetry{}, false
	}
	msg, _ := stringField(obj, "message")
	status := v.statusIn(obj)
	r := RuntimeRetry{Class: FailureStreamDropped, ProviderStatus: status, Evidence: TruncateRunes(msg, 200)}
	if info, ok := obj[v.RetryInfoField]; ok && v.RetryInfoField != "" {
		if c, _, found := classifyInfo(v.DataInfos[v.RetryInfoField], info, status); found {
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

// The session failure extension (JetBrains AIR's sessionFailure, version
// 1): `_meta.jetbrains.air.sessionFailure` on a session_info_update or on
// a prompt's response.
type airFailure struct {
	Category string   `json:"category"`
	Severity string   `json:"severity"`
	Title    string   `json:"title"`
	Actions  []string `json:"actions"`
}

// sessionFailureIn finds the extension's record in a _meta object.
func sessionFailureIn(meta []byte) (airFailure, bool) {
	air := decodeObject(decodeObject(meta)["jetbrains"])
	raw, ok := decodeObject(air["air"])["sessionFailure"]
	var f airFailure
	if !ok || json.Unmarshal(raw, &f) != nil || f.Category == "" {
		return airFailure{}, false
	}
	return f, true
}

// class maps the extension's category and actions onto a class: access
// auth_failed; limit with retry rate_limited, with new_session
// context_overflow, a warning rate_limited, else quota_exhausted; service
// overloaded; connection stream_dropped; anything else unknown.
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

// statusKeys are the fields that carry an HTTP status.
var statusKeys = []string{"httpStatusCode", "http_status_code", "status", "statusCode", "status_code"}

// statusIn finds an HTTP status in an error's data: at its top level, or
// inside an info field (DataInfos), one or two levels down
// ({"kind":{"httpStatusCode":429}}).
func (v FailureVocabulary) statusIn(data map[string]json.RawMessage) int {
	if st := statusAt(data); st != 0 {
		return st
	}
	for _, key := range sortedKeys(v.DataInfos) {
		inner := decodeObject(data[key])
		if st := statusAt(inner); st != 0 {
			return st
		}
		for _, val := range inner {
			if st := statusAt(decodeObject(val)); st != 0 {
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

// sortedKeys are m's keys in order, so a classification never depends on
// map order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
