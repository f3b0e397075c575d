package acpwire

import (
	"regexp"

	"github.com/acpdrive/acpdrive/domain"
)

// RuntimeFailures is what the runtimes measured say about a provider
// failure (docs/behaviour.md#failures): the data fields and values of
// their JSON-RPC errors, their documented texts (each anchored to the
// whole message), the runtimes that report a failure as a completed
// turn's reply, and where their retry announcements sit. Measured on the
// Claude agent adapter 0.101.0 and 0.23.1 (Claude Code), codex-acp 2.6.0
// and 0.16.0, and Gemini CLI 0.61.0 (see docs/runtimes.md).
var RuntimeFailures = domain.FailureVocabulary{
	DataKinds: map[string]map[string]domain.FailureClass{
		// The Claude adapter 0.101.0: the Claude SDK's assistant error
		// kinds and the adapter's own.
		"errorKind": {
			"rate_limit":             domain.FailureRateLimited,
			"overloaded":             domain.FailureOverloaded,
			"server_error":           domain.FailureOverloaded,
			"billing_error":          domain.FailureQuotaExhausted,
			"account_on_hold":        domain.FailureQuotaExhausted,
			"authentication_failed":  domain.FailureAuthFailed,
			"oauth_org_not_allowed":  domain.FailureAuthFailed,
			"verification_required":  domain.FailureAuthFailed,
			"cloud_credential_error": domain.FailureAuthFailed,
			"max_output_tokens":      domain.FailureContextOverflow,
			"transport_lost":         domain.FailureStreamDropped,
			"no_result":              domain.FailureStreamDropped,
		},
	},
	DataInfos: map[string]map[string]domain.FailureClass{
		// codex-acp 2.x (camelCase) and 0.x (snake_case); kinds compared
		// in lower case without underscores.
		"codexErrorInfo":   codexInfos,
		"codex_error_info": codexInfos,
	},
	Texts: []domain.FailureText{
		{Pattern: regexp.MustCompile(`^The turn ended without a result: the agent went idle while this prompt was still in flight \(e\.g\. the model stream dropped mid-turn\)\. Any partial output may be incomplete; please retry\.$`),
			Class: domain.FailureStreamDropped, Source: "claude-agent-acp"},
		{Pattern: regexp.MustCompile(`^Prompt is too long(: \d+ tokens > \d+ maximum| · [^\n]*)?$`), Class: domain.FailureContextOverflow, Source: "Claude Code"},
		{Pattern: regexp.MustCompile(`^Credit balance is too low$`), Class: domain.FailureQuotaExhausted, Source: "Claude Code"},
		{Pattern: regexp.MustCompile(`^Invalid API key( · [^\n]*)?$`), Class: domain.FailureAuthFailed, Source: "Claude Code"},
		{Pattern: regexp.MustCompile(`^You have exhausted your daily quota on this model\.$`), Class: domain.FailureQuotaExhausted, Source: "Gemini CLI"},
		{Pattern: regexp.MustCompile(`^You exceeded your current quota, please check your plan and billing details\.`), Class: domain.FailureQuotaExhausted, Source: "the provider"},
		codexQuota, codexContext,
	},
	StatusTexts: []*regexp.Regexp{
		// Claude Code's API error texts.
		regexp.MustCompile(`^API Error: Request rejected \((\d{3})\)`),
		regexp.MustCompile(`^API Error: Repeated (\d{3}) Overloaded errors\.`),
		regexp.MustCompile(`^API Error: (\d{3}) `),
	},
	BodyCodes: map[string]domain.FailureClass{
		"context_length_exceeded": domain.FailureContextOverflow,
		"insufficient_quota":      domain.FailureQuotaExhausted,
		"rate_limit_exceeded":     domain.FailureRateLimited,
		"rate_limit_error":        domain.FailureRateLimited,
		"overloaded_error":        domain.FailureOverloaded,
		"server_error":            domain.FailureOverloaded,
	},
	BodyMessages: []domain.FailureText{
		{Pattern: regexp.MustCompile(`^Your input exceeds the context window of this model\.`), Class: domain.FailureContextOverflow, Source: "the provider"},
		{Pattern: regexp.MustCompile(`^You exceeded your current quota`), Class: domain.FailureQuotaExhausted, Source: "the provider"},
		{Pattern: regexp.MustCompile(`^The input token count \(\d+\) exceeds the maximum number of tokens allowed \(\d+\)\.$`), Class: domain.FailureContextOverflow, Source: "the provider"},
	},
	// codex's own reports.
	Reports: []*regexp.Regexp{
		regexp.MustCompile(`^exceeded retry limit, last status: (\d{3})[^\n]*$`),
		regexp.MustCompile(`(?s)^unexpected status (\d{3})( [A-Za-z ]+)?: .*$`),
	},
	ReportTexts: []domain.FailureText{codexQuota, codexContext},
	// Claude Code's spent usage windows (subscriptions: the 5-hour,
	// session and weekly windows; spend limits), the 0.101.0 adapter with
	// errorKind rate_limit, 0.23.1 with no data.
	UsageWindows: []domain.FailureText{
		{Pattern: regexp.MustCompile(`^You(?:'|’)ve hit your [^\n]*? · (?:your [^·\n]+ )?resets (?P<reset>[^·\n]+?)(?: · [^\n]*)?$`),
			Class: domain.FailureQuotaExhausted, Source: "Claude Code"},
		{Pattern: regexp.MustCompile(`^You(?:'|’)ve hit your [^\n]*(?:limit|budget)\b[^\n]*$`),
			Class: domain.FailureQuotaExhausted, Source: "Claude Code"},
	},
	ReplyRuntimes:  []domain.RuntimeVersion{{Name: "codex-acp", VersionPrefix: "2."}},
	ReportFields:   []string{"codexErrorInfo", "codex_error_info"},
	RetryPath:      []string{"codex", "error"},
	RetryInfoField: "codexErrorInfo",
}

// codexInfos are codex's error-info kinds.
var codexInfos = map[string]domain.FailureClass{
	"contextwindowexceeded":          domain.FailureContextOverflow,
	"usagelimitexceeded":             domain.FailureQuotaExhausted,
	"quotaexceeded":                  domain.FailureQuotaExhausted,
	"ratelimitexceeded":              domain.FailureRateLimited,
	"serveroverloaded":               domain.FailureOverloaded,
	"internalservererror":            domain.FailureOverloaded,
	"unauthorized":                   domain.FailureAuthFailed,
	"httpconnectionfailed":           domain.FailureStreamDropped,
	"responsestreamconnectionfailed": domain.FailureStreamDropped,
	"responsestreamdisconnected":     domain.FailureStreamDropped,
	"responsetoomanyfailedattempts":  domain.FailureStreamDropped,
}

// codex's quota and context-window texts.
var (
	codexQuota = domain.FailureText{Pattern: regexp.MustCompile(`^Quota exceeded\. Check your plan and billing details\.$`),
		Class: domain.FailureQuotaExhausted, Source: "codex"}
	codexContext = domain.FailureText{Pattern: regexp.MustCompile(`^Codex ran out of room in the model's context window\. Start a new thread or clear earlier history before retrying\.$`),
		Class: domain.FailureContextOverflow, Source: "codex"}
)
