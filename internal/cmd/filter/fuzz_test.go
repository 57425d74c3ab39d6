package filter

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/itchyny/gojq"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/jsonscan"
	"github.com/fuseraft/fr/pkg/wire"
)

var fuzzFilters = []string{
	`.`,
	`select(.type == "token")`,
	`select(.type == "a" or .type == "token") | .text`,
	`select(.type == "token" and .ok == false) | {id, name}`,
	`.type`,
	`select(.ok)`,
	`{t: .type}`,
	`.[]?`,
	`if type == "object" then . else empty end`,
}

var fuzzTypes = []string{"", "token", "token,a", "approval_request"}

// reference runs the filter the way gojq's own command line would, line by line: lines that
// json.Valid rejects are skipped, --type is decided on a full decode, values come from
// encoding/json with UseNumber. It returns each output as compact JSON and the error count.
func reference(t *testing.T, query, types string, input []byte) ([]string, int) {
	q, err := gojq.Parse(query)
	if err != nil {
		t.Fatal(err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		t.Fatal(err)
	}
	keep := map[string]bool{}
	for _, ty := range strings.Split(types, ",") {
		if ty != "" {
			keep[ty] = true
		}
	}
	var outs []string
	errs := 0
	for _, line := range bytes.Split(input, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if !json.Valid(line) {
			continue
		}
		l := wire.ParseLine(line)
		if len(keep) > 0 && (l.Kind != wire.EventLine || !keep[l.Type]) {
			continue
		}
		// A line that is not UTF-8 is not JSON, but a prompt: that is passed on unchanged
		// when the filter passes it on, and nothing else made of it is.
		notText := l.NotText()
		if l.Kind == wire.Noise {
			continue
		}
		d := json.NewDecoder(bytes.NewReader(line))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		iter := code.Run(v)
		for {
			out, ok := iter.Next()
			if !ok {
				break
			}
			if _, ok := out.(error); ok {
				errs++
				break
			}
			b, _ := gojq.Marshal(out)
			if notText {
				if in := normal(t, line); normal(t, b) == in {
					outs = append(outs, in)
				}
				continue
			}
			outs = append(outs, normal(t, b))
		}
	}
	return outs, errs
}

// normal re-encodes a JSON text through encoding/json and gojq, so that two texts of the same
// value compare equal.
func normal(t *testing.T, b []byte) string {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("output %q is not JSON: %v", b, err)
	}
	out, _ := gojq.Marshal(v)
	return string(out)
}

func runFilter(args []string, input []byte) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	s := cmdutil.Streams{In: bytes.NewReader(input), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
	code = Run(context.Background(), s, append([]string{"fr-filter"}, args...))
	return out.String(), errb.String(), code
}

func checkAgainstReference(t *testing.T, fi, ti uint8, input []byte) {
	query := fuzzFilters[int(fi)%len(fuzzFilters)]
	types := fuzzTypes[int(ti)%len(fuzzTypes)]
	args := []string{query}
	if types != "" {
		args = append(args, "--type", types)
	}
	input = oneValueALine(input)
	want, wantErrs := reference(t, query, types, input)
	stdout, stderr, _ := runFilter(args, input)
	var got []string
	for _, l := range strings.Split(stdout, "\n") {
		if !utf8.ValidString(l) && !wire.ParseLine([]byte(l)).NotText() {
			t.Fatalf("fr-filter %q on %q: %q is not UTF-8 and not a prompt passed on", args, input, l)
		}
		if l != "" {
			got = append(got, normal(t, []byte(l)))
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fr-filter %q on %q:\n got %q\nwant %q", args, input, got, want)
	}
	if n := strings.Count(stderr, "fr-filter: error:"); n != wantErrs {
		t.Fatalf("fr-filter %q on %q: %d errors, want %d\n%s", args, input, n, wantErrs, stderr)
	}
	// Lines passed on unchanged keep their bytes.
	if query == "." || query == `select(.type == "token")` {
		in := map[string]bool{}
		for _, l := range bytes.Split(input, []byte("\n")) {
			in[string(trimSpace(bytes.TrimSuffix(l, []byte("\r"))))] = true
		}
		for _, l := range strings.Split(stdout, "\n") {
			if l != "" && (l[0] == '{' || l[0] == '[') && !in[l] {
				t.Fatalf("fr-filter %q on %q: %q is not an input line", args, input, l)
			}
		}
	}
}

func FuzzFilter(f *testing.F) {
	var short []string
	for _, s := range tricky {
		if len(s) < 1000 {
			short = append(short, s)
		}
	}
	seed := strings.Join(short, "\n")
	for fi := range fuzzFilters {
		for ti := range fuzzTypes {
			f.Add(uint8(fi), uint8(ti), []byte(seed))
		}
	}
	f.Add(uint8(1), uint8(0), []byte("{\"type\":\"token\",\"ok\":false,\"id\":1}\r\nplain text\n[1]\n\"s\"\n{\"type\":\"token\",\"type\":\"x\"}"))
	f.Add(uint8(0), uint8(3), []byte("{\"type\":\"approval_request\",\"command\":\"ls \xff\"}\n{\"type\":\"token\",\"text\":\"\xc3\"}\n[\"\xfe\"]"))
	f.Fuzz(func(t *testing.T, fi, ti uint8, input []byte) {
		checkAgainstReference(t, fi, ti, input)
		if bad := notUTF8(input); !bytes.Equal(bad, input) {
			checkAgainstReference(t, fi, ti, bad)
		}
	})
}

// notUTF8 puts a byte that is not UTF-8 into each line of input that holds a string: after the
// quote that opens its last one, or as the first byte of a line without one.
func notUTF8(input []byte) []byte {
	lines := bytes.Split(input, []byte("\n"))
	for i, l := range lines {
		q := bytes.LastIndexByte(l, '"')
		if q > 0 {
			q = bytes.LastIndexByte(l[:q], '"')
		}
		var b []byte
		b = append(b, l[:q+1]...)
		b = append(b, 0xff)
		lines[i] = append(b, l[q+1:]...)
	}
	return bytes.Join(lines, []byte("\n"))
}

// oneValueALine replaces each line of input that is not one JSON value but holds several, or
// starts one that may go on over the next lines, by a line that is not JSON: fr-filter reads
// those as jq does, which the reference does not model.
func oneValueALine(input []byte) []byte {
	lines := bytes.Split(input, []byte("\n"))
	for n, line := range lines {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if json.Valid(line) {
			continue
		}
		i := jsonscan.SkipSpace(line, 0)
		if i >= len(line) {
			continue
		}
		if end, ok := jsonscan.ValueEnd(line, i); ok || end >= len(line) {
			lines[n] = []byte("not JSON")
		}
	}
	return bytes.Join(lines, []byte("\n"))
}
