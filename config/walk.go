package config

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/acpdrive/acpdrive/domain"
)

// Front matter keys this package reads.
const (
	keyAgent      = "agent"
	keyACP        = domain.AgentKindACP
	keyWorker     = "worker"
	keyTokenRates = "token_rates"
)

// Bounds on "<<" merge keys, so aliases cannot make a small front matter
// expand into a huge one: how deeply merges are followed, and how many
// keys one mapping's merges may contribute in all.
const (
	maxMergeDepth = 16
	maxMergeKeys  = 10000
)

// loader walks the front matter, filling cfg and recording findings.
type loader struct {
	cfg      domain.Config
	dir      string
	findings []domain.Finding
	// errored holds the key paths that drew an error finding.
	errored map[string]bool
	// noLines leaves line numbers out of the messages: the settings
	// were not read from a file a person edits by line (ApplyAgent).
	noLines bool
}

// kv is one key of a mapping, after merge keys are applied.
type kv struct {
	key string
	val *yaml.Node
	at  *yaml.Node // the key node, for its line
}

func (l *loader) add(sev domain.Severity, check, path string, at *yaml.Node, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = path + ": " + msg
	}
	if at != nil && at.Line > 0 && !l.noLines {
		msg += fmt.Sprintf(" (line %d)", at.Line)
	}
	l.findings = append(l.findings, domain.Finding{Severity: sev, Check: check, Message: msg})
	if sev == domain.SeverityError {
		if l.errored == nil {
			l.errored = map[string]bool{}
		}
		l.errored[path] = true
	}
}

func (l *loader) errorf(check, path string, at *yaml.Node, format string, args ...any) {
	l.add(domain.SeverityError, check, path, at, format, args...)
}

func (l *loader) wrongType(path string, n *yaml.Node, want string) {
	l.errorf(CheckWrongType, path, n, "expected %s, found %s", want, describe(n))
}

// top reads the blocks of the root mapping.
func (l *loader) top(root *yaml.Node) {
	for _, e := range l.entries("", root) {
		switch e.key {
		case keyAgent:
			l.block(keyAgent, e.val, l.agentKey)
		case keyACP:
			l.block(keyACP, e.val, l.acpKey)
		case keyWorker:
			l.block(keyWorker, e.val, l.workerKey)
		case keyTokenRates:
			l.tokenRates(e.val)
		}
	}
}

// block reads one mapping block; null or absent leaves the defaults.
func (l *loader) block(path string, n *yaml.Node, key func(path string, e kv)) {
	n = resolve(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		l.wrongType(path, n, "a mapping")
		return
	}
	for _, e := range l.entries(path, n) {
		key(path+"."+e.key, e)
	}
}

func (l *loader) agentKey(path string, e kv) {
	c := &l.cfg
	durations := map[string]*time.Duration{
		"turn_timeout_ms": &c.TurnTimeout, "read_timeout_ms": &c.ReadTimeout, "stall_timeout_ms": &c.StallTimeout,
		"stop_grace_ms": &c.StopGrace, "max_retry_backoff_ms": &c.MaxRetryBackoff,
	}
	if d, ok := durations[e.key]; ok {
		l.millis(path, e.val, d)
		return
	}
	switch e.key {
	case "kind":
		l.setStr(path, e.val, &c.Kind)
	case "command":
		l.command(path, e.val)
	case "url":
		l.setStr(path, e.val, &c.URL) // checked by domain.Config.Validate
	case "token_env":
		l.setStr(path, e.val, &c.TokenEnv)
	case "max_turns":
		if v, err := l.integer(path, e.val); err == nil {
			c.MaxTurns = int(v)
		}
	case "max_concurrent_agents":
		if v, err := l.integer(path, e.val); err == nil {
			c.MaxConcurrentAgents = int(v)
		}
	case "max_retries":
		if v, err := l.integer(path, e.val); err == nil {
			c.MaxRetries = int(v)
		}
	case "output_retries":
		if v, err := l.integer(path, e.val); err == nil {
			c.OutputRetries = int(v)
		}
	case "output_schema_turns":
		l.setStr(path, e.val, &c.OutputSchemaTurns) // checked by domain.Config.Validate
	case "output_schema":
		var v string
		l.setStr(path, e.val, &v)
		if v != "" {
			c.OutputSchema = l.resolvePath(v)
		}
	case "max_tokens":
		if v, err := l.integer(path, e.val); err == nil {
			c.MaxTokens = v
		}
	case "max_cost":
		if v, err := l.fraction(path, e.val, false); err == nil {
			c.MaxCost = v
		}
	case "max_context_fraction":
		if v, err := l.fraction(path, e.val, true); err == nil {
			c.MaxContextFraction = v
		}
	case "subagents":
		if v, err := l.boolean(path, e.val); err == nil {
			c.Subagents = v
		}
	case "protocol":
		l.protocol(path, e.val)
	case "permissions":
		l.permissions(path, e.val)
	case "answers":
		l.answers(path, e.val)
	case "sandbox":
		if v, err := l.boolean(path, e.val); err == nil {
			c.Sandbox.Enabled = v
		}
	case "sandbox_net":
		var v string
		l.setStr(path, e.val, &v)
		c.Sandbox.Network = domain.SandboxNetwork(v) // checked by domain.Config.Validate
	case "sandbox_writable":
		l.setStrList(path, e.val, &c.Sandbox.Writable)
	case "max_sessions":
		_, _ = l.integer(path, e.val) // the orchestrator's; checked, not used
	case "max_concurrent_agents_by_state":
		if n := resolve(e.val); !isNull(n) && n.Kind != yaml.MappingNode {
			l.wrongType(path, n, "a mapping")
		}
	case "mode", "model", "config_options", "additional_directories", "system_prompt", "system_prompt_mode":
		l.sessionKey(path, e)
	default:
		l.add(domain.SeverityWarning, CheckUnknownKey, path, e.at, "the agent block has no such key; it is ignored")
	}
}

func (l *loader) acpKey(path string, e kv) {
	c := &l.cfg
	switch e.key {
	case "mcp_config":
		n := resolve(e.val)
		switch {
		case isNull(n):
		case isString(n):
			c.MCPConfig = l.resolvePath(n.Value)
		default:
			// Reported by domain.Config.Validate, so a session build
			// refuses it with the same text.
			c.MCPConfigType = describe(n)
		}
	case "effort":
		c.Effort = effortText(resolve(e.val))
	case "confirm_tool_servers":
		if v, err := l.boolean(path, e.val); err == nil {
			c.ConfirmToolServers = v
		}
	case "confirm_tool_servers_timeout_ms":
		l.millis(path, e.val, &c.ConfirmToolServersTimeout)
	default:
		l.add(domain.SeverityWarning, CheckUnknownKey, path, e.at,
			"agent kind %q reads no such key (it reads mcp_config and confirm_tool_servers[_timeout_ms] only; runtime settings belong in agent.command); it is ignored",
			domain.AgentKindACP)
	}
}

func (l *loader) workerKey(path string, e kv) {
	c := &l.cfg
	strs := map[string]*string{"ssh_strict_host_key_checking": &c.SSHStrictHostKeyChecking, "ssh_config": &c.SSHConfig}
	lists := map[string]*[]string{"ssh_hosts": &c.SSHHosts, "ssh_pass_env": &c.SSHPassEnv}
	if p, ok := strs[e.key]; ok {
		l.setStr(path, e.val, p)
		return
	}
	if p, ok := lists[e.key]; ok {
		l.setStrList(path, e.val, p)
		return
	}
	switch e.key {
	case "max_concurrent_agents_per_host":
		_, _ = l.integer(path, e.val) // the orchestrator's; checked, not used
	default:
		l.add(domain.SeverityWarning, CheckUnknownKey, path, e.at, "the worker block has no such key; it is ignored")
	}
}

// tokenRates records whether token_rates prices this kind. The block
// belongs to the orchestrator, which checks its shape.
func (l *loader) tokenRates(n *yaml.Node) {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		return
	}
	for _, e := range entriesQuiet(n) {
		if e.key == domain.AgentKindACP && !isNull(resolve(e.val)) {
			l.cfg.TokenRatesPriced = true
		}
	}
}

// command reads agent.command: a string split by the host platform's rules
// (domain.SplitHostCommandLine: a POSIX shell's, or Windows'), or a
// list of words.
func (l *loader) command(path string, n *yaml.Node) {
	n = resolve(n)
	switch {
	case isNull(n):
	case isString(n):
		words, err := domain.SplitHostCommandLine(n.Value)
		if err != nil {
			l.errorf(CheckCommandInvalid, path, n, "%s", strings.TrimPrefix(err.Error(), "split command line: "))
			return
		}
		l.cfg.Command = words
	case n.Kind == yaml.SequenceNode:
		if words, err := l.strList(path, n); err == nil {
			l.cfg.Command = words
		}
	default:
		l.wrongType(path, n, "a string or a list of strings")
	}
}

// boolean reads a YAML boolean; null is false.
func (l *loader) boolean(path string, n *yaml.Node) (bool, error) {
	n = resolve(n)
	if isNull(n) {
		return false, nil
	}
	var v bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&v) != nil {
		l.wrongType(path, n, "a boolean")
		return false, errNotRead
	}
	return v, nil
}

func (l *loader) str(path string, n *yaml.Node) (string, error) {
	n = resolve(n)
	if !isString(n) {
		l.wrongType(path, n, "a string")
		return "", errNotRead
	}
	return n.Value, nil
}

// setStr stores a string value in *dst; a value of another type is
// reported and leaves *dst as it was.
func (l *loader) setStr(path string, n *yaml.Node, dst *string) {
	if s, err := l.str(path, n); err == nil {
		*dst = s
	}
}

// setStrList stores a list of strings in *dst, like setStr.
func (l *loader) setStrList(path string, n *yaml.Node, dst *[]string) {
	if v, err := l.strList(path, n); err == nil {
		*dst = v
	}
}

// strList reads a list of strings; null is an empty list.
func (l *loader) strList(path string, n *yaml.Node) ([]string, error) {
	n = resolve(n)
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		l.wrongType(path, n, "a list of strings")
		return nil, errNotRead
	}
	out := make([]string, 0, len(n.Content))
	for i, el := range n.Content {
		el = resolve(el)
		if !isString(el) {
			l.wrongType(fmt.Sprintf("%s[%d]", path, i), el, "a string")
			l.errored[path] = true
			return nil, errNotRead
		}
		out = append(out, el.Value)
	}
	return out, nil
}

var integral = regexp.MustCompile(`^[-+]?[0-9][0-9_]*$`)

func (l *loader) integer(path string, n *yaml.Node) (int64, error) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode {
		switch n.ShortTag() {
		case "!!int":
			var v int64
			if err := n.Decode(&v); err != nil {
				l.errorf(CheckOutOfRange, path, n, "%s is out of range", n.Value)
				return 0, errNotRead
			}
			return v, nil
		case "!!float":
			// A YAML integer too large for 64 bits resolves as a float.
			if integral.MatchString(n.Value) {
				l.errorf(CheckOutOfRange, path, n, "%s is out of range", n.Value)
				return 0, errNotRead
			}
		}
	}
	l.wrongType(path, n, "an integer")
	return 0, errNotRead
}

// maxMillis is the largest millisecond count a time.Duration holds.
const maxMillis = math.MaxInt64 / int64(time.Millisecond)

func (l *loader) millis(path string, n *yaml.Node, dst *time.Duration) {
	v, err := l.integer(path, n)
	if err != nil {
		return
	}
	if v > maxMillis || v < -maxMillis {
		l.errorf(CheckOutOfRange, path, resolve(n), "%d is out of range (at most %d milliseconds)", v, maxMillis)
		return
	}
	*dst = time.Duration(v) * time.Millisecond
}

func (l *loader) resolvePath(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(l.dir, p)
}

// entries returns a mapping's keys in order, with "<<" merge keys applied
// (an explicit key wins over a merged one, an earlier merge over a later
// one), recording duplicate keys and keys that are not strings.
func (l *loader) entries(path string, m *yaml.Node) []kv {
	var out []kv
	first := map[string]*yaml.Node{}
	var merged []kv
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := resolve(m.Content[i]), m.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			budget := maxMergeKeys
			merged = append(merged, mergeEntries(v, 0, &budget)...)
			continue
		}
		keyPath := joinPath(path, k.Value)
		if k.Kind != yaml.ScalarNode {
			where := path
			if where == "" {
				where = "front matter"
			}
			l.errorf(CheckWrongType, where, k, "a key must be a string, found %s", describe(k))
			continue
		}
		if prev, dup := first[k.Value]; dup {
			if l.noLines {
				l.errorf(CheckDuplicateKey, keyPath, nil, "the key appears twice")
			} else {
				l.errorf(CheckDuplicateKey, keyPath, nil, "the key appears twice, at lines %d and %d", prev.Line, k.Line)
			}
			continue
		}
		first[k.Value] = k
		out = append(out, kv{key: k.Value, val: v, at: k})
	}
	for _, e := range merged {
		if _, dup := first[e.key]; dup {
			continue
		}
		first[e.key] = e.at
		out = append(out, e)
	}
	return out
}

// mergeEntries returns the keys a "<<" value contributes: a mapping, or a
// list of mappings (earlier ones win). Anything else contributes nothing,
// and so does whatever lies past the depth bound or the key budget.
func mergeEntries(v *yaml.Node, depth int, budget *int) []kv {
	if depth > maxMergeDepth || *budget <= 0 {
		return nil
	}
	v = resolve(v)
	var maps []*yaml.Node
	switch v.Kind {
	case yaml.MappingNode:
		maps = []*yaml.Node{v}
	case yaml.SequenceNode:
		for _, el := range v.Content {
			if el = resolve(el); el.Kind == yaml.MappingNode {
				maps = append(maps, el)
			}
		}
	}
	var out []kv
	seen := map[string]bool{}
	for _, m := range maps {
		for _, e := range entriesDepth(m, depth+1, budget) {
			if !seen[e.key] {
				seen[e.key] = true
				out = append(out, e)
			}
		}
	}
	return out
}

// entriesQuiet returns a mapping's string keys with merges applied and
// without findings, for blocks this package only peeks into.
func entriesQuiet(m *yaml.Node) []kv {
	budget := maxMergeKeys
	return entriesDepth(m, 0, &budget)
}

func entriesDepth(m *yaml.Node, depth int, budget *int) []kv {
	var out, merged []kv
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content) && *budget > 0; i += 2 {
		*budget--
		k, v := resolve(m.Content[i]), m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			continue
		}
		if k.ShortTag() == "!!merge" {
			merged = append(merged, mergeEntries(v, depth, budget)...)
			continue
		}
		if !seen[k.Value] {
			seen[k.Value] = true
			out = append(out, kv{key: k.Value, val: v, at: k})
		}
	}
	for _, e := range merged {
		if !seen[e.key] {
			seen[e.key] = true
			out = append(out, e)
		}
	}
	return out
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// resolve follows aliases to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < 64; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func isString(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str"
}

// describe names a node's YAML type for a message: "a string",
// "an integer", "a mapping", "a list", …
func describe(n *yaml.Node) string {
	n = resolve(n)
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch tag := n.ShortTag(); tag {
		case "!!str":
			return "a string"
		case "!!int":
			return "an integer"
		case "!!float":
			return "a float"
		case "!!bool":
			return "a boolean"
		case "!!null":
			return "null"
		case "!!timestamp":
			return "a timestamp"
		case "!!binary":
			return "binary data"
		default:
			return "a value tagged " + strconv.Quote(tag)
		}
	}
	return "an unexpected node"
}

// effortText is agent-client-protocol.effort as the Config records it:
// the scalar as written, the type of a non-empty mapping or list, "" for
// null, an empty string or an empty collection.
func effortText(n *yaml.Node) string {
	switch {
	case isNull(n):
		return ""
	case n.Kind == yaml.ScalarNode:
		return n.Value
	case len(n.Content) > 0:
		return describe(n)
	}
	return ""
}
