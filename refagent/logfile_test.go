package refagent_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/acpdrive/acpdrive/refagent"
)

func TestReadLog(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.log")
	if err := os.WriteFile(good, []byte(`{"kind":"request","method":"initialize","id":0,"message":{"jsonrpc":"2.0","id":0,"method":"initialize"}}
{"kind":"response","id":3,"answers":"session/request_permission","message":{"jsonrpc":"2.0","id":3,"result":{}}}
{"kind":"eof"}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	recs, err := refagent.ReadLog(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0].Method != "initialize" || recs[1].Answers != "session/request_permission" || recs[2].Kind != "eof" {
		t.Fatalf("unexpected records: %+v", recs)
	}
	bad := filepath.Join(dir, "bad.log")
	if err := os.WriteFile(bad, []byte("{\"kind\":\"eof\"}\nnot json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if recs, err := refagent.ReadLog(bad); err == nil || len(recs) != 1 {
		t.Fatalf("want one record and an error naming line 2, got %d, %v", len(recs), err)
	}
	if _, err := refagent.ReadLog(filepath.Join(dir, "missing.log")); !os.IsNotExist(err) {
		t.Fatalf("want not-exist, got %v", err)
	}
}
