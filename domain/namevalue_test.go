package domain_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/acpdrive/acpdrive/domain"
)

// TestNameValueNeverLogsItsValue: logged alone (text or JSON), in a slice
// (text; the JSON handler marshals a slice with encoding/json, which must
// keep the value for the wire), or formatted, a NameValue shows its name
// and never its value.
func TestNameValueNeverLogsItsValue(t *testing.T) {
	const secret = "nv-secret-value-81d2"
	v := domain.NameValue{Name: "ACPD_SECRET", Value: secret}
	var buf bytes.Buffer
	for _, h := range []slog.Handler{slog.NewTextHandler(&buf, nil), slog.NewJSONHandler(&buf, nil)} {
		l := slog.New(h)
		l.Info("one", "var", v)
		l.Info("ptr", "var", &v)
	}
	slog.New(slog.NewTextHandler(&buf, nil)).Info("many", "vars", []domain.NameValue{v, v})
	buf.WriteString(fmt.Sprintf("%v %+v %s", v, []domain.NameValue{v}, v))
	out := buf.String()
	if strings.Contains(out, secret) {
		t.Fatalf("the value reached the output:\n%s", out)
	}
	if !strings.Contains(out, "ACPD_SECRET") {
		t.Fatalf("the name is missing:\n%s", out)
	}
}
