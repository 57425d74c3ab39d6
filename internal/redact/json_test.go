package redact

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestJSON(t *testing.T) {
	r, err := New(Options{Values: []string{"s3cr3t-value"}})
	if err != nil {
		t.Fatal(err)
	}
	tok := "ghp_" + strings.Repeat("a", 36)
	tests := []struct{ in, want string }{
		{`{"b":1,"a":"nothing here"}`, `{"b":1,"a":"nothing here"}`},
		{`{"z":"x s3cr3t-value y","a":2}`, `{"z":"x [REDACTED] y","a":2}`},
		{`{ "tok" : "` + tok + `" , "n":null}`, `{ "tok" : "[REDACTED]" , "n":null}`},
		// a secret spelled with escapes is still found
		{`{"t":"s3cr3t\u002Dvalue"}`, `{"t":"[REDACTED]"}`},
		{`{"esc":"a\"b","k":"s3cr3t-value"}`, `{"esc":"a\"b","k":"[REDACTED]"}`},
		{`["s3cr3t-value",1]`, `["[REDACTED]",1]`},
		{`{"s3cr3t-value":1}`, `{"[REDACTED]":1}`},
		{`{"cut":"s3cr3t-value`, `{"cut":"[REDACTED]`},
	}
	for _, tt := range tests {
		got := string(r.JSON([]byte(tt.in)))
		if got != tt.want {
			t.Errorf("JSON(%s) = %s, want %s", tt.in, got, tt.want)
		}
		if json.Valid([]byte(tt.in)) && !json.Valid([]byte(got)) {
			t.Errorf("JSON(%s) = %s is no longer JSON", tt.in, got)
		}
	}
}

func TestLineWriter(t *testing.T) {
	r, _ := New(Options{Values: []string{"s3cr3t-value"}})
	var out bytes.Buffer
	w := NewLineWriter(&out, r)
	w.Write([]byte(`{"a":"s3cr3t-`))
	if out.Len() != 0 {
		t.Fatalf("a half line went through: %q", out.String())
	}
	w.Write([]byte("value\"}\nplain s3cr3t-value text\nlast s3cr3t-value"))
	w.Close()
	want := "{\"a\":\"[REDACTED]\"}\nplain [REDACTED] text\nlast [REDACTED]"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

func FuzzJSON(f *testing.F) {
	f.Add([]byte(`{"a":"s3cr3t-value","b":[1,"x"]}`))
	f.Add([]byte(`"\\"s3cr3t-value`))
	r, _ := New(Options{Values: []string{"s3cr3t-value"}})
	f.Fuzz(func(t *testing.T, b []byte) {
		got := r.JSON(b)
		if json.Valid(b) {
			if !json.Valid(got) {
				t.Fatalf("JSON(%q) = %q is not JSON", b, got)
			}
			var v any
			json.Unmarshal(got, &v)
			s, _ := json.Marshal(v)
			if bytes.Contains(s, []byte("s3cr3t-value")) {
				t.Fatalf("JSON(%q) = %q still holds the secret", b, got)
			}
		}
	})
}
