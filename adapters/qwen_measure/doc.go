// Package qwen_measure implements ports.MeasurementSource for Qwen Code
// (@qwen-code/qwen-code, `qwen --acp`), reading each turn's token figures
// from the chats journal Qwen Code keeps for every session
// (docs/behaviour.md#token-accounting).
//
// # Claim
//
// Claims is true when a word of agent.command names Qwen Code: a word
// whose last path element is qwen (or qwen.cmd, qwen.ps1, qwen.exe), the
// npm package name @qwen-code/qwen-code (bare or with @<version>, as npx
// takes it), or a path that runs through the package's own folder
// (…/@qwen-code/qwen-code/…, as `node <that folder>/cli.js` does). The
// handshake decides the rest: the source is kept only when initialize's
// agentInfo.name is "qwen-code" (RuntimeName).
//
// # Arm
//
// Arm creates a private temporary directory (mode 0700) and asks for no
// environment: the journal is written whatever the environment says, and
// session/load finds a session there, so the source only reads. It reads
// under Options.Home when set (the HOME the runtime sees), else this
// process's home directory (a local runtime inherits acpdrive's
// environment).
//
// # Journal
//
// Qwen Code writes $HOME/.qwen/projects/<the workspace path, every
// character other than a letter or digit made '-'>/chats/<ACP session
// id>.jsonl. The file is found by the session id under any project folder.
// Each line is a record {"type", "subtype", …}:
//
//   - a "user" record opens a turn (the prompt);
//   - a "system" record of subtype "ui_telemetry" whose
//     systemPayload.uiEvent["event.name"] is "qwen-code.api_response"
//     carries one model call's figures: input_token_count,
//     output_token_count, cached_content_token_count,
//     thoughts_token_count, total_token_count, and model;
//   - a "system" record of subtype "branch_checkpoint" ends the turn (the
//     prompt result's _meta["qwen.branchPoint"] names the same record).
//
// A turn's figures are the sum of its api_response records:
// input_token_count → InputTokens (cache reads included, as OpenAI counts
// them), output_token_count → OutputTokens (reasoning included),
// cached_content_token_count → CacheReadTokens, thoughts_token_count →
// ReasoningTokens, total_token_count → TotalTokens, then converted into
// the one meaning (docs/behaviour.md#token-accounting): the cached tokens
// are taken out of InputTokens and TotalTokens is the sum (the same total).
// A record counts only when it carries all five. The model is the last counted record's.
//
// # Reading
//
// The file is read incrementally; a trailing line without its newline is
// left for the next read. A new session is read from its first byte; a
// continued one from the file's size when SessionOpened is called, so no
// earlier turn is counted again. TurnUsage polls until the turn's end is
// read, or until the file has stayed unchanged for the settle time after
// a counted record (a turn that ends without a checkpoint, such as a
// failed one), bounded by its context. When the context ends first with
// records read, those are the turn's figures; with nothing read it
// returns the context's error. A turn whose end was read with no complete
// record reports ok false and a nil error.
package qwen_measure
