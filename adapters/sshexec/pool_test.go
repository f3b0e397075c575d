package sshexec

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

type fakeLauncher struct{ host string }

func (f fakeLauncher) Prepare(ports.LaunchRequest) (ports.Plan, error) { return fakePlan(f), nil }

type fakePlan struct{ host string }

func (p fakePlan) Target() ports.Target { return ports.Target{Host: p.host} }
func (p fakePlan) Start(context.Context, []string) (ports.Process, error) {
	return fakeProc{}, nil
}

type fakeProc struct{ ports.Process }

func (fakeProc) Release() error { return nil }

func TestPoolLeastLoadedWithinCap(t *testing.T) {
	p := NewPool([]HostLauncher{{"a", fakeLauncher{"a"}}, {"b", fakeLauncher{"b"}}}, 1)
	var procs []ports.Process
	var hosts []string
	for i := 0; i < 2; i++ {
		pl, err := p.Prepare(ports.LaunchRequest{})
		if err != nil {
			t.Fatal(err)
		}
		proc, err := pl.Start(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		procs = append(procs, proc)
		hosts = append(hosts, pl.Target().Host)
	}
	if strings.Join(hosts, ",") != "a,b" {
		t.Fatalf("hosts %v", hosts)
	}
	if _, err := p.Prepare(ports.LaunchRequest{}); !errors.Is(err, domain.KindPortExit) {
		t.Fatalf("full pool: %v", err)
	}
	_ = procs[1].Release()
	_ = procs[1].Release()
	pl, err := p.Prepare(ports.LaunchRequest{})
	if err != nil || pl.Target().Host != "b" {
		t.Fatalf("after release: %v %v", pl, err)
	}
	if p.Running("b") != 0 || p.Running("a") != 1 {
		t.Fatalf("running a=%d b=%d", p.Running("a"), p.Running("b"))
	}
}

func TestArgvIsTheTablesAndCarriesNoValue(t *testing.T) {
	l := New(Options{Host: "u@h:2222", ConfigFile: "cfg", StrictHostKeyChecking: "bogus", PassEnv: []string{"S"},
		LookupEnv: func(string) (string, bool) { return "secret-value", true }})
	pl, err := l.Prepare(ports.LaunchRequest{Command: []string{"agent", "--acp"}, Workspace: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	argv, pre := pl.(*plan).argv()
	want := []string{"-F", "cfg", "-o", "StrictHostKeyChecking=accept-new", "-o", "BatchMode=yes", "-o", "ConnectTimeout=30",
		"-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3", "--", "ssh://u@h:2222"}
	if strings.Join(argv[:len(want)], " ") != strings.Join(want, " ") || len(argv) != len(want)+1 {
		t.Fatalf("argv %q", argv)
	}
	if strings.Contains(strings.Join(argv, " "), "secret-value") || !strings.Contains(string(pre), "secret-value") {
		t.Fatal("the value must travel in the preamble only")
	}
}
