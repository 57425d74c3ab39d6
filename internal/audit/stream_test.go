package audit

import (
	"errors"
	"strings"
	"testing"
)

// chainOf seals records into one chain, as a writer to the stream does.
func chainOf(summaries ...string) (data []byte, last string) {
	var prev *string
	for _, s := range summaries {
		line, h := Seal(Encode(&Record{Time: "t", Type: "approval_request", Summary: s, Decision: "allow", Decider: "rule", Policy: "p", Prev: prev}))
		data = append(append(data, line...), '\n')
		prev, last = &h, h
	}
	return data, last
}

func TestHashOf(t *testing.T) {
	data, last := chainOf("a")
	line := strings.TrimSuffix(string(data), "\n")
	for _, c := range []struct {
		name, line, want string
	}{
		{"sealed", line, last},
		{"no hash", `{"a":1}`, ""},
		{"short", `"}`, ""},
		{"hash not last", strings.Replace(line, `,"hash":`, `,"x":`, 1), ""},
		{"empty", "", ""},
	} {
		if got := HashOf([]byte(c.line)); got != c.want {
			t.Errorf("%s: HashOf = %q, want %q", c.name, got, c.want)
		}
	}
}

// Every chain of a stream is verified on its own, named by its subject; the first that breaks
// stops the check, and --head must be the line of some chain.
func TestVerifyStream(t *testing.T) {
	a, lastA := chainOf("a1", "a2", "a3")
	b, lastB := chainOf("b1")
	logs := []ChainLog{{Subject: "fr.audit.ci.a", Data: a, Lines: 3}, {Subject: "fr.audit.ci.b", Data: b, Lines: 1}}
	res, err := VerifyStream("nats://h:1/S", logs, "")
	if err != nil || len(res) != 2 || res[0].Subject != "fr.audit.ci.a" || res[0].Lines != 3 || res[0].Last != lastA ||
		res[1].Last != lastB || res[1].File != "nats://h:1/S" || !res[1].OK {
		t.Fatalf("intact stream: %+v, %v", res, err)
	}
	res, err = VerifyStream("nats://h:1/S", logs, lastB)
	if err != nil || res[0].Since != nil || res[1].Since == nil || *res[1].Since != 0 {
		t.Errorf("--head of the second chain: %+v, %v", res, err)
	}
	if _, err := VerifyStream("nats://h:1/S", logs, "sha256:"+strings.Repeat("0", 64)); !errors.Is(err, ErrHeadNotFound) {
		t.Errorf("a head no chain holds: %v", err)
	}
	// b's line moved into a's chain does not chain there
	bad := []ChainLog{{Subject: "fr.audit.ci.a", Data: append(append([]byte(nil), a...), b...)}, logs[1]}
	res, err = VerifyStream("nats://h:1/S", bad, "")
	var ce *ChainError
	if !errors.As(err, &ce) || ce.File != "nats://h:1/S#fr.audit.ci.a" || ce.Line != 4 || len(res) != 0 {
		t.Errorf("a line moved between chains: %+v, %v", res, err)
	}
	if _, err := VerifyStream("nats://h:1/S", nil, ""); !errors.Is(err, ErrNoLines) {
		t.Errorf("an empty stream: %v", err)
	}
}
