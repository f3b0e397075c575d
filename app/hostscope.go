package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// scopeField is one option that belongs to a runtime process rather than
// to a session (docs/behaviour.md#runtime-host): a Host refuses a session
// that sets it to anything else than the host's, and HostKey keys the
// processes that may be shared by it.
type scopeField struct {
	name string
	// set reports that o sets the field; same that o's value is ho's.
	set  func(o *Options) bool
	same func(o, ho *Options) bool
	// take puts ho's value into o.
	take func(o, ho *Options)
	// key is the field's part of HostKey.
	key func(o *Options) any
}

// processScope is the list of the process-scoped options: the one place
// that names them (docs/behaviour.md#runtime-host).
func processScope() []scopeField {
	return []scopeField{
		{name: "Launcher",
			set:  func(o *Options) bool { return o.Launcher != nil },
			same: func(o, ho *Options) bool { return sameValue(o.Launcher, ho.Launcher) },
			take: func(o, ho *Options) { o.Launcher = ho.Launcher },
			key:  func(o *Options) any { return identity(o.Launcher) }},
		{name: "Settings.Command",
			set:  func(o *Options) bool { return len(o.Settings.Command) > 0 },
			same: func(o, ho *Options) bool { return slices.Equal(o.Settings.Command, ho.Settings.Command) },
			take: func(o, ho *Options) { o.Settings.Command = ho.Settings.Command },
			key:  func(o *Options) any { return o.Settings.Command }},
		{name: "Settings.Protocol",
			set:  func(o *Options) bool { return o.Settings.Protocol != "" },
			same: func(o, ho *Options) bool { return o.Settings.Protocol == ho.Settings.Protocol },
			take: func(o, ho *Options) { o.Settings.Protocol = ho.Settings.Protocol },
			key:  func(o *Options) any { return o.Settings.Protocol }},
		{name: "Settings.Sandbox",
			set:  func(o *Options) bool { return !reflect.DeepEqual(o.Settings.Sandbox, domain.Sandbox{}) },
			same: func(o, ho *Options) bool { return reflect.DeepEqual(o.Settings.Sandbox, ho.Settings.Sandbox) },
			take: func(o, ho *Options) { o.Settings.Sandbox = ho.Settings.Sandbox },
			// Under a sandbox the process's directory and the directories it
			// makes writable are the process's too.
			key: func(o *Options) any {
				if !o.Settings.Sandbox.Enabled {
					return o.Settings.Sandbox
				}
				return []any{o.Settings.Sandbox, o.Workspace, o.Settings.Session.AdditionalDirectories}
			}},
		{name: "Settings.Hosts",
			set:  func(o *Options) bool { return len(o.Settings.Hosts) > 0 },
			same: func(o, ho *Options) bool { return slices.Equal(o.Settings.Hosts, ho.Settings.Hosts) },
			take: func(o, ho *Options) { o.Settings.Hosts = ho.Settings.Hosts },
			key:  func(o *Options) any { return o.Settings.Hosts }},
		{name: "MeasurementSources",
			set: func(o *Options) bool { return len(o.MeasurementSources) > 0 },
			same: func(o, ho *Options) bool {
				return slices.EqualFunc(o.MeasurementSources, ho.MeasurementSources, func(a, b ports.MeasurementSource) bool { return sameValue(a, b) })
			},
			// A session on a shared process uses no source of its own.
			take: func(o, _ *Options) { o.MeasurementSources = nil },
			key: func(o *Options) any {
				ids := make([]string, len(o.MeasurementSources))
				for i, m := range o.MeasurementSources {
					ids[i] = identity(m)
				}
				return ids
			}},
		{name: "ClientName",
			set:  func(o *Options) bool { return o.ClientName != "" },
			same: func(o, ho *Options) bool { return o.ClientName == ho.ClientName },
			take: func(o, ho *Options) { o.ClientName = ho.ClientName },
			key:  func(o *Options) any { return o.ClientName }},
		{name: "ClientVersion",
			set:  func(o *Options) bool { return o.ClientVersion != "" },
			same: func(o, ho *Options) bool { return o.ClientVersion == ho.ClientVersion },
			take: func(o, ho *Options) { o.ClientVersion = ho.ClientVersion },
			key:  func(o *Options) any { return o.ClientVersion }},
	}
}

// HostKey names the runtime process opts would be started with: sessions
// whose options have one key may share a Host's processes, sessions of
// different keys never do. It is computed from the process-scoped
// options a Host takes as its own (docs/behaviour.md#runtime-host), so it
// follows that list wherever it changes.
func HostKey(opts Options) string {
	parts := make([]any, 0, len(processScope()))
	for _, f := range processScope() {
		parts = append(parts, []any{f.name, f.key(&opts)})
	}
	b, err := json.Marshal(parts)
	if err != nil {
		// Every part is plain data or an identity string.
		return fmt.Sprint(parts...)
	}
	return string(b)
}

// hostOptions is the options of the Host that carries sessions of opts:
// base (bounds, stop grace, logger, clock, …) with opts' process-scoped
// values.
func hostOptions(base, opts Options) Options {
	for _, f := range processScope() {
		f.take(&base, &opts)
	}
	base.MeasurementSources = opts.MeasurementSources
	base.Settings.Session.AdditionalDirectories = nil
	if opts.Settings.Sandbox.Enabled {
		base.Workspace = opts.Workspace
		base.Settings.Session.AdditionalDirectories = opts.Settings.Session.AdditionalDirectories
	}
	return base
}

// identity names a value by its dynamic type and, for a reference, its
// address: two launchers are one process's when they are one value.
func identity(v any) string {
	if v == nil {
		return ""
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer, reflect.Slice:
		return fmt.Sprintf("%T@%x", v, rv.Pointer())
	}
	return strings.TrimSpace(fmt.Sprintf("%T %#v", v, v))
}

// sessionScope fills the process's options of a session opened on the
// host with the host's, and refuses any set to something else: a shared
// process cannot honour them (docs/behaviour.md#runtime-host).
func (h *Host) sessionScope(o *Options) error {
	ho := h.opts
	var err error
	for _, f := range processScope() {
		if f.set(o) && !f.same(o, &ho) {
			err = errors.Join(err, &OptionsError{Field: f.name, Reason: "is the host's: a session on a shared process cannot set another (leave it zero)"})
		}
	}
	if o.VerifyCredential {
		err = errors.Join(err, &OptionsError{Field: "VerifyCredential", Reason: "is not offered on a shared process"})
	}
	set, hs := &o.Settings, ho.Settings
	if hs.Sandbox.Enabled && slices.ContainsFunc(set.Session.AdditionalDirectories, func(d string) bool {
		return !slices.Contains(hs.Session.AdditionalDirectories, d)
	}) {
		// The sandbox is the process's: only the host's directories are
		// writable in it.
		err = errors.Join(err, &OptionsError{Field: "Settings.Session.AdditionalDirectories",
			Reason: "names a directory the host's sandbox does not make writable (the host's Settings.Session.AdditionalDirectories)"})
	}
	if err != nil {
		var oe *OptionsError
		errors.As(err, &oe) // the first; every one is logged
		h.log.Debug("session options refused on a shared process", "error", err)
		return oe
	}
	for _, f := range processScope() {
		f.take(o, &ho)
	}
	return nil
}

// sameValue reports whether a and b are the same value; values of a type
// that cannot be compared are not.
func sameValue(a, b any) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}
