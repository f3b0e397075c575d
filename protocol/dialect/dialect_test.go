package dialect

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
)

// TestDialectsAreDistinct: each registered version is one dialect, found
// by its version; the default is the oldest.
func TestDialectsAreDistinct(t *testing.T) {
	seen := map[int]bool{}
	for _, d := range All() {
		require.False(t, seen[d.Version()], "version %d has two dialects", d.Version())
		seen[d.Version()] = true
		got, ok := For(d.Version())
		require.True(t, ok)
		assert.Equal(t, d, got)
	}
	assert.Equal(t, All()[0], Default())
	_, ok := For(0)
	assert.False(t, ok)
}

// TestOpenReadsTheChoiceAsData: a version number asks for that version and
// accepts it only; "auto" asks for the newest and accepts every one; a
// version no dialect speaks is refused as agent_not_found.
func TestOpenReadsTheChoiceAsData(t *testing.T) {
	all := All()
	newest := all[len(all)-1]
	for _, d := range all {
		n, err := Open(domain.ProtocolChoice(strconv.Itoa(d.Version())))
		require.NoError(t, err)
		assert.Equal(t, d, n.Ask)
		assert.Equal(t, []Dialect{d}, n.accept)
	}
	n, err := Open(domain.ProtocolAuto)
	require.NoError(t, err)
	assert.Equal(t, newest, n.Ask)
	assert.Equal(t, all, n.accept)

	n, err = Open("")
	require.NoError(t, err)
	assert.Equal(t, Default(), n.Ask, "the empty choice is the default")

	// A choice the settings' validation refuses reads as the default, as
	// everywhere (domain.ParseProtocolChoice).
	n, err = Open("v9")
	require.NoError(t, err)
	assert.Equal(t, Default(), n.Ask)
}

// TestParamsDeclareEveryAcceptedShape: under "auto" the request is the
// newest dialect's, with each field an older accepted dialect declares
// beside it, so a runtime answering that version reads its own shape.
func TestParamsDeclareEveryAcceptedShape(t *testing.T) {
	c := Client{Name: "acpdrive", Version: "t", Subagents: true}
	n, err := Open(domain.ProtocolAuto)
	require.NoError(t, err)
	b, err := json.Marshal(n.Params(c))
	require.NoError(t, err)
	var got map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &got))
	for _, d := range All() {
		for _, f := range d.InitializeFields(c) {
			assert.Contains(t, got, f.Name)
		}
	}
	assert.JSONEq(t, strconv.Itoa(n.Ask.Version()), string(got["protocolVersion"]), "the asked version's own fields come first")

	one, err := Open("1")
	require.NoError(t, err)
	b, err = json.Marshal(one.Params(c))
	require.NoError(t, err)
	assert.JSONEq(t, `{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false,"session":{"notices":{}},"subagents":{}},"clientInfo":{"name":"acpdrive","version":"t"}}`, string(b))
}

func TestSettle(t *testing.T) {
	auto, err := Open(domain.ProtocolAuto)
	require.NoError(t, err)
	for _, tc := range []struct {
		name, answer string
		want         int
		err          string
	}{
		{"auto takes 1", `{"protocolVersion":1,"agentInfo":{"name":"a","version":"1"}}`, 1, ""},
		{"auto takes 2", `{"protocolVersion":2,"info":{"name":"a","version":"1"},"capabilities":{}}`, 2, ""},
		{"no version", `{}`, 0, "agent reported protocol version 0, want 2"},
		{"a version nobody speaks", `{"protocolVersion":9}`, 0, "agent answered protocol version 9; --protocol auto accepts only 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, h, err := auto.Settle(json.RawMessage(tc.answer))
			if tc.err != "" {
				assertMessage(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, d.Version())
			assert.Equal(t, tc.want, h.ProtocolVersion)
			assert.Equal(t, "a", h.AgentInfo.Name)
		})
	}
	one, err := Open("1")
	require.NoError(t, err)
	_, _, err = one.Settle(json.RawMessage(`{"protocolVersion":2,"info":{"name":"a"}}`))
	assertMessage(t, err, "agent reported protocol version 2, want 1")
	two, err := Open("2")
	require.NoError(t, err)
	_, _, err = two.Settle(json.RawMessage(`{"protocolVersion":1}`))
	assertMessage(t, err, "agent answered protocol version 1; --protocol 2 accepts only 2")
}

// assertMessage asserts err is an agent error with message msg.
func assertMessage(t *testing.T, err error, msg string) {
	t.Helper()
	var ae *domain.AgentError
	if assert.ErrorAs(t, err, &ae) {
		assert.Equal(t, msg, ae.Message)
	}
}
