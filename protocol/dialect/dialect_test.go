package dialect

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpclient"
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

}

// TestSettle: an answer without a version is malformed; one naming a
// version the choice does not accept is the asked dialect's refusal; one
// it accepts is decoded by that version's dialect (each dialect's own test
// settles an answer of its version).
func TestSettle(t *testing.T) {
	all := All()
	newest := all[len(all)-1]
	auto, err := Open(domain.ProtocolAuto)
	require.NoError(t, err)
	_, _, err = auto.Settle(json.RawMessage(`{}`))
	assertMessage(t, err, "agent reported protocol version 0, want "+strconv.Itoa(newest.Version()))
	var ae *domain.AgentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, domain.KindResponseError, ae.Kind)
	nobody := newest.Version() + 1
	_, _, err = auto.Settle(json.RawMessage(`{"protocolVersion":` + strconv.Itoa(nobody) + `}`))
	assert.Equal(t, newest.Refusal(nobody, domain.ProtocolAuto), err)
	_, _, err = auto.Settle(json.RawMessage(`{"protocolVersion":"two"}`))
	var de *acpclient.DecodeError
	assert.ErrorAs(t, err, &de)
}

// settles asserts that an answer of d's version settles on d under the
// choice of d's version and under auto.
func settles(t *testing.T, d Dialect, answer string) Handshake {
	t.Helper()
	var h Handshake
	for _, choice := range []domain.ProtocolChoice{domain.ProtocolChoice(strconv.Itoa(d.Version())), domain.ProtocolAuto} {
		n, err := Open(choice)
		require.NoError(t, err)
		got, hs, err := n.Settle(json.RawMessage(answer))
		require.NoError(t, err, choice)
		assert.Equal(t, d, got)
		assert.Equal(t, d.Version(), hs.ProtocolVersion)
		h = hs
	}
	return h
}

// assertMessage asserts err is an agent error with message msg.
func assertMessage(t *testing.T, err error, msg string) {
	t.Helper()
	var ae *domain.AgentError
	if assert.ErrorAs(t, err, &ae) {
		assert.Equal(t, msg, ae.Message)
	}
}
