package domain_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
)

func offers(kinds ...string) []domain.PermissionOffer {
	var out []domain.PermissionOffer
	for i, k := range kinds {
		out = append(out, domain.PermissionOffer{ID: k + "-" + string(rune('0'+i)), Kind: k})
	}
	return out
}

// TestChoosePermissionOption: the answer is always an offered option
// chosen by kind; when none fits, the request is refused the documented
// way (docs/behaviour.md#permission-posture).
func TestChoosePermissionOption(t *testing.T) {
	t.Parallel()
	const (
		ao = domain.OptionKindAllowOnce
		aa = domain.OptionKindAllowAlways
		ro = domain.OptionKindRejectOnce
		ra = domain.OptionKindRejectAlways
	)
	cases := []struct {
		name   string
		v      domain.PermissionVerdict
		offers []domain.PermissionOffer
		sent   domain.PermissionVerdict
		id     string
	}{
		{"allow picks allow_once", domain.PermissionAllow, offers(aa, ao, ro), domain.PermissionAllow, "allow_once-1"},
		{"allow never picks allow_always", domain.PermissionAllow, offers(aa, ro), domain.PermissionRefuse, "reject_once-1"},
		{"allow with only allow_always needs a person", domain.PermissionAllow, offers(aa), domain.PermissionPerson, ""},
		{"allow with no options needs a person", domain.PermissionAllow, nil, domain.PermissionPerson, ""},
		{"allow not the first option", domain.PermissionAllow, offers(ro, ao), domain.PermissionAllow, "allow_once-1"},
		{"refuse picks reject_once first", domain.PermissionRefuse, offers(ra, ao, ro), domain.PermissionRefuse, "reject_once-2"},
		{"refuse falls back to reject_always", domain.PermissionRefuse, offers(ao, ra), domain.PermissionRefuse, "reject_always-1"},
		{"refuse without a refusing option needs a person", domain.PermissionRefuse, offers(ao, aa), domain.PermissionPerson, ""},
		{"person sends no option", domain.PermissionPerson, offers(ao, ro), domain.PermissionPerson, ""},
		{"unknown kinds", domain.PermissionAllow, offers("ALLOW_ONCE", "allow"), domain.PermissionPerson, ""},
		{"an unknown verdict refuses", domain.PermissionVerdict("maybe"), offers(ao, ro), domain.PermissionRefuse, "reject_once-1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sent, id := domain.ChoosePermissionOption(c.v, c.offers)
			assert.Equal(t, c.sent, sent)
			assert.Equal(t, c.id, id)
		})
	}
}

func TestPathInside(t *testing.T) {
	t.Parallel()
	roots := []string{"/work/ws", "/extra/"}
	cases := []struct {
		p    string
		want bool
	}{
		{"/work/ws", true},
		{"/work/ws/a/b.go", true},
		{"/work/ws/../ws/a", true},
		{"/work/wsx/a", false},
		{"/work/ws/../other", false},
		{"/extra/x", true},
		{"/extra", true},
		{"relative/a", false},
		{"", false},
		{"/", false},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, domain.PathInside(c.p, roots), c.p)
	}
	assert.False(t, domain.PathInside("/a", []string{"", "rel"}))
}

func req(kind domain.ToolKind, session string, inside ...bool) domain.PermissionRequest {
	r := domain.PermissionRequest{Kind: kind, Session: session, Title: "Edit main.go"}
	for _, in := range inside {
		p := domain.PermissionPath{Path: "/p", Inside: in}
		if in {
			p.Resolved = "/ws/p"
		}
		r.Paths = append(r.Paths, p)
	}
	return r
}

// TestPresets is the presets' table (docs/behaviour.md#permission-posture).
func TestPresets(t *testing.T) {
	t.Parallel()
	const A, R = domain.PermissionAllow, domain.PermissionRefuse
	parent := domain.PermissionParent
	cases := []struct {
		preset domain.PermissionPreset
		r      domain.PermissionRequest
		want   domain.PermissionVerdict
	}{
		{"", req(domain.ToolRead, parent, true), R},
		{domain.PresetRefuse, req(domain.ToolRead, parent, true), R},
		{domain.PresetRead, req(domain.ToolRead, parent), A},
		{domain.PresetRead, req(domain.ToolSearch, parent), A},
		{domain.PresetRead, req(domain.ToolThink, parent), A},
		{domain.PresetRead, req(domain.ToolEdit, parent, true), R},
		{domain.PresetRead, req(domain.ToolExecute, parent), R},
		{domain.PresetEdit, req(domain.ToolRead, parent), A},
		{domain.PresetEdit, req(domain.ToolEdit, parent, true), A},
		{domain.PresetEdit, req(domain.ToolDelete, parent, true, true), A},
		{domain.PresetEdit, req(domain.ToolMove, domain.PermissionChild, true, true), A},
		{domain.PresetEdit, req(domain.ToolMove, parent, true, false), R},
		{domain.PresetEdit, req(domain.ToolEdit, parent, false), R},
		{domain.PresetEdit, req(domain.ToolEdit, parent), R}, // no path: cannot be known
		{domain.PresetEdit, req(domain.ToolExecute, parent, true), R},
		{domain.PresetEdit, req(domain.ToolFetch, parent), R},
		{domain.PresetEdit, req(domain.ToolOther, parent, true), R},
		{"bogus", req(domain.ToolRead, parent), R},
	}
	for _, c := range cases {
		d := domain.PermissionPolicy{Preset: c.preset}.Decide(c.r)
		assert.Equal(t, c.want, d.Verdict, "%s %s", c.preset, c.r.Kind)
		assert.True(t, strings.HasPrefix(d.By, "preset "), d.By)
	}
	// An inside path that was never resolved is not inside.
	r := req(domain.ToolEdit, parent)
	r.Paths = []domain.PermissionPath{{Path: "/ws/a", Inside: true}}
	assert.Equal(t, R, domain.PermissionPolicy{Preset: domain.PresetEdit}.Decide(r).Verdict)
}

func TestParsePermissionPolicy(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]domain.PermissionPolicy{
		"":               {Preset: domain.PresetRefuse},
		"refuse":         {Preset: domain.PresetRefuse},
		" edit ":         {Preset: domain.PresetEdit},
		"read":           {Preset: domain.PresetRead},
		"rules:/x/r.txt": {Preset: domain.PresetRules, Source: "/x/r.txt"},
	} {
		got, err := domain.ParsePermissionPolicy(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"allow", "rules", "rules:", "EDIT", "yolo"} {
		_, err := domain.ParsePermissionPolicy(in)
		assert.Error(t, err, in)
	}
}

const rulesText = `# the rules of an unattended run
allow  kind=read,search,think
allow  kind=edit,delete,move path=inside session=parent
person kind=execute title="Run *"
refuse kind=execute
refuse   # the default
`

func TestRules(t *testing.T) {
	t.Parallel()
	rules, errs := domain.ParsePermissionRules(rulesText)
	require.Empty(t, errs)
	require.Len(t, rules, 5)
	p := domain.PermissionPolicy{Preset: domain.PresetRules, Source: "r.txt", Rules: rules}
	assert.Empty(t, p.Validate())
	cases := []struct {
		r    domain.PermissionRequest
		want domain.PermissionVerdict
		by   string
	}{
		{req(domain.ToolRead, "parent"), domain.PermissionAllow, "rules r.txt:2"},
		{req(domain.ToolEdit, "parent", true), domain.PermissionAllow, "rules r.txt:3"},
		{req(domain.ToolEdit, "child", true), domain.PermissionRefuse, "rules r.txt:6"},
		{req(domain.ToolEdit, "parent", false), domain.PermissionRefuse, "rules r.txt:6"},
		{domain.PermissionRequest{Kind: domain.ToolExecute, Title: "Run make test"}, domain.PermissionPerson, "rules r.txt:4"},
		{domain.PermissionRequest{Kind: domain.ToolExecute, Title: "make test"}, domain.PermissionRefuse, "rules r.txt:5"},
		{domain.PermissionRequest{Kind: domain.ToolFetch}, domain.PermissionRefuse, "rules r.txt:6"},
	}
	for _, c := range cases {
		d := p.Decide(c.r)
		assert.Equal(t, c.want, d.Verdict, "%+v", c.r)
		assert.Equal(t, c.by, d.By)
	}
}

func TestRulesTitleAndPath(t *testing.T) {
	t.Parallel()
	rules, errs := domain.ParsePermissionRules("allow title=\"Edit ?.go\" path=outside\nperson\n")
	require.Empty(t, errs)
	p := domain.PermissionPolicy{Preset: domain.PresetRules, Rules: rules}
	r := domain.PermissionRequest{Kind: domain.ToolEdit, Title: "Edit a.go"}
	assert.Equal(t, domain.PermissionAllow, p.Decide(r).Verdict, "no path is outside")
	r.Title = "Edit ab.go"
	assert.Equal(t, domain.PermissionPerson, p.Decide(r).Verdict)
}

func TestParsePermissionRulesFaults(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text string
		line int
		has  string
	}{
		{"", 1, "no rule"},
		{"# only a comment\n", 1, "no rule"},
		{"allow kind=read\n", 1, "last rule is the default"},
		{"refuse\nallow kind=read\n", 2, "last rule is the default"},
		{"grant kind=read\nrefuse\n", 1, "begins with allow, refuse or person"},
		{"\nallow kind=reading\nrefuse\n", 2, `kind "reading"`},
		{"allow path=near\nrefuse\n", 1, `path "near"`},
		{"allow session=sibling\nrefuse\n", 1, `session "sibling"`},
		{"allow colour=red\nrefuse\n", 1, "unknown condition"},
		{"allow kind\nrefuse\n", 1, "KEY=VALUE"},
		{"allow kind=read kind=edit\nrefuse\n", 1, "twice"},
		{"allow title=\"Edit\nrefuse\n", 1, "quoted"},
		{"refuse\n\xff\n", 1, "UTF-8"},
	}
	for _, c := range cases {
		rules, errs := domain.ParsePermissionRules(c.text)
		require.NotEmpty(t, errs, "%q", c.text)
		assert.Nil(t, rules)
		assert.Equal(t, c.line, errs[0].Line, "%q", c.text)
		assert.Contains(t, errs[0].Error(), c.has, "%q", c.text)
		assert.Contains(t, errs[0].Error(), "line ", "%q", c.text)
	}
}

func TestPermissionPolicyValidate(t *testing.T) {
	t.Parallel()
	assert.Empty(t, domain.PermissionPolicy{}.Validate())
	assert.Empty(t, domain.PermissionPolicy{Preset: domain.PresetEdit}.Validate())
	for _, p := range []domain.PermissionPolicy{
		{Preset: "yolo"},
		{Preset: domain.PresetRules, Source: "r"},
		{Preset: domain.PresetRules, Source: "r", Rules: []domain.PermissionRule{{Line: 1, Verdict: domain.PermissionAllow, Kinds: []domain.ToolKind{domain.ToolRead}}}},
	} {
		fs := p.Validate()
		require.Len(t, fs, 1, "%+v", p)
		assert.Equal(t, domain.CheckPermissionsInvalid, fs[0].Check)
	}
}

func TestPermissionRequestInside(t *testing.T) {
	t.Parallel()
	assert.False(t, domain.PermissionRequest{}.Inside(), "no path is not inside")
	assert.True(t, req(domain.ToolEdit, "", true, true).Inside())
	assert.False(t, req(domain.ToolEdit, "", true, false).Inside())
}
