package sshexec

import (
	"context"
	"errors"
	"runtime"
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
	if p.host == "failing" {
		return nil, domain.NewError(domain.KindPortExit, "start failed")
	}
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
	// The plan reserved b's slot.
	if p.Running("b") != 1 || p.Running("a") != 1 {
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

// TestPoolPrepareReservesTheSlot: two plans prepared before either starts
// go to two hosts of cap 1, so both start.
func TestPoolPrepareReservesTheSlot(t *testing.T) {
	p := NewPool([]HostLauncher{{"a", fakeLauncher{"a"}}, {"b", fakeLauncher{"b"}}}, 1)
	var plans []ports.Plan
	for i := 0; i < 2; i++ {
		pl, err := p.Prepare(ports.LaunchRequest{})
		if err != nil {
			t.Fatalf("prepare %d: %v", i, err)
		}
		plans = append(plans, pl)
	}
	got := map[string]int{}
	for i, pl := range plans {
		proc, err := pl.Start(context.Background(), nil)
		if err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
		t.Cleanup(func() { _ = proc.Release() })
		got[pl.Target().Host]++
	}
	if got["a"] != 1 || got["b"] != 1 {
		t.Fatalf("sessions per host %v, want one on each", got)
	}
}

// TestPoolReservationIsGivenBack: a slot reserved by Prepare comes back
// when the plan's Start fails, when the plan is discarded, or when it is
// dropped unstarted; a plan started again takes a fresh slot.
func TestPoolReservationIsGivenBack(t *testing.T) {
	tests := []struct {
		name string
		host string
		drop func(t *testing.T, pl ports.Plan)
	}{
		{"start fails", "failing", func(t *testing.T, pl ports.Plan) {
			if _, err := pl.Start(context.Background(), nil); !errors.Is(err, domain.KindPortExit) {
				t.Fatalf("start: %v", err)
			}
		}},
		{"discarded", "a", func(t *testing.T, pl ports.Plan) { pl.(interface{ Discard() }).Discard() }},
		{"released", "a", func(t *testing.T, pl ports.Plan) {
			proc, err := pl.Start(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			pl.(interface{ Discard() }).Discard() // a started plan's slot is the session's
			if n := pl.(*poolPlan).res.pool.Running(pl.(*poolPlan).res.host); n != 1 {
				t.Fatalf("running %d while the session runs", n)
			}
			_ = proc.Release()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPool([]HostLauncher{{tt.host, fakeLauncher{tt.host}}}, 1)
			pl, err := p.Prepare(ports.LaunchRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if n := p.Running(tt.host); n != 1 {
				t.Fatalf("running %d after Prepare, want the reservation", n)
			}
			tt.drop(t, pl)
			if n := p.Running(tt.host); n != 0 {
				t.Fatalf("running %d, want the slot given back", n)
			}
			if tt.host == "failing" {
				return
			}
			// Started again, the plan takes a fresh slot within the cap.
			proc, err := pl.Start(context.Background(), nil)
			if err != nil {
				t.Fatalf("second start: %v", err)
			}
			if _, err := p.Prepare(ports.LaunchRequest{}); !errors.Is(err, domain.KindPortExit) {
				t.Fatalf("prepare on a full host: %v", err)
			}
			_ = proc.Release()
			if n := p.Running(tt.host); n != 0 {
				t.Fatalf("running %d after release", n)
			}
		})
	}
}

// TestPoolDroppedPlanGivesItsSlotBack: a plan neither started nor
// discarded gives its slot back once the garbage collector finds it
// unreachable.
func TestPoolDroppedPlanGivesItsSlotBack(t *testing.T) {
	p := NewPool([]HostLauncher{{"a", fakeLauncher{"a"}}}, 1)
	func() {
		if _, err := p.Prepare(ports.LaunchRequest{}); err != nil {
			t.Fatal(err)
		}
	}()
	for i := 0; i < 100 && p.Running("a") != 0; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if n := p.Running("a"); n != 0 {
		t.Fatalf("running %d after the plan was dropped", n)
	}
}
