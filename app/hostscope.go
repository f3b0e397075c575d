package app

import (
	"errors"
	"reflect"
	"slices"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// sessionScope fills the process's options of a session opened on the
// host with the host's, and refuses any set to something else: a shared
// process cannot honour them (docs/behaviour.md#runtime-host).
func (h *Host) sessionScope(o *Options) error {
	ho := h.opts
	differs := func(field string, set, same bool) error {
		if set && !same {
			return &OptionsError{Field: field, Reason: "is the host's: a session on a shared process cannot set another (leave it zero)"}
		}
		return nil
	}
	set, hs := &o.Settings, ho.Settings
	err := errors.Join(
		differs("Launcher", o.Launcher != nil, sameValue(o.Launcher, ho.Launcher)),
		differs("Settings.Command", len(set.Command) > 0, slices.Equal(set.Command, hs.Command)),
		differs("Settings.Protocol", set.Protocol != "", set.Protocol == hs.Protocol),
		differs("Settings.Sandbox", !reflect.DeepEqual(set.Sandbox, domain.Sandbox{}), reflect.DeepEqual(set.Sandbox, hs.Sandbox)),
		differs("Settings.Hosts", len(set.Hosts) > 0, slices.Equal(set.Hosts, hs.Hosts)),
		differs("MeasurementSources", len(o.MeasurementSources) > 0, slices.EqualFunc(o.MeasurementSources, ho.MeasurementSources, func(a, b ports.MeasurementSource) bool { return sameValue(a, b) })),
		differs("ClientName", o.ClientName != "", o.ClientName == ho.ClientName),
		differs("ClientVersion", o.ClientVersion != "", o.ClientVersion == ho.ClientVersion),
	)
	if o.VerifyCredential {
		err = errors.Join(err, &OptionsError{Field: "VerifyCredential", Reason: "is not offered on a shared process"})
	}
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
	o.Launcher, set.Command, set.Protocol, set.Sandbox, set.Hosts = ho.Launcher, hs.Command, hs.Protocol, hs.Sandbox, hs.Hosts
	o.MeasurementSources, o.ClientName, o.ClientVersion = nil, ho.ClientName, ho.ClientVersion
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
