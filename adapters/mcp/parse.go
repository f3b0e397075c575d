package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"unicode/utf8"

	"github.com/acpdrive/acpdrive/domain"
)

// Bounds on an MCP configuration file.
const (
	// MaxFileBytes is the largest MCP configuration file read, 16 MiB.
	MaxFileBytes = 16 << 20
	// MaxDepth is the deepest nesting of JSON objects and arrays accepted
	// anywhere in the file. A generated file nests four deep.
	MaxDepth = 64
)

// Fault classes of a FileError; match them with errors.Is.
var (
	// ErrUnreadable: the file could not be opened or read.
	ErrUnreadable = errors.New("MCP configuration unreadable")
	// ErrTooLarge: the file is larger than MaxFileBytes.
	ErrTooLarge = errors.New("MCP configuration too large")
	// ErrInvalidJSON: the file is not valid UTF-8 JSON, or nests deeper
	// than MaxDepth.
	ErrInvalidJSON = errors.New("MCP configuration is not valid JSON")
	// ErrMalformed: the JSON is valid but does not describe servers the
	// way the format requires (a wrong type, a missing command or url, a
	// duplicate key, an unknown transport).
	ErrMalformed = errors.New("MCP configuration malformed")
	// ErrReservedName: an operator file declares the server name reserved
	// for the caller's own tools entry.
	ErrReservedName = errors.New("MCP configuration declares the reserved server name")
)

// FileError is a fault in an MCP configuration file. Its text names the
// file and the fault: "<path>: <fault>".
type FileError struct {
	// Path is the file as given to the function that failed.
	Path string
	// Fault says what is wrong, with the JSON path or position when there
	// is one.
	Fault string
	// Class is one of ErrUnreadable, ErrTooLarge, ErrInvalidJSON,
	// ErrMalformed, ErrReservedName.
	Class error
	// Cause is the underlying error, if any.
	Cause error
}

// Error returns "<path>: <fault>".
func (e *FileError) Error() string { return e.Path + ": " + e.Fault }

// Unwrap returns the fault class and the cause, so errors.Is matches both.
func (e *FileError) Unwrap() []error {
	errs := []error{e.Class}
	if e.Cause != nil {
		errs = append(errs, e.Cause)
	}
	return errs
}

// member is one member of a JSON object, its value kept as written.
type member struct {
	key string
	raw json.RawMessage
}

// entry is one server of a parsed file, kept as written so that a merge
// can copy it through.
type entry struct {
	name     string
	raw      json.RawMessage
	server   domain.MCPServer
	disabled bool
}

// document is a parsed configuration file.
type document struct {
	top        []member // top-level members in file order, mcpServers included
	hasServers bool
	servers    []entry
}

// ParseFile reads the MCP configuration at path and returns its enabled
// servers in file order: every declared server except those whose enabled
// member is false. Each server's Transport is set, and the lists its
// transport uses (Args and Env, or Headers) are empty rather than nil. A fault comes back as a *FileError naming path.
func ParseFile(path string) ([]domain.MCPServer, error) {
	doc, err := readDocument(path)
	if err != nil {
		return nil, err
	}
	return doc.enabled(), nil
}

// Parse is ParseFile on content already read; name stands for the file in
// fault messages.
func Parse(data []byte, name string) ([]domain.MCPServer, error) {
	doc, err := parseDocument(name, data)
	if err != nil {
		return nil, err
	}
	return doc.enabled(), nil
}

func (d *document) enabled() []domain.MCPServer {
	out := make([]domain.MCPServer, 0, len(d.servers))
	for _, e := range d.servers {
		if !e.disabled {
			out = append(out, e.server)
		}
	}
	return out
}

// readFile reads path, refusing more than MaxFileBytes.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, unreadable(path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > MaxFileBytes {
		return nil, tooLarge(path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, unreadable(path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, tooLarge(path)
	}
	return data, nil
}

func unreadable(path string, err error) *FileError {
	text := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		text = pe.Err.Error()
	}
	return &FileError{Path: path, Fault: "cannot be read: " + text, Class: ErrUnreadable, Cause: err}
}

func tooLarge(path string) *FileError {
	return &FileError{Path: path, Fault: fmt.Sprintf("is larger than the %d-byte limit", MaxFileBytes), Class: ErrTooLarge}
}

func readDocument(path string) (*document, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return parseDocument(path, data)
}

// parseDocument checks data (UTF-8, nesting, JSON syntax) before it builds
// anything, then walks the top-level object and mcpServers in order.
func parseDocument(name string, data []byte) (*document, error) {
	if len(data) > MaxFileBytes {
		return nil, tooLarge(name)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(data) {
		off := invalidUTF8Offset(data)
		return nil, invalidJSON(name, "is not valid UTF-8"+position(data, off), nil)
	}
	if off, deep := tooDeep(data); deep {
		return nil, invalidJSON(name, fmt.Sprintf("nests deeper than %d levels%s", MaxDepth, position(data, off)), nil)
	}
	// Unmarshal checks the whole input before it decodes anything, so a
	// syntax error is found without building a value.
	var whole json.RawMessage
	if err := json.Unmarshal(data, &whole); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			// Offset counts the offending byte; point at it, or at the
			// end when the input stopped short.
			off := int(se.Offset) - 1
			if se.Error() == "unexpected end of JSON input" {
				off = len(data)
			}
			return nil, invalidJSON(name, "is not valid JSON: "+se.Error()+position(data, off), err)
		}
		return nil, invalidJSON(name, "is not valid JSON: "+err.Error(), err)
	}
	top, err := objectMembers(whole)
	if err != nil {
		return nil, malformed(name, "the top level: %s", err)
	}
	doc := &document{top: top}
	seen := map[string]bool{}
	for _, m := range top {
		if seen[m.key] {
			return nil, malformed(name, "the top level: duplicate key %q", m.key)
		}
		seen[m.key] = true
		if m.key != "mcpServers" {
			continue
		}
		doc.hasServers = true
		if err := doc.parseServers(name, m.raw); err != nil {
			return nil, err
		}
	}
	return doc, nil
}

func (d *document) parseServers(name string, raw json.RawMessage) error {
	servers, err := objectMembers(raw)
	if err != nil {
		return malformed(name, "mcpServers: %s", err)
	}
	seen := map[string]bool{}
	for _, m := range servers {
		if seen[m.key] {
			return malformed(name, "mcpServers: server %q is declared twice", m.key)
		}
		seen[m.key] = true
		if m.key == "" {
			return malformed(name, "mcpServers: a server has an empty name")
		}
		e, err := parseEntry(m.key, m.raw)
		if err != nil {
			return malformed(name, "mcpServers.%s: %s", jsonKey(m.key), err)
		}
		d.servers = append(d.servers, e)
	}
	return nil
}

// parseEntry decodes one server declaration. A disabled server is kept
// (a merge copies it through) but not checked further: it is never
// returned.
func parseEntry(name string, raw json.RawMessage) (entry, error) {
	e := entry{name: name, raw: raw, server: domain.MCPServer{Name: name}}
	fields, err := objectMembers(raw)
	if err != nil {
		return e, err
	}
	got := map[string]json.RawMessage{}
	for _, f := range fields {
		if _, dup := got[f.key]; dup {
			return e, fmt.Errorf("duplicate key %q", f.key)
		}
		got[f.key] = f.raw
	}
	if raw, ok := got["enabled"]; ok {
		var enabled bool
		if kindOf(raw) != "a boolean" {
			return e, fmt.Errorf("enabled: expected a boolean, found %s", kindOf(raw))
		}
		_ = json.Unmarshal(raw, &enabled)
		if !enabled {
			e.disabled = true
			return e, nil
		}
	}
	s := &e.server
	typ, hasType, err := optString(got, "type")
	if err != nil {
		return e, err
	}
	cmd, hasCmd, err := optString(got, "command")
	if err != nil {
		return e, err
	}
	url, hasURL, err := optString(got, "url")
	if err != nil {
		return e, err
	}
	switch {
	case hasType:
		switch t := domain.MCPTransport(typ); t {
		case domain.MCPStdio, domain.MCPHTTP, domain.MCPSSE:
			s.Transport = t
		default:
			return e, fmt.Errorf("type: unsupported transport %q (want stdio, http or sse)", typ)
		}
	case hasCmd && hasURL:
		return e, errors.New(`has both command and url: set type to "stdio", "http" or "sse"`)
	case hasCmd:
		s.Transport = domain.MCPStdio
	case hasURL:
		s.Transport = domain.MCPHTTP
	default:
		return e, errors.New("has neither command nor url")
	}
	if s.Transport == domain.MCPStdio {
		if !hasCmd || cmd == "" {
			return e, errors.New("command: a stdio server needs a non-empty command")
		}
		s.Command = cmd
		if s.Args, err = stringArray(got, "args"); err != nil {
			return e, err
		}
		if s.Env, err = stringObject(got, "env"); err != nil {
			return e, err
		}
		return e, nil
	}
	if !hasURL || url == "" {
		return e, fmt.Errorf("url: an %s server needs a non-empty url", s.Transport)
	}
	s.URL = url
	if s.Headers, err = stringObject(got, "headers"); err != nil {
		return e, err
	}
	return e, nil
}

// optString decodes member key as a string when present.
func optString(got map[string]json.RawMessage, key string) (string, bool, error) {
	raw, ok := got[key]
	if !ok {
		return "", false, nil
	}
	if k := kindOf(raw); k != "a string" {
		return "", true, fmt.Errorf("%s: expected a string, found %s", key, k)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", true, fmt.Errorf("%s: %w", key, err)
	}
	return s, true, nil
}

// stringArray decodes member key as an array of strings; absent or null
// is an empty list.
func stringArray(got map[string]json.RawMessage, key string) ([]string, error) {
	raw, ok := got[key]
	out := []string{}
	if !ok || kindOf(raw) == "null" {
		return out, nil
	}
	if k := kindOf(raw); k != "an array" {
		return nil, fmt.Errorf("%s: expected an array of strings, found %s", key, k)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	for i, el := range elems {
		if k := kindOf(el); k != "a string" {
			return nil, fmt.Errorf("%s[%d]: expected a string, found %s", key, i, k)
		}
		var s string
		if err := json.Unmarshal(el, &s); err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", key, i, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// stringObject decodes member key as an object of string values, in
// order; absent or null is an empty list.
func stringObject(got map[string]json.RawMessage, key string) ([]domain.NameValue, error) {
	raw, ok := got[key]
	out := []domain.NameValue{}
	if !ok || kindOf(raw) == "null" {
		return out, nil
	}
	members, err := objectMembers(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	seen := map[string]bool{}
	for _, m := range members {
		if seen[m.key] {
			return nil, fmt.Errorf("%s: duplicate key %q", key, m.key)
		}
		seen[m.key] = true
		if k := kindOf(m.raw); k != "a string" {
			return nil, fmt.Errorf("%s.%s: expected a string, found %s", key, jsonKey(m.key), k)
		}
		var v string
		if err := json.Unmarshal(m.raw, &v); err != nil {
			return nil, fmt.Errorf("%s.%s: %w", key, jsonKey(m.key), err)
		}
		out = append(out, domain.NameValue{Name: m.key, Value: v})
	}
	return out, nil
}

// objectMembers returns the members of a JSON object in order, each value
// as written. raw must be valid JSON.
func objectMembers(raw json.RawMessage) ([]member, error) {
	if k := kindOf(raw); k != "an object" {
		return nil, fmt.Errorf("expected an object, found %s", k)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("unexpected token %v", tok)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{key: key, raw: v})
	}
	return out, nil
}

// kindOf names the JSON type of a valid value.
func kindOf(raw []byte) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// jsonKey renders an object key in a fault's JSON path: plain when it is
// a simple identifier, quoted otherwise.
func jsonKey(k string) string {
	for i, r := range k {
		simple := r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9'
		if !simple {
			return strconv.Quote(k)
		}
	}
	if k == "" {
		return `""`
	}
	return k
}

func malformed(name, format string, args ...any) *FileError {
	return &FileError{Path: name, Fault: fmt.Sprintf(format, args...), Class: ErrMalformed}
}

func invalidJSON(name, fault string, cause error) *FileError {
	return &FileError{Path: name, Fault: fault, Class: ErrInvalidJSON, Cause: cause}
}

// tooDeep reports whether objects and arrays nest deeper than MaxDepth,
// and where the first level too deep opens. It reads strings only to skip
// them; data need not be valid JSON.
func tooDeep(data []byte) (int, bool) {
	depth := 0
	inString, escaped := false, false
	for i, c := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if depth > MaxDepth {
				return i, true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return 0, false
}

// invalidUTF8Offset returns the offset of the first byte that is not part
// of a valid UTF-8 sequence.
func invalidUTF8Offset(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(data)
}

// position renders " (line L, column C)" for a byte offset; the column
// counts bytes from 1.
func position(data []byte, off int) string {
	off = max(0, min(off, len(data)))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return fmt.Sprintf(" (line %d, column %d)", line, col)
}
