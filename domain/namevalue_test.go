package domain_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/acpdrive/acpdrive/domain"
)

// TestNameValueNeverLogsItsValue: logged as an attribute of its own (text
// or JSON, by value or pointer), a NameValue shows its name and never its
// value. A slice of them is formatted by the handler without LogValue, so
// code logs names (never the slice).
func TestNameValueNeverLogsItsValue(t *testing.T) {
	const secret = "nv-secret-value-81d2"
	v := domain.NameValue{Name: "ACPD_SECRET", Value: secret}
	var buf bytes.Buffer
	for _, h := range []slog.Handler{slog.NewTextHandler(&buf, nil), slog.NewJSONHandler(&buf, nil)} {
		l := slog.New(h)
		l.Info("one", "var", v)
		l.Info("ptr", "var", &v)
	}
	out := buf.String()
	if strings.Contains(out, secret) {
		t.Fatalf("the value reached the output:\n%s", out)
	}
	if !strings.Contains(out, "ACPD_SECRET") {
		t.Fatalf("the name is missing:\n%s", out)
	}
}
