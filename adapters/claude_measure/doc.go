// Package claude_measure implements ports.MeasurementSource for Claude Code
// run through the Claude agent ACP adapter (@zed-industries/claude-agent-acp,
// read against 0.23.1 and the Claude Code 2.1.83 it bundles; renamed
// @agentclientprotocol/claude-agent-acp from 0.101.0, whose transcript is
// where 0.23.1 wrote it). It reads each
// turn's token figures from the per-session transcript Claude Code keeps
// (docs/behaviour.md#token-accounting).
//
// # Claim
//
// Claims is true when a word of the command (the program or any argument)
// names the adapter:
//
//   - its base name (after the last / or \, trailing ones ignored) is
//     claude-agent-acp (the npm bin link or the package directory; on
//     Windows also claude-agent-acp.cmd, .ps1 or .exe), e.g.
//     `claude-agent-acp` or `env -i HOME=/h /opt/x/node_modules/.bin/claude-agent-acp`;
//   - it is a file inside the package, a path holding the consecutive
//     segments @zed-industries (or @agentclientprotocol) and
//     claude-agent-acp followed by at least one more (`node …/node_modules/@zed-industries/claude-agent-acp/dist/index.js`);
//   - it is either package name itself, optionally with a version
//     (`npx @zed-industries/claude-agent-acp@0.23.1`,
//     `npx @agentclientprotocol/claude-agent-acp@0.101.0`).
//
// Nothing else claims: not Claude Code's own CLI (`claude`, which does not
// speak ACP), not a word that merely contains the name
// (`my-claude-agent-acp-wrapper`), not a directory named claude-agent-acp in
// the middle of another program's path. A command that names nothing but
// still starts the adapter is settled by the handshake (RuntimeName).
//
// # Arm and environment
//
// Arm creates a private temporary directory (0700) for the source's own
// bookkeeping and returns no environment: the transcript is read where Claude
// Code writes it and is never relocated, because a later --resume (session/load)
// of the same session needs it in its usual place. Moving CLAUDE_CONFIG_DIR
// would also move Claude Code's settings and credentials. Release removes the
// temporary directory only; the transcript is only ever read.
//
// # Transcript path
//
// Claude Code's config home is $CLAUDE_CONFIG_DIR, else $HOME/.claude, as the
// runtime sees its environment. It writes a session's transcript to
//
//	<config home>/projects/<project folder>/<session id>.jsonl
//
// where the project folder is the session's working directory (resolved
// through symbolic links, NFC-normalized) with every character other than
// ASCII letters and digits replaced by "-"; a folder name longer than 200
// characters is cut to 200 and suffixed with "-" and a hash of the path. The
// source is not told the session's workspace, and the session id is a UUID,
// so it looks the file up by name in every project folder of the config home,
// as the adapter's SDK itself does when it has no directory to start from.
//
// The config home is Options.ConfigDir when set; otherwise it is resolved
// from this process's environment when Arm runs, which is right when the
// runtime inherits it. A launch that sets HOME or CLAUDE_CONFIG_DIR for the
// runtime only (`env -i HOME=…`) needs ConfigDir.
//
// # Counting
//
// The transcript is JSON lines. A turn's model calls are the records
// {"type":"assistant","message":{"id","model","stop_reason","usage":{…}}}
// appended after the position the previous turn (or the session's opening)
// left off. Claude Code writes one record per content block of a streamed
// message, all under the same message id, the earlier ones with the usage
// known so far (output_tokens 1 from message_start): each message id is
// counted once, from its last record that carries every mapped counter, and
// never again in a later turn. A record counts only when its usage carries
// all four counters as numbers: input_tokens → InputTokens,
// output_tokens → OutputTokens, cache_read_input_tokens → CacheReadTokens,
// cache_creation_input_tokens → CacheWriteTokens. Anthropic's input_tokens
// excludes the cached parts, so TotalTokens is the sum of the four.
// Reasoning and tool-use figures are not recorded separately (zero). Records
// whose model is "<synthetic>" are Claude Code's own messages (an API error
// text, an interruption), not model calls, and are never counted. The model
// a turn is attributed to is the model of its last counted message. A trailing
// line without its newline is not read until it is complete.
//
// Subagent transcripts (Claude Code keeps them in files of their own) are not
// read.
//
// # Per-turn wait
//
// Claude Code appends a turn's last records 2 to 20 ms after the prompt
// response. TurnUsage polls the transcript (every 10 ms) until the last
// assistant record read carries a stop reason that ends a turn (anything
// but none, "tool_use" and "pause_turn"), or, once some record counted, until
// the file has not grown for Options.Settle (default 300 ms; a cancelled turn
// has no final stop reason), or until ctx ends. A trailing line still
// without its newline is waited for, for at most Settle, before a final
// stop reason settles the turn. When ctx ends first, the turn
// is unmeasured (ok false): with nothing counted the error is nil, with
// records read but not settled it says so, and what was read is not
// reported, since it may fall short of the turn.
package claude_measure
