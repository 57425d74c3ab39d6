package query

import (
	"context"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fuseraft/fr/internal/cmdutil"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		// fuseraft's query command lines, answered as fr-sim's dispatcher passes them on.
		"sim-query": func() { os.Exit(Run(context.Background(), cmdutil.OSStreams(), os.Args[1:])) },
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "testdata/script", Setup: func(e *testscript.Env) error {
		// Under -race every command would otherwise wait a second before it exits.
		e.Setenv("GORACE", "atexit_sleep_ms=0")
		return nil
	}})
}

func TestDefaultStateLoads(t *testing.T) {
	st, err := LoadState(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	complete := 0
	for _, s := range st.Sessions {
		if s.IsComplete {
			complete++
		}
		if len(s.Task) > 120 {
			t.Errorf("session %s: task longer than 120 characters", s.SessionID)
		}
	}
	if len(st.Sessions) < 12 || complete == 0 || complete == len(st.Sessions) {
		t.Errorf("want a dozen sessions, some complete: %d sessions, %d complete", len(st.Sessions), complete)
	}
	agents := 0
	for a, m := range st.Memories {
		if a != "" && len(m) > 0 {
			agents++
		}
	}
	if agents < 2 {
		t.Errorf("want memories for two agents, got %d", agents)
	}
	current, builtin, mcp, broken, nullLast := 0, 0, 0, 0, 0
	for _, m := range st.Models {
		if m.Current {
			current++
		}
	}
	for _, p := range st.Plugins {
		switch p.Source {
		case "builtin":
			builtin++
		case "mcp":
			mcp++
		}
	}
	for _, c := range st.Configs {
		if c.Error != nil {
			broken++
		}
	}
	for _, j := range st.Schedules {
		if j.LastRun == nil {
			nullLast++
		}
	}
	if current != 1 || builtin == 0 || mcp == 0 || broken == 0 || nullLast == 0 || len(st.ReplSessions) == 0 || len(st.Context[""]) == 0 {
		t.Errorf("dataset misses a case: current models %d, builtin %d, mcp %d, broken configs %d, schedules never run %d",
			current, builtin, mcp, broken, nullLast)
	}
}

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr bool
		vals    map[string]string
		pos     int
	}{
		{args: []string{"--json", "--project", "/x"}, vals: map[string]string{"project": "/x"}},
		{args: []string{"--project=/y", "--json"}, vals: map[string]string{"project": "/y"}},
		{args: []string{"--project"}, wantErr: true},
		{args: []string{"--bogus"}, wantErr: true},
		{args: []string{"--json=1"}, wantErr: true},
		{args: []string{"a", "--", "--json"}, pos: 2},
	} {
		f, err := parse(tc.args, "project", "json all")
		if (err != nil) != tc.wantErr {
			t.Errorf("%q: err = %v", tc.args, err)
			continue
		}
		for k, v := range tc.vals {
			if f.vals[k] != v {
				t.Errorf("%q: %s = %q, want %q", tc.args, k, f.vals[k], v)
			}
		}
		if !tc.wantErr && len(f.args) != tc.pos {
			t.Errorf("%q: %d arguments, want %d", tc.args, len(f.args), tc.pos)
		}
	}
}
