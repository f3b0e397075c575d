// Package gemini_measure is the measurement source for Gemini CLI
// (ports.MeasurementSource; docs/behaviour.md#token-accounting). It reads
// each turn's token figures from the runtime's local telemetry file, with
// the runtime's own session journal as a second reading.
//
// # Claim
//
// Claims is true when a word of the command names Gemini CLI: the program
// or an argument (and, for a shell's script argument such as `sh -c "exec
// gemini --acp"`, each of its blank-separated fields) whose last path
// element is `gemini` (or the Windows shims `gemini.cmd`, `gemini.ps1`, `gemini.exe`),
// or which names the npm package: `@google/gemini-cli`, optionally with
// `@<version>` (an npx launch), or a path through `@google/gemini-cli/`
// (a node launch of the package's entry, `…/@google/gemini-cli/bundle/gemini.js`).
// A word that is an environment assignment (`NAME=value`, as `env` takes)
// never claims; neither do words such as `gemini-cli-core`,
// `gemini-2.5-pro` or `my-gemini-wrapper`. The handshake must then report
// agentInfo.name "gemini-cli".
//
// # Arm
//
// Each start gets a private temporary directory (0700) and the
// environment (appended, so it overrides inherited values) that Gemini CLI
// 0.61.0 reads to write its telemetry to a file there:
//
//	GEMINI_TELEMETRY_ENABLED=true
//	GEMINI_TELEMETRY_TARGET=local
//	GEMINI_TELEMETRY_OUTFILE=<dir>/telemetry.json
//	GEMINI_TELEMETRY_USE_COLLECTOR=false
//	GEMINI_TELEMETRY_LOG_PROMPTS=false
//
// The outfile takes precedence over any OTLP endpoint; prompts and replies
// are kept out of the file. Command-line telemetry flags in agent.command
// (`--telemetry-outfile`, `--telemetry false`, …) win over the environment
// in Gemini CLI and are not overridden.
//
// # Reading a turn
//
// The outfile is a stream of concatenated pretty-printed JSON objects (log
// records, spans, metrics), written in batches: a log record appears about
// 5 s after it was emitted, or at a clean exit. It is read incrementally
// from the last complete object (a partial trailing object is left for the
// next read; memory holds one object at a time). The records that count
// are `gemini_cli.api_response` log records whose attributes carry the
// session's `session.id` and every counter mapped: input_token_count →
// InputTokens, output_token_count → OutputTokens,
// cached_content_token_count → CacheReadTokens, thoughts_token_count →
// ReasoningTokens, tool_token_count → ToolUseTokens, total_token_count →
// TotalTokens (Gemini has no cache-write figure: CacheWriteTokens is 0),
// then converted into the one meaning (docs/behaviour.md#token-accounting):
// the API's input counts the cached tokens, so they are taken out of
// InputTokens; its output leaves the thoughts out, so they are added to
// OutputTokens; TotalTokens is the sum (the API's total).
//
// A turn is one ACP prompt: Gemini CLI gives each prompt its own
// `prompt_id`. The turn's figure sums the records of the newest prompt id
// carried by a `role` "main" record, together with records of any other
// role (the utility router, next-speaker and loop checks, compression, …)
// carrying that prompt id or an id no main record carries (Gemini's
// fallback ids): every role is a model call the turn paid for. The figure
// is attributed to the model of the turn's last main record. Records of an
// earlier prompt that arrive late are never counted again.
//
// TurnUsage waits, polling, until the file has caught up with the turn:
// a log record was written after the wait began (a batch export then
// carried everything queued when the turn ended), or Options.Settle (one
// batch interval and a margin) has passed since it began. When the bound
// (ctx) ends first, or the file holds nothing for the turn, the session
// journal is read too — `<home>/.gemini/tmp/<project>/chats/session-*-<first
// 8 of the id>.jsonl`, JSON lines whose "gemini" messages carry `tokens`
// {input, output, cached, thoughts, tool, total} and `model` — and the
// reading with the larger total wins. The journal's turn is the "gemini"
// messages after its last prompt — a "user" message that is not only
// function responses, which Gemini also records as "user" — (main calls
// only), so a
// continued session's earlier turns are never counted; the outfile is read
// from its position when the session was opened.
package gemini_measure
