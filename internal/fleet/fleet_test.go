package fleet

import (
	"bytes"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/urfave/cli/v2"
)

func TestParseTask(t *testing.T) {
	for _, c := range []struct {
		in, id, err string
	}{
		{`{"taskId":"a-1","task":"fix it","pool":"default"}`, "a-1", ""},
		{`not json`, "", "not a JSON object"},
		{`["a"]`, "", "not a JSON object"},
		{`{"taskId":"a 1","task":"x"}`, "", "not valid"},
		{`{"taskId":"a-1","task":"  \n"}`, "a-1", "the task is empty"},
		{`{"taskId":"a-1"}`, "a-1", "the task is empty"},
		{`{"taskId":7,"task":"x"}`, "", "does not read"},
	} {
		got, err := ParseTask([]byte(c.in))
		if got.TaskID != c.id {
			t.Errorf("%s: id %q, want %q", c.in, got.TaskID, c.id)
		}
		if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: error %v, want %q", c.in, err, c.err)
		}
	}
}

func FuzzParseTask(f *testing.F) {
	f.Add([]byte(`{"taskId":"a-1","task":"fix it","pool":"default"}`))
	f.Add([]byte(`{"taskId":"a-1","task":""}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ParseTask(b)
		if err == nil && (!ValidName(got.TaskID) || strings.TrimSpace(got.Task) == "") {
			t.Fatalf("accepted %q as %+v", b, got)
		}
		if got.TaskID != "" && !ValidName(got.TaskID) {
			t.Fatalf("returned an invalid id %q", got.TaskID)
		}
	})
}

// Split then Join gives the event back, whatever the order its parts arrive in and however
// often a part is repeated.
func FuzzSplitJoin(f *testing.F) {
	f.Add([]byte(`{"type":"tool_call"}`), uint16(1024), int64(1))
	f.Add(bytes.Repeat([]byte("x"), 10000), uint16(1500), int64(7))
	f.Fuzz(func(t *testing.T, data []byte, max uint16, seed int64) {
		limit := int64(max) + headroom
		parts := Split(data, limit)
		for _, p := range parts {
			if len(parts) > 1 && int64(len(p)) > limit-headroom && len(p) > 1024 {
				t.Fatalf("a part of %d bytes over the limit %d", len(p), limit)
			}
		}
		msgs := make([]*nats.Msg, 0, len(parts)*2)
		for i, p := range parts {
			m := nats.NewMsg("fr.events.p.task.t")
			m.Header.Set(HeaderSeq, "3")
			if len(parts) > 1 {
				m.Header.Set(HeaderChunk, ChunkHeader(i, len(parts)))
			}
			m.Data = p
			msgs = append(msgs, m)
		}
		r := rand.New(rand.NewPCG(uint64(seed), 1))
		if len(msgs) > 1 {
			msgs = append(msgs, msgs[r.IntN(len(msgs))])
			r.Shuffle(len(msgs), func(i, j int) { msgs[i], msgs[j] = msgs[j], msgs[i] })
		}
		var j Joiner
		var out [][]byte
		for _, m := range msgs {
			d, done, err := j.Add(m)
			if err != nil {
				t.Fatal(err)
			}
			if done {
				out = append(out, d)
			}
		}
		if len(out) != 1 || !bytes.Equal(out[0], data) {
			t.Fatalf("joined %d events, want the one of %d bytes back", len(out), len(data))
		}
	})
}

func TestJoinerRefusesBadChunks(t *testing.T) {
	for _, v := range []string{"0/2", "3/2", "1/1", "x/2", "1-2", "1/999999999"} {
		m := nats.NewMsg("s")
		m.Header.Set(HeaderChunk, v)
		var j Joiner
		if _, _, err := j.Add(m); err == nil {
			t.Errorf("%s accepted", v)
		}
	}
}

// Tag adds the fleet's fields after the event's own and changes nothing else.
func FuzzTag(f *testing.F) {
	f.Add([]byte(`{"type":"agent_starting","agent":"coder"}`), "t-1", "h")
	f.Add([]byte(`{}`), "t", "")
	f.Add([]byte(`{"type":"x","taskId":"theirs"}`), "t", "h")
	f.Add([]byte(`{"a":"\u0022"}  `), "t", "h")
	f.Fuzz(func(t *testing.T, line []byte, task, host string) {
		out := Tag(line, [][2]string{{"taskId", task}, {"host", host}})
		var before map[string]json.RawMessage
		if json.Unmarshal(line, &before) != nil || !json.Valid(line) || bytes.TrimSpace(line)[0] != '{' {
			return
		}
		if !bytes.HasPrefix(out, bytes.TrimRight(line[:bytes.LastIndexByte(line, '}')], " \t\r\n")) && len(before) > 0 {
			t.Fatalf("the event's own bytes changed: %q -> %q", line, out)
		}
		var after map[string]json.RawMessage
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("%q -> %q: %v", line, out, err)
		}
		for k, v := range before {
			if !bytes.Equal(after[k], v) {
				t.Fatalf("field %s changed: %s -> %s", k, v, after[k])
			}
		}
		if _, had := before["taskId"]; !had && task != "" {
			var got string
			json.Unmarshal(after["taskId"], &got)
			var want string
			b, _ := json.Marshal(task)
			json.Unmarshal(b, &want)
			if got != want {
				t.Fatalf("taskId %q, want %q", got, task)
			}
		}
	})
}

func TestConnFrom(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  string
		url  string
		err  string
	}{
		{nil, "", "", ""},
		{nil, "nats://u:secret@h:4222", "nats://u:secret@h:4222", ""},
		{[]string{"--nats", "nats://u:secret@h:4222"}, "", "", "must not carry a password"},
		{[]string{"--nats", "nats://token@h:4222"}, "", "", "must not carry a password"},
		{[]string{"--nats", "http://h:4222"}, "", "", "not valid"},
		{[]string{"--nats", "nats://a:4222,nats://b:4222"}, "", "nats://a:4222,nats://b:4222", ""},
		{[]string{"--nats-user", "me"}, "", "", "need a server"},
		{[]string{"--nats", "nats://h:1", "--nats-user", "me"}, "", "", "go together"},
		{[]string{"--nats", "nats://h:1", "--nats-creds", "/nonexistent"}, "", "", "--nats-creds"},
	} {
		set := flag.NewFlagSet("t", flag.ContinueOnError)
		for _, fl := range Flags() {
			fl.Apply(set)
		}
		if err := set.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		cn, err := ConnFrom(cli.NewContext(cli.NewApp(), set, nil), func(string) string { return c.env })
		if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.err)
			continue
		}
		if err == nil && cn.URL != c.url {
			t.Errorf("%v: URL %q, want %q", c.args, cn.URL, c.url)
		}
		if strings.Contains(cn.String(), "secret") {
			t.Errorf("%v: String shows the password: %s", c.args, cn.String())
		}
	}
}
