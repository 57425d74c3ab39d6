package scenario

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseFaults(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want Faults
		err  string
	}{
		{"", Faults{}, ""},
		{"dotnet, crlf", Faults{DotNet: true, CRLF: true}, ""},
		{"noise", Faults{Noise: DefaultNoise, NoiseEvery: 4}, ""},
		{"noise=2", Faults{Noise: DefaultNoise, NoiseEvery: 2}, ""},
		{"split", Faults{Split: &Split{Bytes: 7, Pause: Duration(5 * time.Millisecond)}}, ""},
		{"split=3/0s", Faults{Split: &Split{Bytes: 3}}, ""},
		{"version=2,unknown-kind", Faults{ProtocolVersion: 2, UnknownKind: "sim_unknown_kind"}, ""},
		{"unknown-kind=ssh", Faults{UnknownKind: "ssh"}, ""},
		{"big,crash,flood=10", Faults{Big: 50_000_000, CrashAfter: 10, Flood: 10}, ""},
		{"crash=0", Faults{CrashAfter: 1}, ""},
		{"split=0", Faults{}, "not a byte count"},
		{"split=4/soon", Faults{}, "bad pause"},
		{"flood=many", Faults{}, `fault flood: "many" is not a whole number`},
		{"dotnot", Faults{}, `unknown fault "dotnot"`},
	} {
		got, err := ParseFaults(tc.spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseFaults(%q) error %v, want %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseFaults(%q) = %+v, %v; want %+v", tc.spec, got, err, tc.want)
		}
	}
}

func TestFromEnv(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(p, []byte("version: 1\nmodel: m\nfaults: {crlf: true, flood: 3}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{EnvScenario: p, EnvFaults: "dotnet,flood=5"}
	s, err := FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if s.Model != "m" || !s.Faults.CRLF || !s.Faults.DotNet || s.Faults.Flood != 5 {
		t.Errorf("merged faults %+v", s.Faults)
	}
	env[EnvFaults] = "bogus"
	if _, err := FromEnv(func(k string) string { return env[k] }); err == nil || !strings.HasPrefix(err.Error(), "FRSIM_FAULTS: unknown fault") {
		t.Errorf("bad faults: %v", err)
	}
	env = map[string]string{EnvPace: "0.5"}
	if pace, none, err := Pace(func(k string) string { return env[k] }); pace != 0.5 || none || err != nil {
		t.Errorf("pace %v %v %v", pace, none, err)
	}
}

func TestRecorder(t *testing.T) {
	p := filepath.Join(t.TempDir(), "rec.jsonl")
	r, err := OpenRecorder(p)
	if err != nil {
		t.Fatal(err)
	}
	r.Record("repl", []byte(`{ "type" : "approval_response", "approved": true }`))
	r.Record("run", []byte("plain \"text\""))
	_ = r.Close()
	b, _ := os.ReadFile(p)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], `"mode":"repl","line":{"type":"approval_response","approved":true}}`) ||
		!strings.HasSuffix(lines[1], `"mode":"run","text":"plain \"text\""}`) {
		t.Errorf("record:\n%s", b)
	}
	var nilRec *Recorder
	nilRec.Record("x", []byte("y")) // a nil Recorder records nothing
}
