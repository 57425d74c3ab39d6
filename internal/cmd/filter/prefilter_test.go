package filter

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/itchyny/gojq"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
)

// The variables the skip-ahead tests bind, as a command line would.
var prefilterVars = []string{
	"--arg", "t", "token",
	"--arg", "q", `a"b`,
	"--arg", "e", "é",
	"--argjson", "n", "5",
	"--argjson", "z", "null",
	"--argjson", "o", `{"k":"tool_call","m":{"k":"token"},"n":1}`,
	"--argjson", "s", `"tool_call"`,
}

func TestPrefilterVariables(t *testing.T) {
	o, err := parseArgs(append(append([]string{}, prefilterVars...), "--arg", "ARGS", "shadow", "."))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]string{
		`select(.type == $t)`:                            {"token"},
		`select($t == .type) | .text`:                    {"token"},
		`select(.type == $s)`:                            {"tool_call"},
		`select(.type == $t or .type == $s)`:             {"token", "tool_call"},
		`select(.type == $q or .type == "x")`:            {`a"b`, "x"},
		`select(.type == $ARGS.named.t)`:                 {"token"},
		`select(.type == $ARGS.named["t"])`:              nil, // a computed index is not looked into
		`select(.type == $o.k)`:                          {"tool_call"},
		`select(.type == $o.m.k and .ok)`:                {"token"},
		`select(.type | IN("a", $t))`:                    {"a", "token"},
		`select(IN(.type; $t, "b"))`:                     {"token", "b"},
		`select((.type | IN($t)) or .type == "c")`:       {"token", "c"},
		`select(.type == $n)`:                            nil, // not a string
		`select(.type == $z)`:                            nil, // null: true on objects without a type
		`select(.type == $o)`:                            nil,
		`select(.type == $o.n)`:                          nil,
		`select(.type == $o.nope)`:                       nil, // null
		`select(.type == $t.x)`:                          nil, // indexing a string fails
		`select(.type == $o[])`:                          nil,
		`select(.type == $o.k?)`:                         nil,
		`select(.type == $undefined)`:                    nil,
		`select(.type == $ENV.HOME)`:                     nil,
		`select(.type == $__loc__.file)`:                 nil,
		`"x" as $t | select(.type == $t)`:                nil,
		`select(.type | IN(.x))`:                         nil,
		`select(.type | IN($t, .x))`:                     nil,
		`select(.type | IN($t) | not)`:                   nil,
		`select(IN(.x; $t))`:                             nil,
		`select(.type | IN($t; $t))`:                     nil,
		`def IN(s): true; select(.type | IN($t))`:        nil,
		`select(.type | ascii_downcase | IN("token"))`:   nil,
		`select(.type != $t)`:                            nil,
		`select(.type == $t, .type == "b")`:              nil,
		`select(.type == ("a", "b"))`:                    nil,
		`select(.type == $t[0:1])`:                       nil,
		`select(.type == "a"[0:1])`:                      nil,
		`select(.type == $ARGS.positional[0])`:           nil,
		`select(.type == $ARGS.named.t | not)`:           nil,
		`select(.type == $ARGS.named.t // "x")`:          nil,
		`select(.type == $ARGS.named.t + "")`:            nil,
		`select(.type == $ARGS.named.nope)`:              nil,
		`select(.type == $ARGS)`:                         nil,
		`select(.type == "\($t)")`:                       nil,
		`select(.type == $t) | select(.type == "other")`: {"token"},
	}
	for q, want := range cases {
		pq, err := gojq.Parse(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if got := typePrefilter(pq, o.lookupVar); !reflect.DeepEqual(got, want) {
			t.Errorf("typePrefilter(%s) = %q, want %q", q, got, want)
		}
	}
}

// A parameterised select is dropped unread as the literal one is: a line of another type that
// is not even JSON is not counted as noise.
func TestParameterisedSelectSkipsAhead(t *testing.T) {
	in := []byte("{\"type\":\"token\",\"text\":\"a\"}\n{\"type\":\"status\",\"bad\":\x01}\n")
	for _, args := range [][]string{
		{`select(.type == "token") | .text`},
		{"--arg", "t", "token", `select(.type == $t) | .text`},
		{"--argjson", "t", `"token"`, `select(.type == $t) | .text`},
		{"--arg", "t", "token", `select(.type == $ARGS.named.t) | .text`},
		{"--arg", "t", "token", `select(.type | IN($t, "x")) | .text`},
	} {
		out, errs, code := runFilter(args, in)
		if out != "\"a\"\n" || errs != "" || code != 0 {
			t.Errorf("fr-filter %q: out %q, stderr %q, exit %d; want \"a\" alone, no warning", args, out, errs, code)
		}
	}
}

// runConfigured runs fr-filter with cfg, as the command line does.
func runConfigured(cfg config, args []string, input []byte) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	s := cmdutil.Streams{In: bytes.NewReader(input), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
	code = cmdutil.RunApp(context.Background(), app(s, cfg), s, append([]string{prog}, args...))
	return out.String(), errb.String(), code
}

// Lines dropped by the skip-ahead are not read in full, so one that is not JSON is not
// counted as noise: the one documented difference it makes.
var noiseWarning = regexp.MustCompile(`(?m)^fr-filter: warning: skipped \d+ lines? that (is|are) not JSON.*\n`)

// checkSkipAhead runs a filter with and without the skip-ahead and fails when the output,
// the errors or the exit status differ.
func checkSkipAhead(t *testing.T, args []string, input []byte) {
	t.Helper()
	wantOut, wantErr, wantCode := runConfigured(config{noSkip: true}, args, input)
	gotOut, gotErr, gotCode := runConfigured(config{}, args, input)
	wantErr, gotErr = noiseWarning.ReplaceAllString(wantErr, ""), noiseWarning.ReplaceAllString(gotErr, "")
	if gotOut != wantOut || gotErr != wantErr || gotCode != wantCode {
		t.Fatalf("fr-filter %q on %q:\nwith skip-ahead:    exit %d, out %q, err %q\nwithout skip-ahead: exit %d, out %q, err %q",
			args, input, gotCode, gotOut, gotErr, wantCode, wantOut, wantErr)
	}
}

// Generated filters and streams for the skip-ahead property.
var (
	genStrings = []string{`"token"`, `"a\"b"`, `"é"`, `"tool_call"`, `"tok\u0065n"`, `""`, `$t`, `$q`, `$e`, `$s`, `$n`, `$z`, `$o.k`, `$o.m.k`, `$o.n`, `$ARGS.named.t`, `$ARGS.named.s`}
	genOther   = []string{`.ok`, `.ok == false`, `.type == .x`, `.type != $t`, `(.x | length) > 0`, `error("boom")`, `.type? == "token"`, `(.type | test("o"))`}
	genRest    = []string{``, ` | .text`, ` | {id, type}`, ` | .x.y`, ` | error("rest")`, ` | ., .`, ` | select(.ok)`, ` | input`}
	genTypes   = []string{`"token"`, `"tool_call"`, `"a\"b"`, `"é"`, `"\u00e9"`, `"tok\u0065n"`, `"status"`, `""`, `5`, `null`, `{"k":1}`, `["token"]`}
	genValues  = []string{`1`, `false`, `true`, `null`, `"x"`, `[1,2]`, `{"y":"z"}`, `"tok\u0065n"`, `-0.5e3`}
)

func genAtom(r *rand.Rand) string {
	s := genStrings[r.Intn(len(genStrings))]
	switch r.Intn(7) {
	case 0:
		return s + ` == .type`
	case 1:
		return `.type | IN(` + s + `, ` + genStrings[r.Intn(len(genStrings))] + `)`
	case 2:
		return `IN(.type; ` + s + `)`
	case 3:
		return `."type" == ` + s
	case 4:
		return genOther[r.Intn(len(genOther))]
	}
	return `.type == ` + s
}

func genCond(r *rand.Rand, depth int) string {
	if depth > 2 || r.Intn(3) == 0 {
		a := genAtom(r)
		if strings.Contains(a, "|") {
			a = "(" + a + ")"
		}
		return a
	}
	op := " or "
	if r.Intn(3) == 0 {
		op = " and "
	}
	c := genCond(r, depth+1) + op + genCond(r, depth+1)
	if r.Intn(2) == 0 {
		c = "(" + c + ")"
	}
	return c
}

func genFilter(r *rand.Rand) string {
	return "select(" + genCond(r, 0) + ")" + genRest[r.Intn(len(genRest))]
}

func genLine(r *rand.Rand) string {
	switch r.Intn(16) {
	case 0:
		return "not json at all"
	case 14, 15:
		// bytes that are not UTF-8 (a prompt among them is passed on when the filter keeps it)
		return "{\"type\":" + []string{`"token"`, `"approval_request"`, `"question"`, "\"tok\xe9n\""}[r.Intn(4)] +
			",\"text\":\"" + []string{"\xff", "a\xc3", "\xed\xa0\x80"}[r.Intn(3)] + "\"}"
	case 1:
		return `{"type":"token","text":` // a value that goes on over the next lines, or noise
	case 2:
		return genValues[r.Intn(len(genValues))]
	case 3:
		return ""
	case 4:
		return `{"type":"ready","protocolVersion":` + []string{"1", "99"}[r.Intn(2)] + `}`
	case 5:
		return `{"type":` + genTypes[r.Intn(len(genTypes))] + `,"bad":` + "\x01}"
	case 6:
		return `{"a":1}`
	}
	var b strings.Builder
	b.WriteString("{")
	n := 1 + r.Intn(4)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		switch r.Intn(6) {
		case 0, 1, 2:
			fmt.Fprintf(&b, `"type":%s`, genTypes[r.Intn(len(genTypes))])
		case 3:
			fmt.Fprintf(&b, `"ok":%s`, []string{"true", "false", "null"}[r.Intn(3)])
		case 4:
			fmt.Fprintf(&b, `"text":%s`, genValues[r.Intn(len(genValues))])
		case 5:
			fmt.Fprintf(&b, `"x":%s`, genValues[r.Intn(len(genValues))])
		}
	}
	b.WriteString("}")
	return b.String()
}

func genStream(r *rand.Rand) []byte {
	var lines []string
	for n := 1 + r.Intn(12); n > 0; n-- {
		lines = append(lines, genLine(r))
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}

// The skip-ahead never changes what a filter outputs: generated filters of the shapes it
// recognises (and of others), with variables of every kind, over generated streams of typed
// events, duplicate and escaped type keys, non-string types, handshakes, noise and values
// over several lines, give the same output, errors and exit status with it as without it.
func TestSkipAheadChangesNothing(t *testing.T) {
	testkit.WithoutRace(t)
	n := 200 // 400 in make chaos (with seed 17, the first 200 give 52 filters the skip-ahead)
	if testkit.Long() {
		n = 400
	}
	r := rand.New(rand.NewSource(17))
	recognised := 0
	for i := 0; i < n; i++ {
		f := genFilter(r)
		args := append(append([]string{}, prefilterVars...), f)
		if r.Intn(4) == 0 {
			args = append(args, "--type", []string{"token", "token,tool_call", "status"}[r.Intn(3)])
		}
		if r.Intn(5) == 0 {
			args = append(args, "-e")
		}
		if pq, err := gojq.Parse(f); err == nil {
			if o, err := parseArgs(args); err == nil && typePrefilter(pq, o.lookupVar) != nil {
				recognised++
			}
		}
		checkSkipAhead(t, args, genStream(r))
	}
	if recognised < n/4 {
		t.Fatalf("only %d of %d generated filters get the skip-ahead: the test checks too little", recognised, n)
	}
}

func FuzzSkipAhead(f *testing.F) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 20; i++ {
		f.Add(int64(i), genStream(r))
	}
	f.Fuzz(func(t *testing.T, seed int64, input []byte) {
		r := rand.New(rand.NewSource(seed))
		checkSkipAhead(t, append(append([]string{}, prefilterVars...), genFilter(r)), input)
	})
}
