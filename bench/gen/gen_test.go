package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func generate(t *testing.T, c config) []byte {
	t.Helper()
	c.out = filepath.Join(t.TempDir(), "out")
	if c.seed == 0 {
		c.seed = 1
	}
	if c.noiseRate == 0 {
		c.noiseRate = 0.05
	}
	if err := run(c); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(c.out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestStreamIsDeterministicAndValid(t *testing.T) {
	a := generate(t, config{kind: "stream", size: 2e6})
	b := generate(t, config{kind: "stream", size: 2e6})
	if !bytes.Equal(a, b) {
		t.Fatal("the same seed gave different bytes")
	}
	if c := generate(t, config{kind: "stream", size: 2e6, seed: 2}); bytes.Equal(a, c) {
		t.Fatal("another seed gave the same bytes")
	}
	types := map[string]int{}
	kinds := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(a))
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %d is not JSON: %v", n+1, err)
		}
		types[ev["type"].(string)]++
		if ev["type"] == "approval_request" {
			kinds[ev["kind"].(string)]++
		}
		n++
	}
	if share := float64(types["token"]) / float64(n); share < 0.6 || share > 0.8 {
		t.Errorf("token share %.2f, want about 0.7", share)
	}
	for _, ty := range []string{"ready", "tool_call", "tool_result", "approval_request", "status", "message_end", "agent_message", "thinking", "file_changed"} {
		if types[ty] == 0 {
			t.Errorf("no %s event in %d lines", ty, n)
		}
	}
	for _, k := range []string{"shell_command", "file_write", "tool_action", "route_approval"} {
		if kinds[k] == 0 {
			t.Errorf("no %s prompt", k)
		}
	}
}

func TestDotNetAndNoise(t *testing.T) {
	plain := generate(t, config{kind: "stream", size: 1e6})
	dn := generate(t, config{kind: "stream", size: 1e6, dotnet: true})
	if bytes.Equal(plain, dn) || !bytes.Contains(dn, []byte(`\u0022`)) || !bytes.Contains(dn, []byte(`\u002B`)) {
		t.Fatal("-dotnet did not escape as .NET does")
	}
	for i, l := range bytes.Split(bytes.TrimSpace(dn), []byte("\n")) {
		for _, c := range l {
			if c >= 0x80 {
				t.Fatalf("line %d has a non-ASCII byte", i+1)
			}
		}
	}
	// Same seed, same events: decoding both gives the same values. The .NET form is
	// longer, so it reaches -size in fewer lines.
	pl, dl := bytes.Split(plain, []byte("\n")), bytes.Split(dn, []byte("\n"))
	if len(dl) < len(pl)/2 {
		t.Fatalf("%d lines plain, only %d with -dotnet", len(pl), len(dl))
	}
	for i := range dl {
		var a, b any
		if len(dl[i]) == 0 {
			continue
		}
		json.Unmarshal(pl[i], &a)
		json.Unmarshal(dl[i], &b)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) {
			t.Fatalf("line %d decodes differently with -dotnet", i+1)
		}
	}
	noisy := generate(t, config{kind: "stream", size: 1e6, noise: true})
	bad := 0
	for _, l := range bytes.Split(bytes.TrimSpace(noisy), []byte("\n")) {
		var v map[string]any
		if json.Unmarshal(l, &v) != nil {
			bad++
		}
	}
	if bad == 0 {
		t.Fatal("-noise wrote no non-JSON line")
	}
}

func TestEnvelopeAndPrompts(t *testing.T) {
	env := generate(t, config{kind: "envelope", size: 500e3})
	var e struct {
		ProtocolVersion int              `json:"protocolVersion"`
		Items           []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(env, &e); err != nil {
		t.Fatal(err)
	}
	if e.ProtocolVersion != 1 || len(e.Items) < 1000 || e.Items[0]["sessionId"] == nil {
		t.Fatalf("envelope: version %d, %d items", e.ProtocolVersion, len(e.Items))
	}
	p := generate(t, config{kind: "prompts", n: 300})
	if got := bytes.Count(p, []byte(`"type":"approval_request"`)); got != 300 {
		t.Fatalf("%d prompts, want 300", got)
	}
	pol := generate(t, config{kind: "policy", rules: 200})
	if got := bytes.Count(pol, []byte("\n  - name: ")); got != 200 {
		t.Fatalf("%d rules, want 200", got)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"200MB": 200e6, "1GiB": 1 << 30, "64KiB": 64 << 10, "10M": 10e6, "512": 512, "1.5GB": 1.5e9} {
		got, err := parseSize(in)
		if err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MB", "-1MB", "ten"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q): no error", in)
		}
	}
}

// FuzzParseSize: any -size text gives an error or a positive size, never a panic.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"200MB", "1GiB", "0.5K", "1e3MB", "NaNMB", "-0B", "9e30GiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseSize(s)
		if err == nil && n <= 0 {
			t.Fatalf("parseSize(%q) = %d without an error", s, n)
		}
	})
}
