package arrival

import (
	"encoding/json"
	"github.com/fuseraft/fr/pkg/wire"
	"strings"
	"testing"
	"time"
)

func TestStamp(t *testing.T) {
	at := time.Date(2026, 12, 3, 22, 0, 1, 123456789, time.UTC)
	cases := []struct{ in, want string }{
		{`{"type":"token","text":"a"}`, `{"type":"token","text":"a","frArrivedAt":"2026-12-03T22:00:01.123456789Z"}`},
		{`{}`, `{"frArrivedAt":"2026-12-03T22:00:01.123456789Z"}`},
		{`{"type":"x"}` + "\r", `{"type":"x","frArrivedAt":"2026-12-03T22:00:01.123456789Z"}`},
		{`{"type":"x" }`, `{"type":"x","frArrivedAt":"2026-12-03T22:00:01.123456789Z"}`},
		{`plain text`, `plain text`},
		{`[1,2]`, `[1,2]`},
		{`{"broken":`, `{"broken":`},
		{`{"a":1} {"b":2}`, `{"a":1} {"b":2}`},
		{``, ``},
	}
	s := New(func() time.Time { return at })
	for _, c := range cases {
		got := string(s.Line([]byte(c.in)))
		if got != c.want {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.want)
		}
		if got != c.in {
			if !json.Valid([]byte(got)) {
				t.Errorf("Line(%q) = %q: not JSON", c.in, got)
			}
			back, ok := Read([]byte(got))
			if !ok || !back.Equal(at) {
				t.Errorf("Read(%q) = %v, %v; want %v", got, back, ok, at)
			}
		}
	}
	var nilStamper *Stamper
	if got := string(nilStamper.Line([]byte(`{"a":1}`))); got != `{"a":1}` {
		t.Errorf("nil Stamper changed the line: %q", got)
	}
}

func TestRead(t *testing.T) {
	cases := []struct {
		in   string
		want string // "" for none
	}{
		{`{"type":"x","frArrivedAt":"2026-01-02T03:04:05Z"}`, "2026-01-02T03:04:05Z"},
		{`{"frArrivedAt":"2026-01-02T03:04:05.5Z","type":"x","text":"` + string(make([]byte, 0)) + `aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}`, "2026-01-02T03:04:05.5Z"},
		{`{"type":"x","text":"\"frArrivedAt\":\"2026-01-02T03:04:05Z\"}"}`, ""},
		{`{"type":"x","frArrivedAt":"yesterday"}`, ""},
		{`{"type":"x","frArrivedAt":12}`, ""},
		{`{"type":"x"}`, ""},
		{`not json "frArrivedAt":"2026-01-02T03:04:05Z"`, ""},
	}
	for _, c := range cases {
		got, ok := Read([]byte(c.in))
		if c.want == "" {
			if ok {
				t.Errorf("Read(%q) = %v, want none", c.in, got)
			}
			continue
		}
		want, _ := time.Parse(time.RFC3339Nano, c.want)
		if !ok || !got.Equal(want) {
			t.Errorf("Read(%q) = %v, %v; want %v", c.in, got, ok, want)
		}
	}
}

func FuzzStamp(f *testing.F) {
	f.Add([]byte(`{"type":"token","text":"a"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"type":"token","text":"` + strings.Repeat("é", 1<<19) + `"} `))
	f.Add([]byte(`{"a":"\"frArrivedAt\":\"2026-01-02T03:04:05Z\"}"}`))
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	f.Fuzz(func(t *testing.T, b []byte) {
		s := New(func() time.Time { return at })
		in := append([]byte(nil), b...)
		out := s.Line(b)
		if string(b) != string(in) {
			t.Fatalf("Line changed its input")
		}
		// Event, which does not parse the line again, stamps an event line as Line does.
		if wire.ParseLine(in).Kind == wire.EventLine {
			if ev := s.Event(b); string(ev) != string(out) {
				t.Fatalf("Event(%q) = %q, Line gives %q", in, ev, out)
			}
		}
		if string(out) == string(in) {
			return
		}
		var before, after map[string]any
		if json.Unmarshal(in, &before) != nil {
			t.Fatalf("stamped a line that is not a JSON object: %q", in)
		}
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("stamped line is not JSON: %q: %v", out, err)
		}
		if got, ok := Read(out); !ok || !got.Equal(at) {
			t.Fatalf("Read(%q) = %v, %v", out, got, ok)
		}
		delete(after, Field)
		delete(before, Field)
		a, _ := json.Marshal(before)
		c, _ := json.Marshal(after)
		if string(a) != string(c) {
			t.Fatalf("stamping changed the other fields: %s -> %s", a, c)
		}
	})
}
