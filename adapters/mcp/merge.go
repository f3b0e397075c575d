package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/acpdrive/acpdrive/domain"
)

// DefaultReservedName is the server name the caller's own tools entry
// takes in the generated configuration unless it picks another; it is the
// name the orchestrator this behaviour comes from reserves.
const DefaultReservedName = "sortie-tools"

// Merge builds the generated MCP configuration: the operator's file (the
// resolved agent-client-protocol.mcp_config; "" when there is none) with
// the caller's reserved tools entry added to its mcpServers under
// reservedName (DefaultReservedName when ""). It returns the document to
// write with WriteFile, indented, ending in a newline.
//
// The operator's top-level members and servers keep their order and their
// values (disabled servers included); the reserved entry comes last, in
// the mcp.json shape: {"type","command","args","env"} for a stdio server,
// {"type","url","headers"} otherwise. reserved.Name is ignored. The
// operator file is checked the way Load will check the generated file, so
// its faults name it rather than the generated copy.
//
// It fails with a *FileError naming operatorFile when that file cannot be
// read (ErrUnreadable, ErrTooLarge), is not valid JSON (ErrInvalidJSON),
// does not describe servers the way the format requires (ErrMalformed),
// or already declares a server named reservedName (ErrReservedName), so
// the attempt fails before any session starts. A reserved server without
// a command (stdio) or url (http, sse) is the caller's mistake and fails
// with a plain error.
func Merge(operatorFile, reservedName string, reserved domain.MCPServer) ([]byte, error) {
	if reservedName == "" {
		reservedName = DefaultReservedName
	}
	reserved.Name = reservedName
	entryJSON, err := configJSON(reserved)
	if err != nil {
		return nil, fmt.Errorf("reserved MCP server %q: %w", reservedName, err)
	}
	doc := &document{}
	if operatorFile != "" {
		if doc, err = readDocument(operatorFile); err != nil {
			return nil, err
		}
		for _, e := range doc.servers {
			if e.name == reservedName {
				return nil, &FileError{
					Path:  operatorFile,
					Fault: fmt.Sprintf("declares a server named %q, a name reserved for the caller's own tools", reservedName),
					Class: ErrReservedName,
				}
			}
		}
	}

	var servers bytes.Buffer
	servers.WriteByte('{')
	for _, e := range doc.servers {
		servers.Write(encode(e.name))
		servers.WriteByte(':')
		servers.Write(e.raw)
		servers.WriteByte(',')
	}
	servers.Write(encode(reservedName))
	servers.WriteByte(':')
	servers.Write(entryJSON)
	servers.WriteByte('}')

	var out bytes.Buffer
	out.WriteByte('{')
	for i, m := range doc.top {
		if i > 0 {
			out.WriteByte(',')
		}
		out.Write(encode(m.key))
		out.WriteByte(':')
		if m.key == "mcpServers" {
			out.Write(servers.Bytes())
		} else {
			out.Write(m.raw)
		}
	}
	if !doc.hasServers {
		if len(doc.top) > 0 {
			out.WriteByte(',')
		}
		out.WriteString(`"mcpServers":`)
		out.Write(servers.Bytes())
	}
	out.WriteByte('}')

	var indented bytes.Buffer
	if err := json.Indent(&indented, out.Bytes(), "", "  "); err != nil {
		return nil, fmt.Errorf("merge MCP config %s: %w", operatorFile, err)
	}
	indented.WriteByte('\n')
	return indented.Bytes(), nil
}

// configJSON writes the server in the mcp.json shape.
func configJSON(s domain.MCPServer) ([]byte, error) {
	var b bytes.Buffer
	switch s.Transport {
	case domain.MCPStdio, "":
		if s.Command == "" {
			return nil, errors.New("a stdio server needs a command")
		}
		b.WriteString(`{"type":"stdio","command":`)
		b.Write(encode(s.Command))
		b.WriteString(`,"args":`)
		b.Write(encode(nonNil(s.Args)))
		b.WriteString(`,"env":`)
		writePairs(&b, s.Env)
	case domain.MCPHTTP, domain.MCPSSE:
		if s.URL == "" {
			return nil, fmt.Errorf("an %s server needs a url", s.Transport)
		}
		b.WriteString(`{"type":`)
		b.Write(encode(s.Transport))
		b.WriteString(`,"url":`)
		b.Write(encode(s.URL))
		b.WriteString(`,"headers":`)
		writePairs(&b, s.Headers)
	default:
		return nil, fmt.Errorf("unsupported transport %q", s.Transport)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// writePairs writes pairs as a JSON object, in order. A repeated name is
// written as given; the parser refuses it, so callers should not repeat.
func writePairs(b *bytes.Buffer, pairs []domain.NameValue) {
	b.WriteByte('{')
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(encode(p.Name))
		b.WriteByte(':')
		b.Write(encode(p.Value))
	}
	b.WriteByte('}')
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// encode marshals v without HTML escaping and without a trailing newline.
// v is a string or a list of strings, so encoding cannot fail.
func encode(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("mcp: encode %T: %v", v, err))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// WriteFile writes a generated configuration to path atomically: a
// temporary file in the same directory, mode 0600, renamed over path. It
// creates the directory (mode 0750) when missing. Errors name path.
func WriteFile(path string, doc []byte) (err error) {
	fail := func(step string, cause error) error {
		return fmt.Errorf("write MCP config %s: %s: %w", path, step, cause)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fail("create directory", err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fail("create temporary file", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	if _, err := f.Write(doc); err != nil {
		_ = f.Close()
		return fail("write", err)
	}
	if err := f.Chmod(0o600); err != nil {
		_ = f.Close()
		return fail("chmod", err)
	}
	if err := f.Close(); err != nil {
		return fail("close", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail("rename", err)
	}
	return nil
}
