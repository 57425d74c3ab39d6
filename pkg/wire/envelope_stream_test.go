package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// streamed is what ReadEnvelope reported.
type streamed struct {
	head  EnvelopeHead
	items []string
	err   error
}

func streamEnvelope(r io.Reader, allow bool) streamed {
	var s streamed
	s.head, s.err = ReadEnvelope(r, allow, func(raw []byte) error {
		s.items = append(s.items, string(raw))
		return nil
	})
	return s
}

// hasDuplicateKey reports whether b is a JSON object with a top-level key given twice: the one
// input where ReadEnvelope (refuses) and DecodeEnvelope (keeps the last) part ways on purpose.
func hasDuplicateKey(b []byte) bool {
	d := json.NewDecoder(bytes.NewReader(b))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		k, _ := tok.(string)
		if seen[k] {
			return true
		}
		seen[k] = true
		var v json.RawMessage
		if d.Decode(&v) != nil {
			return false
		}
	}
	return false
}

// checkAgree compares ReadEnvelope, through several ways of cutting the input into reads,
// with DecodeEnvelope on the same bytes.
func checkAgree(t *testing.T, in []byte, chunked bool) {
	env, derr := DecodeEnvelope(in)
	var dve *VersionError
	var dpe *ProtocolError
	decodedOK := derr == nil || errors.As(derr, &dve)
	if derr != nil && !errors.As(derr, &dve) && !errors.As(derr, &dpe) {
		t.Fatalf("DecodeEnvelope(%q): unexpected error type %T", in, derr)
	}
	dup := hasDuplicateKey(in)
	readers := map[string]func() io.Reader{
		"whole":    func() io.Reader { return bytes.NewReader(in) },
		"one byte": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(in)) },
		"halves":   func() io.Reader { return iotest.HalfReader(bytes.NewReader(in)) },
	}
	if !chunked {
		delete(readers, "one byte")
		delete(readers, "halves")
	}
	for name, r := range readers {
		got := streamEnvelope(r(), true)
		var pe *ProtocolError
		if got.err != nil && !errors.As(got.err, &pe) {
			t.Fatalf("%s: ReadEnvelope(%q): unexpected error type %T: %v", name, in, got.err, got.err)
		}
		if dup {
			if got.err == nil {
				t.Fatalf("%s: ReadEnvelope(%q) took a duplicate field", name, in)
			}
			continue
		}
		if (got.err == nil) != decodedOK {
			t.Fatalf("%s: %q: ReadEnvelope error %v, DecodeEnvelope error %v", name, in, got.err, derr)
		}
		if got.err != nil {
			continue
		}
		var want []string
		for _, it := range env.Items {
			want = append(want, string(it))
		}
		if env.Item != nil {
			want = append(want, string(env.Item))
		}
		if strings.Join(got.items, "\x00") != strings.Join(want, "\x00") || len(got.items) != len(want) {
			t.Fatalf("%s: %q: streamed %q, decoded %q", name, in, got.items, want)
		}
		if got.head.Shape != env.Shape() || got.head.ProtocolVersion != env.ProtocolVersion {
			t.Fatalf("%s: %q: head %+v, decoded shape %s version %d", name, in, got.head, env.Shape(), env.ProtocolVersion)
		}
		if (got.head.Error == nil) != (env.Error == nil) || (env.Error != nil && *got.head.Error != *env.Error) {
			t.Fatalf("%s: %q: error %v, decoded %v", name, in, got.head.Error, env.Error)
		}
		// Without --any-version: a supported version reads the same, an unsupported one is
		// a *VersionError, as DecodeEnvelope says.
		strict := streamEnvelope(bytes.NewReader(in), false)
		var sve *VersionError
		if (derr == nil) != (strict.err == nil) || (dve != nil && !errors.As(strict.err, &sve)) {
			t.Fatalf("%q: strict ReadEnvelope error %v, DecodeEnvelope error %v", in, strict.err, derr)
		}
	}
}

var envelopeSeeds = []string{
	`{"protocolVersion":1,"items":[{"a":1},{"b":[2,3]}]}`,
	`{"protocolVersion":1,"item":{"configPath":"/p"}}`,
	`{"protocolVersion":1,"error":"boom"}`,
	`{"protocolVersion":1,"items":[]}`,
	` { "items" : [ 1 , -2.5e+3 , "x\"y" , true , null , [ ] , { } ] , "protocolVersion" : 1 } ` + "\r\n",
	`{"protocolVersion":2,"items":[{}]}`,
	`{"protocolVersion":null,"items":[]}`,
	`{"protocolVersion":1.0,"items":[]}`,
	`{"protocolVersion":"1","items":[]}`,
	`{"protocolVersion":1,"items":[1,]}`,
	`{"protocolVersion":1,"items":[01]}`,
	`{"protocolVersion":1,"items":[-]}`,
	`{"protocolVersion":1,"items":[1.]}`,
	`{"protocolVersion":1,"items":[1e]}`,
	`{"protocolVersion":1,"items":["\u00E9\uD83D\uDE00 \u0022"]}`,
	`{"protocolVersion":1,"items":["bad \x escape"]}`,
	"{\"protocolVersion\":1,\"items\":[\"tab\tinside\"]}",
	`{"protocolVersion":1,"items":["` + "\xff\xfe" + `"]}`,
	`{"protocolVersion":1,"item":null}`,
	`{"protocolVersion":1,"error":null}`,
	`{"protocolVersion":1,"items":null}`,
	`{"protocolVersion":1,"items":[],"items":[1]}`,
	`{"protocolVersion":1,"\u0069tems":[7]}`,
	`{"protocolVersion":1,"items":[],"extra":{"x":[1,{"y":null}]}}`,
	`{"protocolVersion":1,"items":[]}{}`,
	`{"protocolVersion":1,"items":[]} x`,
	`{"protocolVersion":1,"items":[{"a":1}`,
	`{"protocolVersion":1,}`,
	`{,"protocolVersion":1}`,
	`{}`,
	`[]`,
	`null`,
	``,
	"\ufeff{\"protocolVersion\":1,\"items\":[]}",
	`{"protocolVersion":1,"items":[truex]}`,
	`{"protocolVersion":1,"items":[tru]}`,
	`{"protocolVersion":1 "items":[]}`,
	`{"protocolVersion":9223372036854775808,"items":[]}`,
	`{"protocolVersion":-0,"items":[]}`,
}

func FuzzReadEnvelope(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkAgree(t, in, true)
	})
}

func TestReadEnvelopeDeepNesting(t *testing.T) {
	for _, depth := range []int{9997, 9998, 9999, 10000} {
		in := `{"protocolVersion":1,"items":[` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `]}`
		checkAgree(t, []byte(in), false) // one-byte reads of 20000 brackets would be slow
	}
}

// TestReadEnvelopeBigItem: an item far larger than a block, arriving in small reads, is
// passed on whole, and memory follows the item, not the envelope.
func TestReadEnvelopeBigItem(t *testing.T) {
	big := strings.Repeat("x\\u0022", 3<<20)
	in := `{"protocolVersion":1,"items":[{"out":"` + big + `"},{"n":12345}]}`
	got := streamEnvelope(iotest.HalfReader(strings.NewReader(in)), false)
	if got.err != nil || len(got.items) != 2 || got.items[0] != `{"out":"`+big+`"}` || got.items[1] != `{"n":12345}` {
		t.Fatalf("err %v, %d items", got.err, len(got.items))
	}
}

// TestReadEnvelopeItemsAsTheyCome: each item is passed on as soon as its bytes are read,
// before the rest of the envelope exists.
func TestReadEnvelopeItemsAsTheyCome(t *testing.T) {
	pr, pw := io.Pipe()
	items := make(chan string, 4)
	done := make(chan error, 1)
	go func() {
		_, err := ReadEnvelope(pr, false, func(raw []byte) error { items <- string(raw); return nil })
		done <- err
	}()
	if _, err := io.WriteString(pw, `{"protocolVersion":1,"items":[{"a":1},`); err != nil {
		t.Fatal(err)
	}
	if got := <-items; got != `{"a":1}` {
		t.Fatalf("first item %q", got)
	}
	_, _ = io.WriteString(pw, `{"b":2}]}`)
	pw.Close()
	if got := <-items; got != `{"b":2}` {
		t.Fatalf("second item %q", got)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestReadEnvelopeDuplicateField(t *testing.T) {
	_, err := ReadEnvelope(strings.NewReader(`{"protocolVersion":1,"items":[],"items":[]}`), false, func([]byte) error { return nil })
	var pe *ProtocolError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), `"items" twice`) {
		t.Fatalf("err %v", err)
	}
}

// failingReader fails after its data.
type failingReader struct {
	r   io.Reader
	err error
}

func (e failingReader) Read(b []byte) (int, error) {
	n, err := e.r.Read(b)
	if err == io.EOF {
		return n, e.err
	}
	return n, err
}

func TestReadEnvelopeReadError(t *testing.T) {
	boom := errors.New("read failed")
	_, err := ReadEnvelope(failingReader{strings.NewReader(`{"protocolVersion":1,"items":[{"a"`), boom}, false, func([]byte) error { return nil })
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want the read error", err)
	}
}

func BenchmarkReadEnvelope(b *testing.B) {
	item := `{"sessionId":"a3f9c2e1-5b7d-4e0a-9c11-2f6d8b4e7a01","task":"Add retry with exponential backoff to the HTTP client","workingDirectory":"/home/dev/src/brewer","configPath":"/home/dev/src/brewer/.fuseraft/config/dev-team.yaml","startedAt":"2026-11-30T09:12:44Z","lastUpdatedAt":"2026-11-30T09:41:02Z","isComplete":false,"turnCount":14}`
	in := `{"protocolVersion":1,"items":[` + strings.Repeat(item+",", 9999) + item + `]}`
	b.SetBytes(int64(len(in)))
	for i := 0; i < b.N; i++ {
		if _, err := ReadEnvelope(strings.NewReader(in), false, func([]byte) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
