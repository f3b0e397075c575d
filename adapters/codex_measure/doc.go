// Package codex_measure implements ports.MeasurementSource for Codex run
// through codex-acp (@zed-industries/codex-acp up to 0.16, renamed
// @agentclientprotocol/codex-acp from 2.x), reading each turn's token
// figures from the rollout file Codex writes for every session
// (docs/behaviour.md#token-accounting).
//
// # Claim
//
// Claims is true when the program or any argument of agent.command names
// codex-acp: a word whose last path element is codex-acp (or codex-acp.js,
// the npm package's bin script, or codex-acp.cmd, .ps1 or .exe; backslashes
// count as slashes, trailing ones are ignored), a word that is the npm
// package name @zed-industries/codex-acp or @agentclientprotocol/codex-acp
// (bare or with @<version>, as npx takes it), or a path that runs through
// either package's own folder (…/@zed-industries/codex-acp/…, as
// `node <that folder>/bin/codex-acp.js` does). Nothing else is claimed: not codex alone, not a wrapper script of
// another name, not the platform binary's npm link (codex-acp-linux-x64).
// The handshake decides the rest: the source is kept only when initialize's
// agentInfo.name is "codex-acp" (RuntimeName, 0.16) or
// "@agentclientprotocol/codex-acp" (2.x), with or without "@<version>"
// (Recognizes).
//
// # Arm and CODEX_HOME
//
// Arm creates a private temporary directory (mode 0700) and asks for no
// environment. It deliberately does not point CODEX_HOME elsewhere:
// codex-acp keeps every session's rollout under $CODEX_HOME/sessions, and
// its session/load and session/resume look the session up there, so a
// session created under a temporary CODEX_HOME could not be continued by a
// later `--resume` once the directory is removed (and the runtime's
// config.toml, credentials and trusted projects live there too). The
// rollout is written whatever the environment says, so the source only
// reads: it never writes or moves a file of Codex's.
//
// The source reads the CODEX_HOME the runtime sees: Options.Home when set,
// else acpdrive's own CODEX_HOME (a local runtime inherits acpdrive's
// environment), else ~/.codex, Codex's default. Set Options.Home when the
// runtime gets another one, e.g. through an `env CODEX_HOME=…` prefix in
// agent.command.
//
// # Rollout path
//
// Codex names a session's rollout
// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<session id>.jsonl,
// the date folders being the day the session was created; the session id
// is the ACP session id. The file is found by that id under any date
// folder (a continued session may be days old), looking first at the
// folders of yesterday, today and tomorrow.
//
// # Figures
//
// The rollout is JSON lines {"timestamp","type","payload"}. A turn runs
// from an event_msg task_started to an event_msg task_complete (or
// turn_aborted); each model call in it appends an event_msg token_count
// whose info carries last_token_usage (that call's figures) and
// total_token_usage (the session's running sum, which Codex restores when a
// session is continued), each with input_tokens, cached_input_tokens,
// output_tokens, reasoning_output_tokens and total_tokens. A turn_context
// record at the turn's start names its model.
//
// A turn's figures are the sum of last_token_usage over its token_count
// events: input_tokens → InputTokens (cache reads included, as OpenAI
// counts them), cached_input_tokens → CacheReadTokens, output_tokens →
// OutputTokens (reasoning included), reasoning_output_tokens →
// ReasoningTokens, total_tokens → TotalTokens; cache writes and tool-use
// are not recorded by Codex and stay zero. The figures are then converted
// into the one meaning (docs/behaviour.md#token-accounting): the cached
// tokens are taken out of InputTokens (724 where the rollout says 1733 with
// 1009 cached, as codex-acp 2.x reports on the wire), the total stays. A token_count counts only when
// its last_token_usage carries all five counters (an info of null, which
// Codex writes for rate-limit updates, is no record). The sum of
// last_token_usage is trusted over the difference of total_token_usage:
// each figure stands on its own, whereas the difference needs the total
// before the turn, which a missed or skipped record (or a session whose
// earlier rollout was not read) would make wrong. The difference is
// checked whenever both ends are known and a disagreement is logged at
// Warn.
//
// # Reading
//
// The file is read incrementally from the last offset; a trailing line
// without its newline is left for the next read. A new session is read
// from its first byte; a continued one from the file's size when
// SessionOpened is called (the earlier part is only scanned for the
// running total and the model, and no earlier turn is counted again).
// TurnUsage polls until a turn end is read, bounded by its context, and
// reports the latest ended turn (an older ended turn whose wait had
// already given up is discarded, costing that turn only). When the
// context ends after token_count records of a turn whose end was not read,
// those are reported as the turn's figures, so a build that stops writing
// task_complete is still measured, once per turn. A turn whose end was
// read with no complete record reports ok false and a nil error (the
// source answered: nothing); a wait that ended with nothing of the turn
// read returns the context's error, so the caller can tell the two apart.
package codex_measure
